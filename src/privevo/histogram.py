"""The private boundary: nearest-neighbour vote histograms.

This is the only module of privevo that reads private data. Every private
point votes once for its nearest candidate; the release is those counts plus
Gaussian noise (or exact discrete Gaussian noise, :mod:`privevo.noise`). Under add/remove adjacency one point changes one count by 1
(L2 sensitivity 1); under replace adjacency two counts by 1 (√2).
Everything downstream of :func:`noisy_nn_histogram` is post-processing.
DP k-means also releases, through this module only, noisy per-cluster sums and
counts (:func:`noisy_cluster_sums`) and a noisy second-moment matrix
(:func:`noisy_second_moment`, for HDPE-means' projection).

The exact count is computed as *map* (:func:`partial_counts`, one block of
private rows → counts) + *reduce* (a sum), so distributed backends reuse the
same kernel and the same noise step.

Kernel (``backend="numpy"``): argmin_c ‖x − c‖² = argmin_c (‖c‖² − 2 x·c) is
one float32 GEMM of rows augmented with a 1 against candidates augmented with
‖c‖², into a reused chunk buffer, followed by an argmin; the n×m distance
matrix never exists. Rows whose best and second-best float32 scores lie within
a rigorous rounding bound are recomputed in float64, so counts are identical
to a float64 brute force (ties go to the lowest candidate index).
"""

from __future__ import annotations

import math
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Callable

import numpy as np
from threadpoolctl import threadpool_limits

from ._validation import check_points, check_same_dimension

__all__ = [
    "nn_histogram",
    "noisy_nn_histogram",
    "prepare_candidates",
    "partial_counts",
    "PreparedCandidates",
    "METRICS",
    "available_backends",
    "cluster_sums",
    "noisy_cluster_sums",
]

METRICS = ("euclidean", "cosine")
_U32 = 2.0**-24  # unit roundoff of float32
_NONFINITE = "private data contains NaN or infinite values; drop or impute them first"
_CHUNK_BYTES = 2**24  # one worker's score buffer: 16 MiB measured best here (benchmarks/histogram.py)


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
    _, first = np.unique(cands, axis=0, return_index=True)
    first = np.sort(first)
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


def nn_histogram(
    private,
    candidates,
    backend: str = "auto",
    chunk_size: int | None = None,
    metric: str = "euclidean",
    n_threads: int | None = None,
    n_neighbors: int = 1,
    groups=None,
) -> np.ndarray:
    """Exact vote counts: how many private rows have each candidate as nearest.

    Parameters
    ----------
    private : array-like (n, d), Dask array/dataframe, or block source
        Private points; memory-mapped arrays are read chunk by chunk, block
        sources (:mod:`privevo.streaming`) block by block.
    candidates : array-like (m, d)
        Public candidates.
    backend : {"auto", "numpy", "faiss", "dask"} or a registered name
    chunk_size : rows per chunk (default: a score buffer of ~16 MiB per thread)
    metric : "euclidean" or "cosine"
    n_neighbors : k; each row gives 1/√k to each of its k nearest distinct candidates
    groups : one user id per row: each user's summed vote vector is scaled to
        L2 norm ≤ 1 (user-level privacy, :mod:`privevo._votes`)

    Returns
    -------
    counts : int64 array (m,), summing to n. No noise: see
    :func:`noisy_nn_histogram` for the release. With ``n_neighbors > 1`` or
    ``groups``: float64 votes; one row (one user with ``groups``) changes them
    by ≤ 1 in L2 (add/remove), ≤ √2 (replace).
    """
    prepared = prepare_candidates(candidates, metric)
    if isinstance(n_neighbors, bool) or n_neighbors != 1 or groups is not None:
        from ._votes import check_vote_arguments, vote_totals

        n_neighbors, groups = check_vote_arguments(n_neighbors, groups)
        votes = np.zeros(prepared.n_candidates)
        votes[prepared.first_index] = vote_totals(private, prepared, n_neighbors, groups, chunk_size)
        return votes
    return _expand(prepared, _unique_counts(private, prepared, backend, chunk_size, n_threads))


