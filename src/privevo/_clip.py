"""Overflow-safe clipping of rows to a public L2 ball.

``np.linalg.norm`` squares the coordinates, so a finite row near 1e300 has an
infinite norm and a naive clip (``x · min(1, R/‖x‖)``) turns it into 0 or NaN:
a wrong result labelled valid. Here every row is first divided by its largest
absolute coordinate (and the centre's), so nothing is squared above 4·d, and
a row outside the ball lands exactly on its surface in the right direction.
"""

from __future__ import annotations

import numpy as np

__all__ = ["clip_to_ball", "row_norms"]


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
