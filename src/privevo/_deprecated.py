"""Old module names kept as aliases of :mod:`privevo.private` (deprecated in 0.2, removed in
0.3)."""

from __future__ import annotations

import warnings


def warn_moved(old: str, new: str) -> None:
    """One DeprecationWarning, at the importer's line, naming the new home."""
    warnings.warn(
        f"{old} is deprecated: import from {new} instead (the alias goes in privevo 0.3)",
        DeprecationWarning,
        stacklevel=3,
    )
