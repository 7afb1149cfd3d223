"""The public domain of the private data: an L2 ball or a box, and the leak fallback (once).

The domain is a public input (DESIGN §1): rows are clipped into it before
any release, so one row's influence is bounded by it. Without ``radius`` or
``bounds`` the data's own range is used — the diffprivlib convention — with a
:class:`~privevo.PrivacyLeakWarning`, and the result is marked
``leaked`` (its report says ``guarantee_holds: false``).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from ._validation import check_positive_real
from .exceptions import PrivacyLeakWarning
from ._clip import clip_to_ball

__all__ = ["Domain", "public_domain", "check_bounds", "center_vector", "LEAK_NOTE"]

LEAK_NOTE = "radius/bounds taken from the private data: not differentially private"


@dataclass(frozen=True)
class Domain:
    """The ball (``center``, ``radius``) the algorithms work in, and the ``box`` it contains, if any."""

    center: np.ndarray
    radius: float
    box: tuple[np.ndarray, np.ndarray] | None
    leaked: bool

    def to_unit_ball(self, X: np.ndarray) -> np.ndarray:
        """Clip to the box (if any) and the ball, then map the ball onto the unit ball: (x − c)/R."""
        if self.box is not None:
            X = np.clip(X, self.box[0], self.box[1])
        return (clip_to_ball(X, self.radius, self.center) - self.center) / self.radius  # no overflow near 1e300

    def bounding_box(self) -> tuple[np.ndarray, np.ndarray]:
        """The box itself, or the cube around the ball (for per-coordinate mechanisms)."""
        if self.box is not None:
            return self.box
        return self.center - self.radius, self.center + self.radius


def public_domain(X: np.ndarray, *, radius=None, center=None, bounds=None, stacklevel: int = 3) -> Domain:
    """The domain from public ``radius``/``center`` or ``bounds``; else the data's range, warned.

    ``bounds=(lo, hi)`` (scalars or length-d arrays) gives the box and the ball
    around its centre that contains it (radius ‖(hi − lo)/2‖).
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
    warnings.warn("neither radius nor bounds given: the data's range is used, so the result is NOT "
                  "differentially private; pass radius= or bounds= from public knowledge",
                  PrivacyLeakWarning, stacklevel=stacklevel)
    lo, hi = X.min(axis=0), X.max(axis=0)
    hi = np.where(hi > lo, hi, lo + 1.0)
    mid = (lo + hi) / 2
    radius = float(np.sqrt(np.max(np.sum((X - mid) ** 2, axis=1))))
    return Domain(mid, radius if radius > 0 else 1.0, (lo, hi), True)


def center_vector(center, d: int) -> np.ndarray:
    """The ball's centre as a length-d vector (a scalar is broadcast; None is the origin)."""
    if center is None:
        return np.zeros(d)
    c = np.asarray(center, dtype=np.float64)
    if c.ndim > 1 or (c.ndim == 1 and c.shape[0] != d) or not np.isfinite(c).all():
        raise ValueError(f"center must be a finite scalar or an array of length {d}, got shape {c.shape}")
    return np.broadcast_to(c, (d,)).copy()


def check_bounds(bounds, d: int) -> tuple[np.ndarray, np.ndarray]:
    """Parse (lo, hi) into two finite arrays of length d with lo < hi."""
    try:
        lo, hi = bounds
        lo = np.broadcast_to(np.asarray(lo, dtype=np.float64), (d,)).copy()
        hi = np.broadcast_to(np.asarray(hi, dtype=np.float64), (d,)).copy()
    except (TypeError, ValueError):
        raise ValueError(f"bounds must be a pair (lo, hi) of scalars or arrays of length {d}") from None
    if not (np.isfinite(lo).all() and np.isfinite(hi).all()):
        raise ValueError("bounds must be finite")
    if not (lo < hi).all():
        raise ValueError(f"bounds must have lo < hi for every feature; feature {int(np.argmin(hi - lo))} does not")
    return lo, hi
