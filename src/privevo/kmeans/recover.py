"""The recover step's maths: noise split, empirical-Bayes shrinkage, anchor scales, radii.

Post-processing of released sums and counts only (and of public anchors); the
releases themselves are drawn in :mod:`privevo.private` (see docs/kmeans.md,
"Recover steps").
"""

from __future__ import annotations

import math

import numpy as np

from .. import accounting
from ..adjacency import vote_sensitivity
from ..private import Domain, clip_to_ball, cluster_sums_sensitivity
from ..variation._geometry import project_to_ball

__all__ = [
    "RECOVER_RADIUS",
    "anchor_scales",
    "centred_means",
    "in_domain",
    "low_signal",
    "pca_basis",
    "recover_noise",
    "recover_radii",
    "shrunk_means",
]

RECOVER_RADIUS = 1.0  # later recover steps clip offsets at this many nearest-anchor distances


def in_domain(domain: Domain, unit_centers: np.ndarray) -> np.ndarray:
    """Centres c + R·u mapped back from the unit ball and kept in the public domain: onto the
    ball, then into the box when one was declared (post-processing; the box lies in the ball).
    A domain in scaled units maps them back itself (``from_unit_ball``)."""
    if hasattr(domain, "from_unit_ball"):
        return domain.from_unit_ball(unit_centers)
    centers = clip_to_ball(
        domain.center + domain.radius * unit_centers, domain.radius, domain.center
    )
    return centers if domain.box is None else np.clip(centers, domain.box[0], domain.box[1])


def trusted_counts(counts, sigma_sum: float, d: int) -> np.ndarray:
    """Clusters whose noisy count ĉ_j exceeds max(σ_s·√d, 1): their mean is estimated from
    their own sums (the rule of :func:`shrunk_means` and :func:`centred_means`)."""
    return np.asarray(counts) > max(sigma_sum * math.sqrt(d), 1.0)


def low_signal(counts, sigma_sum: float, d: int) -> np.ndarray:
    """Indices of the clusters no noisy count supports (not :func:`trusted_counts`)."""
    return np.flatnonzero(~trusted_counts(counts, sigma_sum, d))


def pca_basis(moment: np.ndarray, dim: int) -> np.ndarray:
    """The eigenvectors of the ``dim`` largest eigenvalues of a symmetric (d, d) matrix, as
    columns."""
    values, vectors = np.linalg.eigh(moment)
    return vectors[:, np.argsort(values)[::-1][:dim]]


def recover_noise(
    mu: float, dim: int, adjacency: str = "add_remove", noise: str = "gaussian", n_clusters: int = 1
) -> dict:
    """σ's of the recover step's two releases so that together they spend μ² of the budget.

    μ² (or 2ρ under zCDP) is split between the sums and the counts as √d : 1,
    which minimises the bound σ_s√d + ‖m‖σ_c on a cluster mean's error
    (‖m‖ ≤ 1). L2 sensitivities: sums 1 (add/remove) or 2 (replace), counts 1
    or √2; with discrete noise the sums are lattice-rounded (k·d values) and
    their sensitivity grows by γ√(kd) (:func:`privevo.private.lattice_sensitivity`).
    """
    count_sensitivity = vote_sensitivity(adjacency)
    sum_sensitivity = cluster_sums_sensitivity(1.0, adjacency, noise, n_clusters * dim)
    root = math.sqrt(dim)
    budget = mu * mu
    return {
        "sigma_sum": accounting.share_sigma(budget, root / (root + 1), sum_sensitivity),
        "sigma_count": accounting.share_sigma(budget, 1 / (root + 1), count_sensitivity),
        "sum_sensitivity": sum_sensitivity,
        "count_sensitivity": count_sensitivity,
    }


def shrunk_means(
    sums, counts, anchors, sigma_sum: float, sigma_count: float, basis=None
) -> np.ndarray:
    """Noisy cluster means shrunk towards public anchors (empirical Bayes; post-processing only).

    For cluster j with noisy sum ŝ_j and count ĉ_j, the mean m̂_j = ŝ_j/ĉ_j has
    squared error v_j ≈ (d·σ_s² + ‖m̂_j‖²·σ_c²)/ĉ_j². The anchor a_j's squared
    bias is estimated by b_j² = max(‖m̂_j − a_j‖² − v_j, 0), and the centre is
    the James–Stein-type blend a_j + b_j²/(b_j² + v_j)·(m̂_j − a_j). With an
    orthonormal ``basis`` (d, d') the blend is done apart in its span and in
    the orthogonal complement (d' and d − d' of the d noise dimensions), so
    anchors that are good in a subspace only (HDPE's lifted centres) keep that
    part. Results are projected into the unit ball, so exactly k centres
    always come back.

    A cluster whose noisy count is at most max(σ_s·√d, 1) has no mean of its
    own: its centre is its anchor scaled towards the public centre (the origin
    of the unit ball) by its own released sum, α_j·a_j (:func:`anchor_scales`),
    so that where that sum says the anchor explains nothing the centre falls
    back on the public centre instead of on an anchor the noise placed. Each
    cluster is judged on its own releases: a weak but real cluster (its sum
    along its anchor above the noise) keeps its anchor whatever the others do.
    """
    d = sums.shape[1]
    trusted = trusted_counts(counts, sigma_sum, d)
    scales = np.where(trusted, 1.0, anchor_scales(sums, counts, anchors, sigma_sum))
    anchors = scales[:, None] * anchors
    safe = np.where(trusted, counts, 1.0)
    means = sums / safe[:, None]
    parts = [(means, anchors, d)] if basis is None else _split(means, anchors, basis)
    out = np.zeros_like(anchors)
    for mean, anchor, dim in parts:
        var = (dim * sigma_sum**2 + np.einsum("ij,ij->i", mean, mean) * sigma_count**2) / safe**2
        gap = mean - anchor
        bias2 = np.maximum(np.einsum("ij,ij->i", gap, gap) - var, 0.0)
        out += anchor + np.where(trusted, bias2 / (bias2 + var), 0.0)[:, None] * gap
    return project_to_ball(out, 1.0)


