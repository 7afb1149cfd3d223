"""k-neighbour vote histograms for text PE (DPSDA's ``num_nearest_neighbor``).

Every private embedding votes once for each of its ``k`` nearest candidates
(Euclidean; ties broken by the lower candidate index). Under add/remove
adjacency one private row changes ``k`` counts by 1: L2 sensitivity √k (√(2k)
under replace). The release adds noise of scale σ·√k to the integer counts and
divides by √k (DPSDA's "l2" vote normalisation), so the released counts carry
noise σ and the ratio sensitivity / noise — hence ε — is exactly that of the
one-neighbour histogram with σ. Integer counts keep the discrete Gaussian
mechanisms valid (the division is post-processing).

Each private row's votes are a function of that row and the candidates alone:
distances come from a float64 matrix product, and any row whose k-th and
(k+1)-th distances are closer than the product's rounding bound is recomputed
on its own (``((C − x)²).sum(1)``), so neither chunking nor BLAS blocking can
move a vote.
"""

from __future__ import annotations

import math

import numpy as np

from .._validation import check_points, check_positive_int

__all__ = ["knn_votes", "noisy_knn_histogram"]


def knn_votes(private, candidates, k: int, chunk_size: int = 2048) -> np.ndarray:
    """Integer counts: how many private rows have each candidate among their ``k`` nearest."""
    X = check_points(private, "private")
    C = check_points(candidates, "candidates")
    k = check_positive_int(k, "n_neighbors")
    if k > len(C):
        raise ValueError(f"n_neighbors={k} is larger than the {len(C)} candidates; lower n_neighbors")
    c_sq = np.einsum("ij,ij->i", C, C)
    counts = np.zeros(len(C), dtype=np.int64)
    for start in range(0, len(X), chunk_size):
        block = X[start : start + chunk_size]
        counts += np.bincount(_top_k(block, C, c_sq, k).ravel(), minlength=len(C))
    return counts


def _top_k(block: np.ndarray, C: np.ndarray, c_sq: np.ndarray, k: int) -> np.ndarray:
    """(rows, k) candidate indices of each row's k nearest, exact up to the tie rule."""
    x_sq = np.einsum("ij,ij->i", block, block)
    d2 = x_sq[:, None] + c_sq[None, :] - 2.0 * (block @ C.T)
    order = np.argsort(d2, axis=1, kind="stable")
    if k == len(C):
        return order
    rows = np.arange(len(block))[:, None]
    kth, nxt = d2[rows, order[:, k - 1 : k]][:, 0], d2[rows, order[:, k : k + 1]][:, 0]
    scale = x_sq + float(c_sq.max())
    bound = 8.0 * (C.shape[1] + 4) * np.finfo(np.float64).eps * scale
    top = order[:, :k].copy()
    for i in np.flatnonzero(nxt - kth <= 2.0 * bound):  # near ties: decide on the row alone
        exact = ((C - block[i]) ** 2).sum(axis=1)
        top[i] = np.lexsort((np.arange(len(C)), exact))[:k]
    return top


def noisy_knn_histogram(private, candidates, k: int, sigma: float, rng: np.random.Generator,
                        noise: str = "gaussian") -> np.ndarray:
    """(k-neighbour counts + noise of scale σ·√k) / √k; σ = 0 gives the exact normalised counts."""
    from ..histogram import _NOISES, _check_release

    counts = knn_votes(private, candidates, k).astype(np.float64)
    root = math.sqrt(k)
    if sigma == 0.0:
        return counts / root
    _check_release(rng, sigma=sigma)
    try:
        add_noise = _NOISES[noise]
    except KeyError:
        raise ValueError(f"noise must be one of {sorted(_NOISES)}, got {noise!r}") from None
    return add_noise(counts, float(sigma) * root, rng) / root
