"""The public domain of the private data: an L2 ball or a box, and the leak fallback (once).

The domain is a public input (docs/privacy.md, "What is public"): rows are
clipped into it before any release, so one row's influence is bounded by it.
Without ``radius`` or ``bounds`` the data's own range is used — the
diffprivlib convention — with a :class:`~privevo.PrivacyLeakWarning`, and the
result is marked ``leaked`` (its report says ``guarantee_holds: false``).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from .._validation import check_positive_real
from ..exceptions import PrivacyLeakWarning

__all__ = [
    "Domain",
    "public_domain",
    "check_bounds",
    "center_vector",
    "clip_to_ball",
    "row_norms",
    "LEAK_NOTE",
]

LEAK_NOTE = "radius/bounds taken from the private data: not differentially private"


@dataclass(frozen=True)
class Domain:
    """The ball (``center``, ``radius``) the algorithms work in, and the ``box`` it contains, if
    any."""

    center: np.ndarray
    radius: float
    box: tuple[np.ndarray, np.ndarray] | None
    leaked: bool

    def to_unit_ball(self, X: np.ndarray) -> np.ndarray:
        """Clip to the box (if any) and the ball, then map the ball onto the unit ball: (x −
        c)/R."""
        if self.box is not None:
            X = np.clip(X, self.box[0], self.box[1])
        return (
            clip_to_ball(X, self.radius, self.center) - self.center
        ) / self.radius  # no overflow near 1e300

    def bounding_box(self) -> tuple[np.ndarray, np.ndarray]:
        """The box itself, or the cube around the ball (for per-coordinate mechanisms)."""
        if self.box is not None:
            return self.box
        return self.center - self.radius, self.center + self.radius


def public_domain(
    X: np.ndarray,
    *,
    radius=None,
    center=None,
    bounds=None,
    stacklevel: int = 3,
    hint: str = "radius= or bounds=",
) -> Domain:
    """The domain from public ``radius``/``center`` or ``bounds``; else the data's range, warned.

    ``bounds=(lo, hi)`` (scalars or length-d arrays) gives the box and the ball
    around its centre that contains it (radius ‖(hi − lo)/2‖). The fallback
    (the only place privevo reads a domain off the data) warns with
    :class:`~privevo.PrivacyLeakWarning` naming ``hint``, the parameters to pass.
    """
    d = X.shape[1]
    if radius is not None and bounds is not None:
        raise ValueError("give either radius or bounds, not both")
    if radius is not None:
        return Domain(center_vector(center, d), check_positive_real(radius, "radius"), None, False)
    if bounds is not None:
        if center is not None:
            raise ValueError("center applies to radius only; bounds have their own centre")
        lo, hi = check_bounds(bounds, d)
        return Domain((lo + hi) / 2, float(np.linalg.norm((hi - lo) / 2)), (lo, hi), False)
    lo, hi = X.min(axis=0), X.max(axis=0)
    hi = np.where(hi > lo, hi, lo + 1.0)
    mid = (lo + hi) / 2
    with np.errstate(over="ignore"):
        radius = float(np.sqrt(np.max(np.sum((X - mid) ** 2, axis=1))))
    if not (np.isfinite(mid).all() and np.isfinite(radius)):
        raise ValueError(f"the data's extent is beyond the float range; pass a public {hint}")
    warnings.warn(
        f"neither radius nor bounds given: the data's range is used, so the result is NOT "
        f"differentially private; pass a public {hint}",
        PrivacyLeakWarning,
        stacklevel=stacklevel,
    )
    return Domain(mid, radius if radius > 0 else 1.0, (lo, hi), True)


def center_vector(center, d: int) -> np.ndarray:
    """The ball's centre as a length-d vector (a scalar is broadcast; None is the origin)."""
    if center is None:
        return np.zeros(d)
    c = np.asarray(center, dtype=np.float64)
    if c.ndim > 1 or (c.ndim == 1 and c.shape[0] != d) or not np.isfinite(c).all():
        raise ValueError(
            f"center must be a finite scalar or an array of length {d}, got shape {c.shape}"
        )
    return np.broadcast_to(c, (d,)).copy()


def check_bounds(bounds, d: int) -> tuple[np.ndarray, np.ndarray]:
    """Parse (lo, hi) into two finite arrays of length d with lo < hi."""
    try:
        lo, hi = bounds
        lo = np.broadcast_to(np.asarray(lo, dtype=np.float64), (d,)).copy()
        hi = np.broadcast_to(np.asarray(hi, dtype=np.float64), (d,)).copy()
    except (TypeError, ValueError):
        raise ValueError(
            f"bounds must be a pair (lo, hi) of scalars or arrays of length {d}"
        ) from None
    if not (np.isfinite(lo).all() and np.isfinite(hi).all()):
        raise ValueError("bounds must be finite")
    if not (lo < hi).all():
        raise ValueError(
            f"bounds must have lo < hi for every feature; feature {int(np.argmin(hi - lo))} does "
            "not"
        )
    return lo, hi


# -- clipping to a public L2 ball ----------------------------------------
# Overflow-safe clipping of rows to a public L2 ball.
#
# ``np.linalg.norm`` squares the coordinates, so a finite row near 1e300 has an
# infinite norm and a naive clip (``x · min(1, R/‖x‖)``) turns it into 0 or NaN:
# a wrong result labelled valid. Here every row is first divided by its largest
# absolute coordinate (and the centre's), so nothing is squared above 4·d, and
# a row outside the ball lands exactly on its surface in the right direction.


def _scaled_offsets(X: np.ndarray, center) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(X as float64, per-row scale s, (X − c)/s), computed without overflow."""
    X = np.asarray(X, dtype=np.float64)
    c = np.broadcast_to(np.asarray(center, dtype=np.float64), X.shape[1:])
    top = np.abs(c).max(initial=0.0)
    scale = np.maximum(np.abs(X).max(axis=1, initial=0.0), top)
    scale = np.where(scale > 0, scale, 1.0)[:, None]
    return X, scale, X / scale - c / scale


def row_norms(X, center=0.0) -> np.ndarray:
    """‖x − c‖ per row; ``inf`` only where the true norm exceeds the float64 range."""
    _, scale, unit = _scaled_offsets(X, center)
    with np.errstate(over="ignore"):
        return (scale * np.linalg.norm(unit, axis=1, keepdims=True))[:, 0]


def clip_to_ball(X, radius: float, center=0.0) -> np.ndarray:
    """Each row of ``X`` moved radially onto the ball ‖x − c‖ ≤ radius if it lies outside.

    Rows inside are returned unchanged (bit for bit); the result is finite for any
    finite input, however large. Returns a new float64 array.
    """
    X, scale, unit = _scaled_offsets(X, center)
    norms = np.linalg.norm(unit, axis=1, keepdims=True)
    with np.errstate(over="ignore"):  # radius / a subnormal scale is inf: inside
        outside = norms[:, 0] > radius / scale[:, 0]
    out = X.copy()
    if outside.any():
        c = np.broadcast_to(np.asarray(center, dtype=np.float64), X.shape[1:])
        out[outside] = c + radius * (unit[outside] / norms[outside])
    return out
