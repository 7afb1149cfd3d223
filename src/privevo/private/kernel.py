"""The vote-kernel registry: exact nearest-candidate counts of one block of rows.

``partial_counts(block, prepared, backend)`` is the *map* step of every
histogram: one in-memory block of private rows → counts over the prepared
(deduplicated) candidates. Kernels: ``"numpy"`` (:mod:`.flat`, float32 GEMM +
float64 fix-up), ``"lowd"`` (:mod:`.lowd`, the fused compiled kernel for
d ≤ 32), ``"faiss"`` (``IndexFlatL2`` top-2 + the same fix-up) and ``"auto"``
(by shape). Every kernel returns the counts of the float64 brute force (ties →
lowest index). No data backend is imported here: sources (:mod:`.sources`)
bring the blocks.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from . import lowd
from .flat import (
    _NONFINITE,
    METRICS,
    PreparedCandidates,
    _assign_rows,
    _chunk,
    _numpy_kernel,
    _rounding_bound,
    expand_counts,
    prepare_candidates,
    reference_assign,
)

__all__ = [
    "METRICS",
    "PreparedCandidates",
    "available_backends",
    "expand_counts",
    "partial_counts",
    "prepare_candidates",
    "reference_assign",
    "register_backend",
]


def partial_counts(
    block,
    prepared: PreparedCandidates,
    backend: str = "auto",
    chunk_size: int | None = None,
    n_threads: int | None = None,
) -> np.ndarray:
    """Counts over ``prepared.unique`` for one block of private rows (the map step).

    Blocks of one data set may be counted anywhere and summed (the reduce step);
    :func:`expand_counts` then maps the sum back to the original candidates.
    """
    kernel = _backend(backend)
    if len(block) == 0:
        return np.zeros(len(prepared.unique), dtype=np.int64)
    return kernel(block, prepared, chunk_size, n_threads)


def _faiss_kernel(block, prepared: PreparedCandidates, chunk_size, n_threads) -> np.ndarray:
    """faiss ``IndexFlatL2`` top-2 search; rows within the rounding bound are redone exactly."""
    faiss = _import_faiss()
    index = faiss.IndexFlatL2(prepared.dim)
    index.add(np.ascontiguousarray(prepared.unique - prepared.shift, dtype=np.float32))
    u, n = len(prepared.unique), len(block)
    rows = chunk_size or 65536
    counts = np.zeros(u, dtype=np.int64)
    k = min(2, u)
    for start in range(0, n, rows):
        chunk = _chunk(block, start, min(n, start + rows), prepared)
        if not np.isfinite(chunk).all():
            raise ValueError(_NONFINITE)
        x = np.ascontiguousarray(chunk - prepared.shift, dtype=np.float32)
        dist, idx = index.search(x, k)
        best = idx[:, 0].astype(np.int64)
        if k == 2:
            bound = 2 * _rounding_bound(
                prepared.dim, np.linalg.norm(x, axis=1), prepared.max_norm, True
            )
            unsure = np.flatnonzero(dist[:, 1] - dist[:, 0] <= bound)
            if unsure.size:
                best[unsure] = _assign_rows(chunk[unsure], prepared)
        counts += np.bincount(best, minlength=u)
    return counts


def _import_faiss():
    try:
        import faiss
    except ImportError:
        raise ImportError(
            "backend='faiss' needs faiss: pip install 'privevo[faiss]' (or use backend='numpy')"
        ) from None
    return faiss


def register_backend(name: str, kernel: Callable) -> None:
    """Register a counting kernel ``kernel(block, prepared, chunk_size, n_threads)``."""
    _BACKENDS[name] = kernel


def available_backends() -> list[str]:
    names = ["numpy"]
    try:
        _import_faiss()
        names.append("faiss")
    except ImportError:
        pass
    return names + [b for b in _BACKENDS if b not in ("numpy", "faiss")]


def _backend(name: str) -> Callable:
    if name == "auto":
        return auto_kernel  # by shape: the fused kernel for low d, else numpy's
    try:
        return _BACKENDS[name]
    except KeyError:
        raise ValueError(
            f"backend must be 'auto' or one of {sorted(_BACKENDS)}, got {name!r}"
        ) from None


def auto_kernel(block, prepared: PreparedCandidates, chunk_size=None, n_threads=None) -> np.ndarray:
    """``backend="auto"``: the fused kernel for d ≤ ``lowd.AUTO_MAX_DIM`` when built, else
    numpy's."""
    if lowd.uses_lowd(prepared.dim):
        return lowd.lowd_kernel(block, prepared, chunk_size, n_threads)
    return _numpy_kernel(block, prepared, chunk_size, n_threads)


_BACKENDS: dict[str, Callable] = {"numpy": _numpy_kernel, "faiss": _faiss_kernel}
if lowd.available():
    _BACKENDS["lowd"] = lowd.lowd_kernel
