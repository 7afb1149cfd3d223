"""Deprecated alias: block sources moved to :mod:`privevo.private` (``privevo.private.files``)."""

from ._deprecated import warn_moved
from .private import (  # noqa: F401  re-exported names
    BlockSource,
    ClippedSource,
    NpySource,
    ParquetSource,
    open_source,
)

warn_moved("privevo.streaming", "privevo.private")