def _unique_counts(private, prepared: PreparedCandidates, backend, chunk_size, n_threads) -> np.ndarray:
    """Map (:func:`partial_counts` per block) + reduce (sum), wherever the blocks live.

    Dask collections or ``backend="dask"``: partitions counted on a Dask
    cluster (:mod:`privevo.distributed`). Block sources (objects with
    ``iter_blocks()``, :mod:`privevo.streaming`): one block in memory at a time.
    Noise is never added here (see :func:`noisy_nn_histogram`).
    """
    if backend == "dask" or _is_dask_collection(private):
        from .distributed import dask_unique_counts

        return dask_unique_counts(private, prepared, chunk_size, n_threads)
    if hasattr(private, "iter_blocks"):
        check_same_dimension(prepared.dim, private.shape[1])
        total = np.zeros(len(prepared.unique), dtype=np.int64)
        for block in private.iter_blocks():
            if len(block):
                total += partial_counts(_as_private_block(block, prepared.dim), prepared, backend, chunk_size, n_threads)
        return total
    block = _as_private_block(private, prepared.dim)
    return partial_counts(block, prepared, backend, chunk_size, n_threads)


def _is_dask_collection(x) -> bool:
    dask = sys.modules.get("dask")  # never import Dask for in-memory data
    return dask is not None and hasattr(dask, "is_dask_collection") and dask.is_dask_collection(x)


def noisy_nn_histogram(
    private,
    candidates,
    sigma: float,
    rng: np.random.Generator,
    noise: str = "gaussian",
    backend: str = "auto",
    chunk_size: int | None = None,
    metric: str = "euclidean",
    n_neighbors: int = 1,
    groups=None,
) -> np.ndarray:
    """The single private release of privevo: vote counts + N(0, σ²) per count.

    ``rng`` must be an explicit ``numpy.random.Generator``. Noise is drawn once
    for the whole histogram, after the (possibly distributed) exact count.
    ``noise="discrete_gaussian"`` adds exact discrete Gaussian N_Z(0, σ²) noise
    instead (σ its parameter; ``"discrete_gaussian_secure"`` draws it from the
    OS CSPRNG); account for it with :func:`privevo.accounting.discrete_gaussian_epsilon`.
    ``n_neighbors`` and ``groups`` (privacy unit: the user) as in
    :func:`nn_histogram`; the L2 sensitivity stays 1 (add/remove) or √2 (replace).
    Their votes are real-valued, so they take Gaussian noise only.
    """
    _check_release(rng, sigma=sigma)
    try:
        add_noise = _NOISES[noise]
    except KeyError:
        raise ValueError(f"noise must be one of {sorted(_NOISES)}, got {noise!r}") from None
    if noise != "gaussian" and (n_neighbors != 1 or groups is not None):
        raise ValueError(f"noise={noise!r} needs integer counts; n_neighbors > 1 and groups give "
                         "real-valued votes (a lattice shifted off the integers is not private): "
                         "use noise='gaussian'")
    counts = nn_histogram(private, candidates, backend=backend, chunk_size=chunk_size, metric=metric,
                          n_neighbors=n_neighbors, groups=groups)
    return add_noise(counts, float(sigma), rng)


def _check_release(rng, **positive) -> None:
    """A release needs an explicit Generator and finite, positive noise scales."""
    if not isinstance(rng, np.random.Generator):
        raise ValueError("rng must be a numpy.random.Generator; seed one with numpy.random.default_rng(seed)")
    for name, value in positive.items():
        if not (isinstance(value, (int, float, np.floating)) and value > 0 and math.isfinite(value)):
            raise ValueError(f"{name} must be a finite number > 0, got {value!r}")


def _gaussian_noise(counts: np.ndarray, sigma: float, rng: np.random.Generator) -> np.ndarray:
    return counts + rng.normal(0.0, sigma, size=counts.shape)