def anchor_scales(sums, counts, anchors, sigma_sum: float) -> np.ndarray:
    """α_j ∈ [0, 1]: how far anchor a_j stands from the public centre, by cluster j's release.

    Derivation. With the true sum s_j = n_j·m_j, the scale that minimises
    cluster j's k-means cost against its true mean, n_j‖m_j − α·a_j‖², is
    α_j* = ⟨s_j, a_j⟩ / (n_j‖a_j‖²). The anchor is fixed before the recover
    step's noise is drawn, so N_j = ⟨ŝ_j, a_j⟩ estimates the numerator without
    bias, with variance V_j = σ_s²‖a_j‖² — one coordinate's noise, where the
    mean ŝ_j/ĉ_j carries d: the sum along the anchor can show a cluster whose
    count is still within the noise. N_j is shrunk James–Stein-like by its
    noise-to-signal ratio, N_j·(1 − V_j/N_j²)₊ (the positive-part factor of a
    one-dimensional estimate), and α_j = clip(N_j·(1 − V_j/N_j²)₊ / D_j, 0, 1)
    with D_j = max(ĉ_j, 0)·‖a_j‖². An anchor that explains its sum gives α_j ≈ 1;
    one placed by noise, or a sum drowned in noise (small data at small ε),
    gives α_j ≈ 0: the public centre, the data-independent answer.
    Post-processing of released values only.
    """
    weights = np.maximum(np.asarray(counts, dtype=np.float64), 0.0)
    norms = np.einsum("ij,ij->i", anchors, anchors)
    numerator = np.einsum("ij,ij->i", sums, anchors)
    denominator = weights * norms
    usable = (numerator > 0) & (denominator > 0)
    safe = np.where(usable, numerator, 1.0)
    shrunk = safe * np.maximum(1.0 - sigma_sum**2 * norms / safe**2, 0.0)
    return np.where(usable, np.minimum(shrunk / np.where(usable, denominator, 1.0), 1.0), 0.0)


def recover_radii(anchors: np.ndarray) -> np.ndarray:
    """r_j = min(RECOVER_RADIUS·D_j, 2), D_j the distance from anchor j to its nearest other
    anchor (public: the anchors are released values)."""
    k = len(anchors)
    if k < 2:
        return np.full(k, 2.0)
    sq = np.einsum("ij,ij->i", anchors, anchors)
    d2 = sq[:, None] - 2.0 * anchors @ anchors.T + sq[None, :]
    np.fill_diagonal(d2, np.inf)
    nearest = np.sqrt(np.maximum(d2.min(axis=1), 0.0))
    return np.clip(RECOVER_RADIUS * nearest, 1e-6, 2.0)


def centred_means(sums, counts, anchors, radii, sigma_sum: float, sigma_count: float):
    """a_j + r_j·λ_j·ŝ_j/ĉ_j from noisy sums of offsets (x − a_j)/r_j clipped to the unit ball.

    The offset mean u_j = ŝ_j/ĉ_j has squared error v_j ≈ (d·σ_s² + ‖u_j‖²·σ_c²)/ĉ_j²;
    λ_j = b_j²/(b_j² + v_j) with b_j² = max(‖u_j‖² − v_j, 0) (the empirical-Bayes
    blend of :func:`shrunk_means`, towards the anchor). A cluster whose noisy
    count is at most max(σ_s·√d, 1) keeps its anchor.
    """
    d = sums.shape[1]
    trusted = trusted_counts(counts, sigma_sum, d)
    safe = np.where(trusted, counts, 1.0)
    offsets = sums / safe[:, None]
    norm2 = np.einsum("ij,ij->i", offsets, offsets)
    var = (d * sigma_sum**2 + norm2 * sigma_count**2) / safe**2
    bias2 = np.maximum(norm2 - var, 0.0)
    weight = np.where(trusted, bias2 / np.maximum(bias2 + var, 1e-300), 0.0)
    return project_to_ball(anchors + (radii * weight)[:, None] * offsets, 1.0)


def _split(means, anchors, basis):
    """(mean, anchor, noise dimensions) in span(basis) and in its orthogonal complement."""
    m_in, a_in = (means @ basis) @ basis.T, (anchors @ basis) @ basis.T
    d, d_in = anchors.shape[1], basis.shape[1]
    return [(m_in, a_in, d_in)] + ([(means - m_in, anchors - a_in, d - d_in)] if d_in < d else [])
