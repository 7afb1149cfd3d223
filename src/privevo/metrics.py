"""Quality metrics for DP clustering and synthetic data (the papers' metrics; docs/tabular.md).

These are evaluation tools for the data owner: they compare private and
synthetic sets and their outputs are *not* differentially private. None of
them is part of a release.
"""

from __future__ import annotations

import numpy as np
from scipy import integrate

from ._validation import check_points, check_positive_int, check_positive_real
from .distances import nearest_distances

__all__ = [
    "EVALUATION_NOTE",
    "labels_and_inertia",
    "kmeans_loss",
    "nearest_distances",
    "area_under_curve",
    "sinkhorn_w1",
    "exact_w1",
    "knn_precision_recall",
    "cluster_coverage",
    "max_coverage_distance",
    "intrinsic_dimension",
]


EVALUATION_NOTE = (
    "labels_ and inertia_ are computed on the private rows (privevo.evaluation): "
    "they are not differentially private; do not publish them"
)


def labels_and_inertia(X, centers) -> tuple[np.ndarray, float]:
    """Each private row's nearest centre and Σ‖x − c‖² (scikit-learn's ``labels_``/``inertia_``;
    not DP)."""
    dist, labels = nearest_distances(X, centers)
    return labels, float(dist.sum())


def kmeans_loss(X, centers) -> float:
    """Normalised k-means loss Σ_x min_c ‖x − c‖² / n."""
    return float(nearest_distances(X, centers)[0].mean())


def area_under_curve(epsilons, losses) -> float:
    """Trapezoid area under loss-vs-ε, *not* divided by the ε span (the PE-means tables)."""
    eps = np.asarray(epsilons, dtype=float)
    order = np.argsort(eps)
    return float(integrate.trapezoid(np.asarray(losses, dtype=float)[order], eps[order]))


def sinkhorn_w1(real, synthetic, reg: float = 0.05, max_iter: int = 5000) -> float:
    """Debiased Sinkhorn approximation of W1 (Euclidean ground cost, uniform weights).

    S(a, b) = ⟨P_ab, C_ab⟩ − ½⟨P_aa, C_aa⟩ − ½⟨P_bb, C_bb⟩ with P the
    entropic plans of POT's Sinkhorn solver; the debiasing makes S(a, a) = 0
    (Feydy et al. 2019). Entropic blur makes S a smoothed W1 (it under-reads
    small displacements); use :func:`exact_w1` where sets are small enough. ``reg`` is relative to
    the largest pairwise distance,
    so the setting does not depend on the data's scale.
    """
    real = check_points(real, "real")
    synthetic = check_points(synthetic, "synthetic")
    reg = check_positive_real(reg, "reg")
    import ot

    scale = float(ot.dist(real, synthetic, metric="euclidean").max()) or 1.0

    def cost(p, q):
        return _entropic_cost(p, q, reg * scale, max_iter)

    return max(
        0.0, cost(real, synthetic) - 0.5 * cost(real, real) - 0.5 * cost(synthetic, synthetic)
    )


def _entropic_cost(a_points: np.ndarray, b_points: np.ndarray, reg: float, max_iter: int) -> float:
    import ot

    cost = ot.dist(a_points, b_points, metric="euclidean")
    a = np.full(len(a_points), 1.0 / len(a_points))
    b = np.full(len(b_points), 1.0 / len(b_points))
    plan = ot.sinkhorn(
        a, b, cost, reg, method="sinkhorn", numItermax=max_iter, stopThr=1e-6, warn=False
    )
    return float(np.sum(plan * cost))


def exact_w1(real, synthetic) -> float:
    """Exact W1 by network simplex (POT ``emd2``); for sets up to a few thousand points."""
    import ot

    real = check_points(real, "real")
    synthetic = check_points(synthetic, "synthetic")
    a = np.full(len(real), 1.0 / len(real))
    b = np.full(len(synthetic), 1.0 / len(synthetic))
    return float(ot.emd2(a, b, ot.dist(real, synthetic, metric="euclidean")))


def knn_precision_recall(real, synthetic, k: int = 3) -> tuple[float, float]:
    """(precision, recall) with k-NN balls (Kynkäänniemi et al. 2019).

    A real point's ball has the radius of its k-th nearest real neighbour.
    Recall = share of real balls containing ≥ 1 synthetic point; precision =
    share of synthetic points inside some real ball.
    """
    from sklearn.neighbors import NearestNeighbors

    real = check_points(real, "real", min_rows=2)
    synthetic = check_points(synthetic, "synthetic")
    k = min(check_positive_int(k, "k"), len(real) - 1)
    radii = NearestNeighbors(n_neighbors=k + 1).fit(real).kneighbors(real)[0][:, -1]
    d2 = _pairwise_sq(real, synthetic)
    inside = d2 <= radii[:, None] ** 2 * (1 + 1e-12)
    return float(inside.any(axis=0).mean()), float(inside.any(axis=1).mean())


def cluster_coverage(cluster_centers, synthetic, distance: float) -> float:
    """Share of true clusters with a synthetic point within ``distance`` of the centre."""
    d2, _ = nearest_distances(cluster_centers, synthetic)
    return float((np.sqrt(d2) <= distance).mean())


def max_coverage_distance(real, synthetic) -> float:
    """sup_x min_s ρ(x, s): how far the worst-covered real point is from the synthetic set."""
    return float(np.sqrt(nearest_distances(real, synthetic)[0].max()))


def intrinsic_dimension(points, variance: float = 0.8) -> int:
    """Number of singular values of the centred points explaining ≥ ``variance`` of the variance."""
    points = check_points(points, "points", min_rows=2)
    if not 0 < variance <= 1:
        raise ValueError(f"variance must be in (0, 1], got {variance}")
    s = np.linalg.svd(points - points.mean(axis=0), compute_uv=False)
    share = np.cumsum(s**2) / max(np.sum(s**2), 1e-300)
    return int(np.searchsorted(share, variance - 1e-12) + 1)


def _pairwise_sq(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.maximum(
        np.einsum("ij,ij->i", a, a)[:, None] + np.einsum("ij,ij->i", b, b)[None, :] - 2.0 * a @ b.T,
        0.0,
    )