def _discrete_gaussian_noise(counts: np.ndarray, sigma: float, rng: np.random.Generator) -> np.ndarray:
    """counts + exact N_Z(0, σ²) (:mod:`privevo.noise`): integer-valued, returned as float64 (exact)."""
    from .noise import discrete_gaussian

    return (counts + discrete_gaussian(sigma, counts.shape, rng)).astype(np.float64)


def _discrete_gaussian_secure_noise(counts: np.ndarray, sigma: float, rng: np.random.Generator) -> np.ndarray:
    """As ``discrete_gaussian`` but from the OS CSPRNG (``secrets.SystemRandom``); ``rng`` is not used."""
    import secrets

    return _discrete_gaussian_noise(counts, sigma, secrets.SystemRandom())


_NOISES: dict[str, Callable] = {
    "gaussian": _gaussian_noise,
    "discrete_gaussian": _discrete_gaussian_noise,  # accounted by zCDP: privevo.accounting
    "discrete_gaussian_secure": _discrete_gaussian_secure_noise,
}


# --------------------------------------------------------------------------
# map: one block of private rows -> counts over the prepared (unique) rows


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


def expand_counts(prepared: PreparedCandidates, unique_counts: np.ndarray) -> np.ndarray:
    """Counts over the original m candidates; a duplicate's votes go to its first copy."""
    return _expand(prepared, unique_counts)


def _expand(prepared: PreparedCandidates, unique_counts: np.ndarray) -> np.ndarray:
    counts = np.zeros(prepared.n_candidates, dtype=np.int64)
    counts[prepared.first_index] = unique_counts
    return counts


def _numpy_kernel(block, prepared: PreparedCandidates, chunk_size, n_threads) -> np.ndarray:
    n, u = len(block), len(prepared.unique)
    if chunk_size is None and n * u * (prepared.dim + 1) < _lowd_kernel.SMALL_WORK:
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
    bound = 2 * _rounding_bound(prepared.dim, np.sqrt(np.einsum("ij,ij->i", x, x)), prepared.max_norm)
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
            bound = 2 * _rounding_bound(prepared.dim, np.linalg.norm(x, axis=1), prepared.max_norm, True)
            unsure = np.flatnonzero(dist[:, 1] - dist[:, 0] <= bound)
            if unsure.size:
                best[unsure] = _assign_rows(chunk[unsure], prepared)
        counts += np.bincount(best, minlength=u)
    return counts


def _assign_rows(rows: np.ndarray, prepared: PreparedCandidates) -> np.ndarray:
    """Exact nearest unique candidate of each row (the numpy kernel's assignment)."""
    buf = np.empty((len(rows), len(prepared.unique)), dtype=np.float32)
    aug = np.ones((len(rows), prepared.dim + 1), dtype=np.float32)
    return _assign_chunk(rows, prepared, buf, aug)


def _import_faiss():
    try:
        import faiss
    except ImportError:
        raise ImportError(
            "backend='faiss' needs faiss: pip install 'privevo[faiss]' (or use backend='numpy')"
        ) from None
    return faiss


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


def _as_private_block(private, d: int):
    """Private rows as a sliceable 2-D array, without copying ndarrays or memmaps."""
    if not isinstance(private, np.ndarray) or private.dtype.kind not in "fiu":
        private = check_points(private, "private data")
    if private.ndim != 2:
        raise ValueError(
            f"private data must be 2-D (rows x features), got shape {private.shape}; "
            "reshape 1-D data with .reshape(-1, 1)"
        )
    if private.shape[0] == 0:
        raise ValueError("private data is empty; pass at least one row")
    check_same_dimension(d, private.shape[1])
    return private


_BACKENDS: dict[str, Callable] = {"numpy": _numpy_kernel, "faiss": _faiss_kernel}

from . import _lowd_kernel  # noqa: E402  fused kernel for d <= 32 (it calls back into this module)

