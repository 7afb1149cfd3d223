"""k-nearest-neighbour and user-level votes of the private histogram.

Row-level k-NN votes (``n_neighbors=k``): every private row gives 1/√k to
each of its k nearest *distinct* candidates (a duplicated candidate counts once,
at its first copy; ties at the k-th place → lowest index). One row's vote
vector v has ‖v‖₂ = √(min(k, u)/k) ≤ 1 and nonnegative entries, so adding or
removing a row changes the histogram by ≤ 1 in L2, replacing one by
‖v − v′‖₂ ≤ √(‖v‖² + ‖v′‖²) ≤ √2 (v·v′ ≥ 0).

User-level votes (``groups``, one user id per row): the vote vectors of a
user's rows are summed into V_u and scaled to V_u·min(1, 1/‖V_u‖₂) before the
users are summed. Adding or removing one *user* (all their rows) changes the
histogram by ≤ 1 in L2, replacing one user's rows by another's by ≤ √2 (both
nonnegative with norm ≤ 1): the privacy unit is the user.

Exactness: the k nearest are found on float32 scores (one GEMM per chunk, as
the numpy kernel) and a row is recomputed in float64 by differences (stable
sort, ties → lowest index) whenever its k-th and (k+1)-th float32 scores lie
within the rounding bound, so the chosen set equals the float64 brute force
(:func:`reference_votes`). For k = 1 the labels come from the vote kernels.
"""

from __future__ import annotations

import math

import numpy as np

from ..adjacency import vote_sensitivity  # every vote mode (k ≥ 1, rows or users)
from . import lowd
from .flat import _NONFINITE, _assign_rows, _chunk, _rounding_bound

__all__ = ["user_votes", "neighbour_labels", "reference_votes", "privacy_unit", "vote_sensitivity"]

_CHUNK_BYTES = 2**24


def privacy_unit(groups) -> str:
    """``"user"`` when votes are grouped by a user id per row, else ``"row"``."""
    return "row" if groups is None else "user"


def check_vote_arguments(n_neighbors, groups, n_rows: int | None = None):
    """Validated (k, groups as a 1-D array or None)."""
    if (
        isinstance(n_neighbors, bool)
        or not isinstance(n_neighbors, (int, np.integer))
        or n_neighbors < 1
    ):
        raise ValueError(f"n_neighbors must be an integer >= 1, got {n_neighbors!r}")
    if groups is None:
        return int(n_neighbors), None
    groups = np.asarray(groups)
    if groups.ndim != 1:
        raise ValueError(
            f"groups must be 1-D (one user id per row), got a {groups.ndim}-D array; "
            "pass one user id per row"
        )
    if n_rows is not None and len(groups) != n_rows:  # neither length is said: n is private
        raise ValueError("groups must have one entry per row of the data; pass one user id per row")
    if groups.dtype.kind == "f" and not np.isfinite(groups).all():
        raise ValueError("groups contains NaN or infinite ids; give every row a user id")
    return int(n_neighbors), groups


