"""Deprecated alias: the Dask backend moved to :mod:`privevo.private` (``privevo.private.dask``)."""

from ._deprecated import warn_moved
from .private import backend_session, dask_session  # noqa: F401  re-exported names

warn_moved("privevo.distributed", "privevo.private")
