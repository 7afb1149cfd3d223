"""The exact flat vote kernel: prepared candidates, float32 scores, float64 fix-up.

Kernel (``backend="numpy"``): argmin_c ‖x − c‖² = argmin_c (‖c‖² − 2 x·c) is
one float32 GEMM of rows augmented with a 1 against candidates augmented with
‖c‖², into a reused chunk buffer, followed by an argmin; the n×m distance
matrix never exists. Rows whose best and second-best float32 scores lie within
a rigorous rounding bound are recomputed in float64, so counts are identical
to a float64 brute force (ties go to the lowest candidate index).

This module sees one in-memory block of rows at a time and imports no data
backend; :mod:`privevo.private.kernel` registers it with the other kernels.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
from threadpoolctl import threadpool_limits

from .._validation import check_points, check_same_dimension, not_two_d
from ..distances import first_of_each_row

SMALL_WORK = 2_000_000  # n·m·d below this: one thread, no chunking (measured crossover)

METRICS = ("euclidean", "cosine")


_U32 = 2.0**-24  # unit roundoff of float32


_NONFINITE = "private data contains NaN or infinite values; drop or impute them first"


_CHUNK_BYTES = (
    2**24
)  # one worker's score buffer: 16 MiB measured best here (benchmarks/histogram.py)


@dataclass(frozen=True)
class PreparedCandidates:
    """Public candidates preprocessed once per round and shared by all blocks.

    Duplicated rows are merged (``unique`` keeps first appearances in order;
    ``first_index`` maps them back), so exact ties cannot hide in float32.
    """

    unique: np.ndarray  # (u, d) float64, first appearances in original order
    first_index: np.ndarray  # (u,) original index of each unique row
    n_candidates: int  # m, the original number of candidates
    metric: str
    scores_t: np.ndarray  # (d + 1, u) float32: [−2(c − shift) ; ‖c − shift‖²]ᵀ
    max_norm: float  # max ‖c − shift‖, for the rounding bound
    shift: np.ndarray  # (d,) the candidates' mean: a public origin for float32 work

    @property
    def dim(self) -> int:
        return self.unique.shape[1]


def prepare_candidates(candidates, metric: str = "euclidean") -> PreparedCandidates:
    """Validate, deduplicate and pack candidates for :func:`partial_counts`."""
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {METRICS}, got {metric!r}")
    cands = check_points(candidates, "candidates")
    if metric == "cosine":
        cands = _unit_rows(cands, "candidates")
    first = first_of_each_row(cands)
    unique = np.ascontiguousarray(cands[first])
    shift = unique.mean(axis=0)
    centred = unique - shift
    sq = np.einsum("ij,ij->i", centred, centred)
    scores_t = np.empty((unique.shape[1] + 1, unique.shape[0]), dtype=np.float32)
    scores_t[:-1] = -2.0 * centred.T
    scores_t[-1] = sq
    return PreparedCandidates(
        unique=unique,
        first_index=first,
        n_candidates=cands.shape[0],
        metric=metric,
        scores_t=scores_t,
        max_norm=float(np.sqrt(sq.max())),
        shift=shift,
    )


def expand_counts(prepared: PreparedCandidates, unique_counts: np.ndarray) -> np.ndarray:
    """Counts over the original m candidates; a duplicate's votes go to its first copy."""
    counts = np.zeros(prepared.n_candidates, dtype=np.int64)
    counts[prepared.first_index] = unique_counts
    return counts