def neighbour_labels(block, prepared, k: int, chunk_size: int | None = None) -> np.ndarray:
    """(n, min(k, u)) indices into ``prepared.unique``: each row's k nearest, exact."""
    n, u = len(block), len(prepared.unique)
    if k == 1:
        if lowd.uses_lowd(prepared.dim):
            return lowd.assign(block, prepared, chunk_size)[:, None]
        rows = chunk_size or max(64, _CHUNK_BYTES // (4 * max(u, 1)))
        return np.concatenate(
            [
                _assign_rows(_chunk(block, s, min(n, s + rows), prepared), prepared)
                for s in range(0, n, rows)
            ]
        )[:, None]
    if k >= u:
        return np.broadcast_to(np.arange(u), (n, u))
    rows = chunk_size or max(64, _CHUNK_BYTES // (4 * u))
    return np.concatenate(
        [
            _topk_chunk(_chunk(block, s, min(n, s + rows), prepared), prepared, k)
            for s in range(0, n, rows)
        ]
    )


def _topk_chunk(chunk: np.ndarray, prepared, k: int) -> np.ndarray:
    """The k nearest unique candidates of each row (k < u): float32 scores + exact fix-up."""
    if not np.isfinite(chunk).all():
        raise ValueError(_NONFINITE)
    x = np.empty((len(chunk), prepared.dim + 1), dtype=np.float32)
    np.subtract(chunk, prepared.shift, out=x[:, :-1], casting="unsafe")
    x[:, -1] = 1.0
    with np.errstate(invalid="ignore", over="ignore"):
        scores = x @ prepared.scores_t
    part = np.argpartition(scores, k, axis=1)
    top = part[:, :k]
    r = np.arange(len(chunk))[:, None]
    kth = scores[r, top].max(axis=1)
    next_ = scores[r[:, 0], part[:, k]]
    xs = x[:, :-1].astype(np.float64)
    bound = 2 * _rounding_bound(
        prepared.dim, np.sqrt(np.einsum("ij,ij->i", xs, xs)), prepared.max_norm
    )
    with np.errstate(invalid="ignore"):
        unsure = np.flatnonzero(~(next_ - kth > bound))
    top = np.sort(top, axis=1)
    if unsure.size:
        top[unsure] = _exact_topk(chunk[unsure], prepared.unique, k)
    return top


def _exact_topk(rows: np.ndarray, unique: np.ndarray, k: int) -> np.ndarray:
    """float64 ‖x − c‖² by differences, stable order (ties → lowest index), first k, sorted."""
    rows = np.asarray(rows, dtype=np.float64)
    out = np.empty((len(rows), k), dtype=np.int64)
    step = max(1, 2**22 // max(unique.size, 1))  # ≤ 32 MiB of float64 differences per step
    for s in range(0, len(rows), step):
        diff = rows[s : s + step, None, :] - unique[None, :, :]
        dist = np.einsum("ijk,ijk->ij", diff, diff)
        out[s : s + step] = np.sort(np.argsort(dist, axis=1, kind="stable")[:, :k], axis=1)
    return out


def user_votes(labels: np.ndarray, groups: np.ndarray, u: int, k: int) -> np.ndarray:
    """Σ_users V_u·min(1, 1/‖V_u‖₂), V_u = Σ over the user's rows of 1/√k on each of its labels."""
    user = np.unique(groups, return_inverse=True)[1].reshape(-1)
    codes = (user[:, None].astype(np.int64) * u + labels).ravel()
    pairs, count = np.unique(codes, return_counts=True)
    weight = count / math.sqrt(k)
    owner, cand = pairs // u, pairs % u
    norm = np.sqrt(np.bincount(owner, weights=weight**2))
    scale = np.minimum(1.0, 1.0 / norm)
    return np.bincount(cand, weights=weight * scale[owner], minlength=u)


def reference_votes(private, candidates, n_neighbors: int = 1, groups=None) -> np.ndarray:
    """Slow float64 brute force of the votes over the original candidates (tests, audits).

    Distances by differences; each row's k nearest distinct candidates by a
    stable sort (ties → lowest index; a duplicate's votes go to its first copy).
    """
    cands = np.asarray(candidates, dtype=np.float64)
    rows = np.asarray(private, dtype=np.float64)
    first = np.sort(np.unique(cands, axis=0, return_index=True)[1])
    unique = cands[first]
    k = min(n_neighbors, len(unique))
    labels = np.empty((len(rows), k), dtype=np.int64)
    for i in range(len(rows)):
        diff = rows[i : i + 1, None, :] - unique[None, :, :]
        labels[i] = np.argsort(np.einsum("ijk,ijk->ij", diff, diff)[0], kind="stable")[:k]
    if groups is None:
        votes = np.bincount(labels.ravel(), minlength=len(unique)) / math.sqrt(n_neighbors)
    else:
        votes = np.zeros(len(unique))
        groups = np.asarray(groups)
        for g in np.unique(groups):
            v = np.bincount(labels[groups == g].ravel(), minlength=len(unique)) / math.sqrt(
                n_neighbors
            )
            votes += v * min(1.0, 1.0 / np.linalg.norm(v))
    out = np.zeros(len(cands))
    out[first] = votes
    return out