if _lowd_kernel.available():
    _BACKENDS["lowd"] = _lowd_kernel.lowd_kernel


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
        return _lowd_kernel.auto_kernel  # by shape: the fused kernel for low d, else numpy's
    try:
        return _BACKENDS[name]
    except KeyError:
        raise ValueError(f"backend must be 'auto' or one of {sorted(_BACKENDS)}, got {name!r}") from None


# --------------------------------------------------------------------------
# per-cluster sums: the release of DPKMeans' recover step (and sum-based DP k-means)


def cluster_sums(private, centers, assign_by=None, radius: float = 1.0, chunk_size: int = 8192):
    """Exact per-centre sums and counts; each private row goes to its nearest centre.

    Row i is assigned by ``assign_by[i]`` (a row-aligned private feature view,
    e.g. a projection; default the row itself) and adds its value *clipped to
    the L2 ball of* ``radius`` around the origin to its centre's sum. Adding or
    removing one row changes the sums by at most ``radius`` and one count by 1
    (L2 sensitivities). Returns (sums (k, d), counts (k,)).
    """
    block = _as_private_block(private, np.shape(private)[1] if np.ndim(private) == 2 else -1)
    keys = block if assign_by is None else _as_private_block(assign_by, np.shape(assign_by)[1])
    if len(keys) != len(block):
        raise ValueError(f"assign_by has {len(keys)} rows but the data has {len(block)}; pass one row per data row")
    prepared = prepare_candidates(centers)
    check_same_dimension(prepared.dim, keys.shape[1], "centers")
    u, n = len(prepared.unique), len(block)
    buf = np.empty((chunk_size, u), dtype=np.float32)
    aug = np.ones((chunk_size, prepared.dim + 1), dtype=np.float32)
    sums, counts = np.zeros((u, block.shape[1])), np.zeros(u)
    for start in range(0, n, chunk_size):
        stop = min(n, start + chunk_size)
        labels = _assign_chunk(_chunk(keys, start, stop, prepared), prepared, buf, aug)
        rows = _clipped_rows(block, start, stop, radius)
        onehot = np.zeros((u, stop - start))
        onehot[labels, np.arange(stop - start)] = 1.0
        sums += onehot @ rows
        counts += onehot.sum(axis=1)
    full_sums = np.zeros((prepared.n_candidates, block.shape[1]))
    full_sums[prepared.first_index] = sums
    return full_sums, _expand(prepared, counts.astype(np.int64))


def _clipped_rows(block, start: int, stop: int, radius: float) -> np.ndarray:
    """Rows start:stop of a private block in float64, each clipped to the L2 ball of ``radius``."""
    from ._clip import clip_to_ball

    return clip_to_ball(np.asarray(block[start:stop], dtype=np.float64), radius)  # no overflow near 1e300


def noisy_cluster_sums(
    private,
    centers,
    sigma_sum: float,
    sigma_count: float,
    rng: np.random.Generator,
    assign_by=None,
    radius: float = 1.0,
    noise: str = "gaussian",
):
    """Release per-centre sums + noise on *every* coordinate and counts + noise.

    Two mechanisms: sums with L2 sensitivity ``radius`` (add/remove;
    2·radius under replace) and counts with sensitivity 1 (√2 under replace),
    each with Gaussian noise N(0, σ²) or, for the discrete noises, the sums
    rounded to a lattice and N_Z noise (:func:`release_noise`; account with
    :func:`lattice_sensitivity`). See :func:`cluster_sums`.
    """
    _check_release(rng, sigma_sum=sigma_sum, sigma_count=sigma_count, radius=radius)
    sums, counts = cluster_sums(private, centers, assign_by=assign_by, radius=float(radius))
    noisy_sums = release_noise(sums, sigma_sum, rng, noise, granularity=lattice_step(radius))
    return noisy_sums, release_noise(counts.astype(np.float64), sigma_count, rng, noise)


