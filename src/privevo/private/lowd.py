"""Fused low-dimensional vote kernel (``backend="lowd"``), and the ``"auto"`` choice of kernel.

For d ≤ 32 a GEMM with K = d + 1 cannot use the FMA units and the argmin
passes over the n × m score matrix dominate. The compiled extension
``privevo._lowd`` (``src/privevo/_ext/lowd.c``) instead keeps W private rows in
the lanes of a vector register (W = 16 with AVX-512, 8 with AVX2) and streams
the candidates through them: score_j = ‖c_j‖² − 2x·c_j (float32 FMAs, rows and
candidates shifted by the public candidate mean), the running minimum, the
block of 8 candidates it came from and the second minimum per row. No score
buffer exists.

For d ≤ ``TREE_MAX_DIM`` and enough candidates (``TREE_MIN_CANDIDATES``) the
candidates go into a k-d tree (median splits, ``TREE_LEAF`` a leaf) and the
rows, taken in Morton order, search it W at a time, nearest leaf first: a
subtree is skipped when the distance between the group's box of rows and its
box exceeds, for every row, the current second-best float32 score plus ‖x‖²
and the rounding bound, so every skipped candidate's float32 score is above
m2 and the outputs (best, second best, unsure flag) are those of the flat
scan; the fix-up's search for possible winners skips subtrees the same way.

Exactness is the numpy kernel's: a row whose best and second-best float32
scores differ by at most the rounding bound 2·γ·(2‖x‖·max‖c‖ + max‖c‖²),
γ = (d + 4)·2⁻²⁴ (this kernel's arithmetic, see :func:`_assign_chunk`; the
numpy kernel's γ = 2(d + 8)·2⁻²⁴ also covers its GEMM), is decided again in
float64 (‖x − c‖² by differences among the candidates whose float32 score is
within the numpy kernel's bound of its best, ties →
lowest index, as :func:`privevo.private.flat._exact_assign_among`); rows whose
scores could overflow, or that are not finite, go through the numpy kernel's
own path. Counts equal the float64 brute force and every other backend.

Small calls (n·m·d below ``flat.SMALL_WORK``) run on the calling thread with no
chunking, thread pool or threadpoolctl context; larger ones split rows over
threads (the extension releases the GIL).
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from . import flat
from .flat import _U32, _assign_rows, _chunk

try:
    from .. import _lowd
except ImportError:  # built by setup.py when a C compiler is present; optional
    _lowd = None

__all__ = ["available", "isa", "assign", "lowd_kernel", "MAX_DIM", "AUTO_MAX_DIM"]

MAX_DIM = 32  # the extension's widest specialisation
AUTO_MAX_DIM = 32  # backend="auto" uses this kernel up to here (benchmarks/histogram.py)
_PADDED = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32)  # specialised widths; d is zero-padded up
_ISAS = ("scalar", "avx2", "avx512")
_CHUNK_ROWS = 16384
TREE_MAX_DIM = 4  # d above this: the flat scan (a box bound prunes little in high d)
# fewer unique candidates than this (by d): the flat scan (crossovers, benchmarks/histogram.py)
TREE_MIN_CANDIDATES = {1: 512, 2: 256, 3: 384, 4: 768}
TREE_LEAF = 64  # candidates per leaf of the candidate tree
_TREE_CHUNK_ROWS = 65536  # denser rows, tighter groups: the tree path takes bigger chunks


def available() -> bool:
    """True when the compiled extension is importable."""
    return _lowd is not None


def isa() -> str:
    """The instruction set the extension uses on this CPU: "avx512", "avx2", "scalar" or "none"."""
    return _ISAS[_lowd.best_isa()] if _lowd is not None else "none"


def _padded_dim(d: int) -> int:
    return next(p for p in _PADDED if p >= d)


def _packed(prepared) -> tuple[np.ndarray, int]:
    """Candidates as (u, dp + 1) float32 rows [−2(c − shift), 0-padding, ‖c − shift‖²]."""
    d, u = prepared.dim, len(prepared.unique)
    dp = _padded_dim(d)
    cand = np.zeros((u, dp + 1), dtype=np.float32)
    cand[:, :d] = prepared.scores_t[:-1].T
    cand[:, dp] = prepared.scores_t[-1]
    return cand, dp


def _tree(cand: np.ndarray, dp: int, d: int) -> np.ndarray | None:
    """k-d tree over the packed candidates (``_lowd.build_tree``), or None for the flat scan."""
    u = len(cand)
    if d > TREE_MAX_DIM or u < TREE_MIN_CANDIDATES.get(d, 2**62):
        return None
    tree = np.empty(_lowd.tree_words(u, dp), dtype=np.int64)
    _lowd.build_tree(cand, u, dp, d, TREE_LEAF, tree)
    return tree


def _contiguous_rows(chunk: np.ndarray) -> np.ndarray:
    if chunk.dtype in (np.float64, np.float32) and chunk.flags.c_contiguous:
        return chunk
    return np.ascontiguousarray(chunk, dtype=np.float64)


def _assign_chunk(chunk, prepared, cand: np.ndarray, dp: int, which: int, tree=None) -> np.ndarray:
    """Exact nearest unique candidate of each row of one chunk (extension + float64 fix-up)."""

    x = _contiguous_rows(chunk)
    n, d = x.shape
    labels = np.empty(n, dtype=np.int64)
    unsure = np.empty(n, dtype=np.uint8)
    m1 = np.empty(n, dtype=np.float32)
    # |float32 score − exact score| ≤ (d + 3)·u·(max‖c‖² + 2‖x‖·max‖c‖) + O(u²) for this
    # kernel's arithmetic (x, −2c and ‖c‖² rounded to float32: 3u; a chain of d FMAs: d·u,
    # Higham Thm 3.5; zero padding adds exact zeros); a gap above twice (d + 4)·u·(…) is safe.
    gamma2 = 2.0 * (d + 4) * _U32
    if tree is not None:  # the same outputs; subtrees provably beyond every row's m2 skipped
        n_unsure = _lowd.assign_tree(
            x, int(x.dtype == np.float64), n, d, prepared.shift, tree, gamma2,
            prepared.max_norm, labels, unsure, which, m1,
        )  # fmt: skip
    else:
        n_unsure = _lowd.assign(
            x,
            int(x.dtype == np.float64),
            n,
            d,
            prepared.shift,
            cand,
            len(cand),
            dp,
            gamma2,
            prepared.max_norm,
            labels,
            unsure,
            which,
            None,
            m1,
        )
    if n_unsure:
        rows = np.flatnonzero(unsure)
        # possible winners: float32 score (any order, two roundings a term: (2d + 3)·u·(…))
        # within both errors of the best, (3d + 8)·u·(…) ≤ the numpy kernel's 4(d + 8)·u·(…)
        labels[rows] = _fix_up(x, rows, m1[rows], prepared, cand, 4.0 * (d + 8) * _U32, tree)
    return labels


def _fix_up(
    x: np.ndarray, rows: np.ndarray, m1: np.ndarray, prepared, cand, gamma2: float, tree=None
):
    """Exact labels of the unsure rows: float64 ‖x − c‖² over their possible winners.

    The possible winners of a row are the candidates whose float32 score is within
    the rounding bound of the row's smallest one (a superset of the exact nearest,
    whatever the summation order); among them the float64 distances by differences
    decide, ties → lowest index, as in the numpy kernel's fix-up. Rows too large
    for float32, or not finite, take the numpy kernel's path (which reports them).
    """

    nr = len(rows)
    out = np.empty(nr, dtype=np.int64)
    flag = np.empty(nr, dtype=np.uint8)
    cap = min(nr * len(cand), max(1024, 32 * nr))
    pair_row, pair_cand = np.empty(cap, dtype=np.int64), np.empty(cap, dtype=np.int64)
    if tree is not None:  # the same pairs, far subtrees skipped
        count = _lowd.near_pairs_tree(
            x, int(x.dtype == np.float64), x.shape[1], rows, nr, prepared.shift, tree, gamma2,
            prepared.max_norm, m1, pair_row, pair_cand, flag,
        )  # fmt: skip
    else:
        count = _lowd.near_pairs(
            x,
            int(x.dtype == np.float64),
            x.shape[1],
            rows,
            nr,
            prepared.shift,
            prepared.scores_t,
            len(cand),
            gamma2,
            prepared.max_norm,
            m1,
            pair_row,
            pair_cand,
            flag,
        )
    if count < 0:  # very many near ties: the numpy kernel's fix-up
        return _assign_rows(x[rows], prepared)
    pr, pc = pair_row[:count], pair_cand[:count]
    has_pairs = np.bincount(pr, minlength=nr) > 0
    slow = (flag > 0) | ~has_pairs
    if count:
        diff = np.asarray(x[rows[pr]], dtype=np.float64) - prepared.unique[pc]
        dist = np.einsum("ij,ij->i", diff, diff)
        order = np.lexsort((pc, dist, pr))
        first = np.flatnonzero(np.r_[True, np.diff(pr[order]) > 0])
        out[pr[order][first]] = pc[order][first]
    if slow.any():
        out[slow] = _assign_rows(x[rows[slow]], prepared)
    return out


def assign(
    block,
    prepared,
    chunk_size: int | None = None,
    n_threads: int | None = None,
    which_isa: str | None = None,
) -> np.ndarray:
    """Exact nearest unique candidate (index into ``prepared.unique``) of every row of ``block``."""

    _check(prepared)
    which = _ISAS.index(which_isa) if which_isa else _lowd.best_isa()
    cand, dp = _packed(prepared)
    tree = _tree(cand, dp, prepared.dim)
    n = len(block)
    if n * len(cand) * prepared.dim < flat.SMALL_WORK and chunk_size is None:
        return _assign_chunk(_chunk(block, 0, n, prepared), prepared, cand, dp, which, tree)
    workers = max(1, n_threads or os.cpu_count() or 1)
    if chunk_size:
        rows = chunk_size
    else:  # as many chunks per thread; the tree path takes bigger ones (tighter groups of rows)
        most = _CHUNK_ROWS if tree is None else _TREE_CHUNK_ROWS
        chunks = workers * -(-n // (workers * most))
        rows = max(256, -(-n // chunks))
    starts = range(0, n, rows)
    labels = np.empty(n, dtype=np.int64)

    def work(start: int) -> None:
        stop = min(n, start + rows)
        chunk = _chunk(block, start, stop, prepared)
        labels[start:stop] = _assign_chunk(chunk, prepared, cand, dp, which, tree)

    workers = min(workers, len(starts))
    if workers == 1:
        for start in starts:
            work(start)
    else:
        with ThreadPoolExecutor(workers) as pool:
            list(pool.map(work, starts))
    return labels


def lowd_kernel(block, prepared, chunk_size=None, n_threads=None) -> np.ndarray:
    """Counts over ``prepared.unique`` (the registry's kernel signature)."""
    return np.bincount(
        assign(block, prepared, chunk_size, n_threads), minlength=len(prepared.unique)
    )


def uses_lowd(d: int) -> bool:
    """Whether ``backend="auto"`` counts d-dimensional data with this kernel."""
    return _lowd is not None and isa() != "scalar" and d <= AUTO_MAX_DIM


def _check(prepared) -> None:
    if _lowd is None:
        raise ImportError(
            "backend='lowd' needs the compiled extension: reinstall privevo with a C compiler"
        )
    if prepared.dim > MAX_DIM:
        raise ValueError(
            f"backend='lowd' handles d <= {MAX_DIM}, got d = {prepared.dim}; use backend='numpy'"
        )