def _numpy_kernel(block, prepared: PreparedCandidates, chunk_size, n_threads) -> np.ndarray:
    n, u = len(block), len(prepared.unique)
    if chunk_size is None and n * u * (prepared.dim + 1) < SMALL_WORK:
        # small call: one chunk on this thread, no pool and no threadpoolctl context
        return np.bincount(_assign_rows(_chunk(block, 0, n, prepared), prepared), minlength=u)
    rows = chunk_size or int(np.clip(_CHUNK_BYTES // (4 * max(u, 1)), 64, 8192))
    starts = range(0, n, rows)
    workers = max(1, min(n_threads or os.cpu_count() or 1, len(starts)))

    def work(worker: int) -> np.ndarray:
        counts = np.zeros(u, dtype=np.int64)
        buf = np.empty((rows, u), dtype=np.float32)
        aug = np.ones((rows, prepared.dim + 1), dtype=np.float32)
        for start in starts[worker::workers]:
            chunk = _chunk(block, start, min(n, start + rows), prepared)
            counts += np.bincount(_assign_chunk(chunk, prepared, buf, aug), minlength=u)
        return counts

    with threadpool_limits(1, user_api="blas"):  # parallel over chunks, one BLAS thread each
        if workers == 1:
            return work(0)
        with ThreadPoolExecutor(workers) as pool:
            return sum(pool.map(work, range(workers)))


def _assign_chunk(chunk: np.ndarray, prepared: PreparedCandidates, buf, aug) -> np.ndarray:
    """Nearest unique candidate of each row: float32 GEMM + argmin + exact fix-up.

    Rows are shifted by the (public) candidate mean first, which leaves
    distances unchanged and keeps float32 magnitudes, hence rounding, small.
    """
    k = len(chunk)
    x = aug[:k, :-1]
    np.subtract(chunk, prepared.shift, out=x, casting="unsafe")
    scores = buf[:k]
    with np.errstate(invalid="ignore", over="ignore"):  # non-finite rows are reported below
        np.matmul(aug[:k], prepared.scores_t, out=scores)
    best = scores.argmin(axis=1)
    r = np.arange(k)
    first = scores[r, best]
    if not np.isfinite(first).all():
        raise ValueError(_NONFINITE)
    scores[r, best] = np.inf
    second = scores.min(axis=1)
    scores[r, best] = first
    bound = 2 * _rounding_bound(
        prepared.dim, np.sqrt(np.einsum("ij,ij->i", x, x)), prepared.max_norm
    )
    unsure = np.flatnonzero(second - first <= bound)
    if unsure.size:
        near = scores[unsure] <= (first[unsure] + bound[unsure])[:, None]
        best[unsure] = _exact_assign_among(chunk[unsure], prepared.unique, near)
    return best


def _exact_assign_among(rows: np.ndarray, unique: np.ndarray, near: np.ndarray) -> np.ndarray:
    """float64 ‖x − c‖² over each row's possible winners ``near``; ties → lowest index.

    Any candidate whose float32 score is beyond the rounding bound of the best
    cannot be the exact nearest, so only the ``near`` pairs are recomputed.
    """
    row_idx, cand_idx = np.nonzero(near)
    diff = np.asarray(rows, dtype=np.float64)[row_idx] - unique[cand_idx]
    dist = np.einsum("ij,ij->i", diff, diff)
    order = np.lexsort((cand_idx, dist, row_idx))
    starts = np.flatnonzero(np.r_[True, np.diff(row_idx[order]) > 0])
    return cand_idx[order][starts]


def _rounding_bound(d: int, row_norms, max_norm: float, squared_norm_included: bool = False):
    """A bound on |float32 score − exact score| (rounding of inputs and the dot product).

    Dot products of length d+1 in float32 err by at most γ_{d+1}·Σ|a_i b_i|
    (Higham, Thm 3.5) ≤ γ·(2‖x‖‖c‖ + ‖c‖²); converting x, c and ‖c‖² to
    float32 adds a few more units of roundoff. A factor 2 keeps a margin.
    """
    gamma = 2.0 * (d + 8) * _U32
    spread = 2.0 * row_norms * max_norm + max_norm**2
    if squared_norm_included:
        spread = spread + row_norms**2
    return gamma * (spread + 1e-30)


def reference_assign(rows, candidates, block: int = 256) -> np.ndarray:
    """The float64 brute-force reference: ‖x − c‖² by differences, ties → lowest index.

    Slow; used by tests, the audit and benchmarks to check the fast kernels exactly.
    """
    cands = np.asarray(candidates, dtype=np.float64)
    rows = np.asarray(rows, dtype=np.float64)
    out = np.empty(len(rows), dtype=np.int64)
    step = max(1, block * 64 // max(cands.shape[1], 1))
    for s in range(0, len(rows), step):
        diff = rows[s : s + step, None, :] - cands[None, :, :]
        out[s : s + step] = np.einsum("ijk,ijk->ij", diff, diff).argmin(axis=1)
    return out


def _assign_rows(rows: np.ndarray, prepared: PreparedCandidates) -> np.ndarray:
    """Exact nearest unique candidate of each row (the numpy kernel's assignment)."""
    buf = np.empty((len(rows), len(prepared.unique)), dtype=np.float32)
    aug = np.ones((len(rows), prepared.dim + 1), dtype=np.float32)
    return _assign_chunk(rows, prepared, buf, aug)


def _chunk(block, start: int, stop: int, prepared: PreparedCandidates) -> np.ndarray:
    """Rows [start, stop) as read from the block (no copy for float arrays)."""
    chunk = np.asarray(block[start:stop])
    if prepared.metric == "cosine":
        chunk = _unit_rows(chunk.astype(np.float64), "private data")
    return chunk


def _unit_rows(points: np.ndarray, name: str) -> np.ndarray:
    norms = np.linalg.norm(points, axis=1, keepdims=True)
    if (norms == 0).any():
        raise ValueError(f"{name} contain an all-zero row; the cosine metric needs nonzero vectors")
    return points / norms


def as_block(private, d: int):
    """Private rows as a sliceable 2-D array, without copying ndarrays or memmaps."""
    if not isinstance(private, np.ndarray) or private.dtype.kind not in "fiu":
        private = check_points(private, "private data")
    if private.ndim != 2:
        raise ValueError(not_two_d("private data", private.ndim))
    if private.shape[0] == 0:
        raise ValueError("private data is empty; pass at least one row")
    check_same_dimension(d, private.shape[1])
    return private