def second_moment(private, radius: float = 1.0, chunk_size: int = 8192) -> np.ndarray:
    """Exact Σ_i x̄_i x̄_iᵀ (d, d) of the rows clipped to the L2 ball of ``radius``."""
    block = _as_private_block(private, np.shape(private)[1] if np.ndim(private) == 2 else -1)
    d = block.shape[1]
    out = np.zeros((d, d))
    for start in range(0, len(block), chunk_size):
        rows = _clipped_rows(block, start, start + chunk_size, radius)
        out += rows.T @ rows
    return out


def noisy_second_moment(private, sigma: float, rng: np.random.Generator, radius: float = 1.0,
                        noise: str = "gaussian") -> np.ndarray:
    """Release Σ x̄x̄ᵀ + symmetric noise ("Analyze Gauss", Dwork et al., STOC 2014).

    Noise (N(0, σ²), or lattice-rounded N_Z for the discrete noises) is drawn
    for each entry on and above the diagonal and mirrored. One row x̄
    (‖x̄‖ ≤ r) changes that upper triangle by a vector of L2 norm
    √(Σ_i x̄_i⁴ + Σ_{i<j} x̄_i²x̄_j²) ≤ ‖x̄‖² ≤ r² (add/remove); a replacement by
    at most ‖x̄x̄ᵀ − ȳȳᵀ‖_F ≤ √2·r².
    """
    _check_release(rng, sigma=sigma, radius=radius)
    moment = second_moment(private, radius=float(radius))
    upper = np.triu_indices(moment.shape[0])
    noisy = np.zeros_like(moment)
    noisy[upper] = release_noise(moment[upper], sigma, rng, noise, granularity=lattice_step(radius**2))
    return noisy + np.triu(noisy, 1).T


# --------------------------------------------------------------------------
# noise on real-valued releases


def lattice_step(scale: float) -> float:
    """γ = scale·2⁻²⁰: the lattice real-valued releases are rounded to before discrete noise."""
    return float(scale) * 2.0**-20


def lattice_sensitivity(sensitivity: float, scale: float, n_values: int) -> float:
    """Δ + γ·√k: the L2 sensitivity of k values rounded to the lattice of step γ = lattice_step(scale).

    Rounding moves each value by at most γ/2, so two neighbours' rounded
    releases differ by at most Δ + 2·(γ/2)·√k.
    """
    return float(sensitivity) + lattice_step(scale) * math.sqrt(n_values)


def release_noise(values: np.ndarray, sigma: float, rng: np.random.Generator, noise: str = "gaussian",
                  granularity: float = 1.0) -> np.ndarray:
    """values + noise of kind ``noise`` (the one noise choice of every release).

    ``"gaussian"``: N(0, σ²) per value. The discrete noises round the values to
    the lattice γℤ (γ = ``granularity``; exact for integer counts with γ = 1)
    and add γ·N_Z(0, (σ/γ)²), so the output never carries the low bits of the
    exact values (Mironov 2012).
    """
    try:
        add_noise = _NOISES[noise]
    except KeyError:
        raise ValueError(f"noise must be one of {sorted(_NOISES)}, got {noise!r}") from None
    values = np.asarray(values, dtype=np.float64)
    if noise == "gaussian":
        return add_noise(values, float(sigma), rng)
    lattice = np.rint(values / granularity)
    return add_noise(lattice, float(sigma) / granularity, rng) * granularity


def noisy_count(private, sigma: float, rng: np.random.Generator, noise: str = "gaussian") -> float:
    """Release n + noise: the number of private rows (L2 sensitivity 1 under add/remove).

    Under add/remove adjacency n is private; this release is what the
    n-dependent defaults (PE-means' population, its count threshold) use.
    """
    _check_release(rng, sigma=sigma)
    n = float(np.shape(private)[0])
    if not math.isfinite(n):  # a Dask collection of unknown length
        n = float(private.shape[0].compute() if hasattr(private.shape[0], "compute") else len(private))
    return float(release_noise(np.array([n]), sigma, rng, noise)[0])
