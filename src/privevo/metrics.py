"""Quality metrics for DP clustering and synthetic data (the papers' metrics; docs/tabular.md).

These are evaluation tools for the data owner: they compare private and
synthetic sets and their outputs are *not* differentially private. None of
them is part of a release.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import integrate

from ._validation import check_points, check_positive_int, check_positive_real

__all__ = [
    "kmeans_loss",
    "nearest_distances",
    "area_under_curve",
    "sinkhorn_w1",
    "exact_w1",
    "knn_precision_recall",
    "cluster_coverage",
    "max_coverage_distance",
    "intrinsic_dimension",
    "marginal_tvd",
    "quantile_tvd",
    "numeric_errors",
    "downstream_accuracy",
]


def nearest_distances(points, references, chunk_size: int = 4096) -> tuple[np.ndarray, np.ndarray]:
    """Squared distance and index of each point's nearest reference (float64, chunked)."""
    points = check_points(points, "points")
    references = check_points(references, "references")
    if points.shape[1] != references.shape[1]:
        raise ValueError(
            f"references have {references.shape[1]} features but points have {points.shape[1]}"
        )
    ref_sq = np.einsum("ij,ij->i", references, references)
    dist = np.empty(len(points))
    idx = np.empty(len(points), dtype=np.int64)
    for s in range(0, len(points), chunk_size):
        x = points[s : s + chunk_size]
        d2 = ref_sq[None, :] - 2.0 * x @ references.T
        idx[s : s + chunk_size] = d2.argmin(axis=1)
        best = d2[np.arange(len(x)), idx[s : s + chunk_size]]
        dist[s : s + chunk_size] = np.maximum(best + np.einsum("ij,ij->i", x, x), 0.0)
    return dist, idx


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


# -------------------------------------------------------------------- tables (tabular PE)


def _binned_table(df, metadata, bins: int) -> np.ndarray:
    """(n, C) integer bin of every cell: category code (missing its own), or one of ``bins``
    equal-width bins of the public ``[lower, upper]`` (missing: bin ``bins``)."""
    from .tabular.encoding import encode_table

    codes = encode_table(df, metadata)
    out = np.empty(codes.shape, dtype=np.int64)
    for j, spec in enumerate(metadata.columns):
        if not spec.is_numeric:
            out[:, j] = codes[:, j]
            continue
        u = (codes[:, j] - spec.lower) / (spec.upper - spec.lower)
        b = np.minimum(np.floor(np.nan_to_num(u, nan=0.0) * bins), bins - 1).astype(np.int64)
        out[:, j] = np.where(np.isnan(codes[:, j]), bins, b)
    return out


def _tvd_of_keys(a: np.ndarray, b: np.ndarray) -> float:
    keys, inverse = np.unique(np.concatenate([a, b]), return_inverse=True)
    p = np.bincount(inverse[: len(a)], minlength=len(keys)) / len(a)
    q = np.bincount(inverse[len(a) :], minlength=len(keys)) / len(b)
    return 0.5 * float(np.abs(p - q).sum())


def marginal_tvd(real, synthetic, metadata, way: int = 1, bins: int = 10) -> float:
    """Mean total variation distance of the ``way``-way marginals (1 or 2) of two tables.

    TVD(P, Q) = ½ Σ_v |P(v) − Q(v)| over the cells v of a column (1-way) or a
    column pair (2-way), averaged over all columns / pairs; numeric columns are
    cut into ``bins`` equal-width bins of their public domain, missing values
    are a cell of their own. ``metadata`` is a
    :class:`~privevo.tabular.TableMetadata`. Not DP (an evaluation tool).
    """
    if way not in (1, 2):
        raise ValueError(f"way must be 1 or 2, got {way!r}")
    bins = check_positive_int(bins, "bins")
    a, b = _binned_table(real, metadata, bins), _binned_table(synthetic, metadata, bins)
    if way == 1:
        return float(np.mean([_tvd_of_keys(a[:, j], b[:, j]) for j in range(a.shape[1])]))
    if a.shape[1] < 2:
        raise ValueError("2-way marginals need at least 2 columns")
    width = int(max(a.max(), b.max())) + 1
    pairs = [(i, j) for i in range(a.shape[1]) for j in range(i + 1, a.shape[1])]
    return float(
        np.mean(
            [_tvd_of_keys(a[:, i] * width + a[:, j], b[:, i] * width + b[:, j]) for i, j in pairs]
        )
    )


def _quantile_binned(real, synthetic, metadata, q: int) -> tuple[np.ndarray, np.ndarray]:
    """Both tables' cells with each numeric column cut at the *real* table's q-quantiles."""
    from .tabular.encoding import encode_table

    a, b = encode_table(real, metadata), encode_table(synthetic, metadata)
    out_a, out_b = np.empty(a.shape, np.int64), np.empty(b.shape, np.int64)
    for j, spec in enumerate(metadata.columns):
        if not spec.is_numeric:
            out_a[:, j], out_b[:, j] = a[:, j], b[:, j]
            continue
        present = a[~np.isnan(a[:, j]), j]
        edges = np.unique(np.quantile(present, np.arange(1, q) / q)) if len(present) else []
        for src, dst in ((a, out_a), (b, out_b)):
            cell = np.searchsorted(edges, src[:, j], side="right")
            dst[:, j] = np.where(np.isnan(src[:, j]), len(edges) + 1, cell)
    return out_a, out_b


def quantile_tvd(real, synthetic, metadata, way: int = 2, q: int = 10) -> float:
    """Mean TVD of all ``way``-way marginals (1, 2 or 3) with numeric columns cut at the
    real table's own ``q``-quantiles (deciles by default; ties merged, missing its own cell).

    Unlike :func:`marginal_tvd` on the public bins, it sees where the values lie inside
    a coarse bin. An evaluation metric on the real table, not DP and never published.
    """
    from itertools import combinations

    if way not in (1, 2, 3):
        raise ValueError(f"way must be 1, 2 or 3, got {way!r}")
    q = check_positive_int(q, "q", minimum=2)
    a, b = _quantile_binned(real, synthetic, metadata, q)
    if a.shape[1] < way:
        raise ValueError(f"{way}-way marginals need at least {way} columns")
    width = int(max(a.max(), b.max())) + 1

    def key(t, cols):
        out = np.zeros(len(t), np.int64)
        for c in cols:
            out = out * width + t[:, c]
        return out

    tvds = [_tvd_of_keys(key(a, c), key(b, c)) for c in combinations(range(a.shape[1]), way)]
    return float(np.mean(tvds))


def numeric_errors(real, synthetic, metadata) -> dict:
    """Per numeric column: ``w1_sd`` (1-D Wasserstein-1 / the real sd), ``median`` and
    ``mean`` (relative errors (synthetic − real)/|real|, signed; divided by the real sd
    where the real statistic is 0) and ``median_sd`` ((synthetic − real median)/the real
    sd: the median's error where a median near 0 makes the relative one ill-conditioned),
    over present values.
    Not DP (an evaluation tool)."""
    from scipy.stats import wasserstein_distance

    from .tabular.encoding import encode_table

    a, b = encode_table(real, metadata), encode_table(synthetic, metadata)
    out = {}
    for j, spec in enumerate(metadata.columns):
        if not spec.is_numeric:
            continue
        x, y = a[~np.isnan(a[:, j]), j], b[~np.isnan(b[:, j]), j]
        if len(x) == 0 or len(y) == 0:
            continue
        sd = float(np.std(x)) or 1.0
        out[spec.name] = {
            "w1_sd": float(wasserstein_distance(x, y)) / sd,
            "median": _relative(np.median(y), np.median(x), sd),
            "median_sd": float(np.median(y) - np.median(x)) / sd,
            "mean": _relative(np.mean(y), np.mean(x), sd),
        }
    return out


def _relative(value: float, reference: float, scale: float) -> float:
    """(value − reference)/|reference|; a zero reference is scaled by ``scale`` (the sd)."""
    return float((value - reference) / (abs(reference) or scale))


def downstream_accuracy(
    synthetic, real_train, real_test, target: str, metadata, classifier=None
) -> dict:
    """Train on synthetic rows, test on held-out real rows; beside it, the same trained on real.

    Features: numeric columns scaled to [0, 1] by their public domain, the
    others one-hot (:class:`~privevo.tabular.TableEmbedding`, missing values
    included). Default classifier: scikit-learn's
    ``HistGradientBoostingClassifier(random_state=0)``. Returns
    ``{"synthetic": acc, "real": acc, "majority": acc}`` (``majority``: always
    predict the test set's most frequent class), and ``"synthetic_auc"``, ``"real_auc"``:
    ROC AUC of the predicted probabilities (one-vs-rest macro average for more than two
    classes; 0.5 for a constant prediction). Not DP (an evaluation tool).
    """
    from sklearn.base import clone
    from sklearn.ensemble import HistGradientBoostingClassifier

    from .tabular.encoding import TableEmbedding, encode_table

    if target not in metadata.names or metadata[target].is_numeric:
        raise ValueError(
            f"target {target!r} must be a categorical or boolean column of the metadata"
        )
    j = metadata.names.index(target)
    features = TableEmbedding(
        type(metadata)(tuple(c for c in metadata.columns if c.name != target))
    )
    keep = [c for c in range(len(metadata.columns)) if c != j]

    def xy(df):
        codes = encode_table(df, metadata)
        return features.embed(codes[:, keep]), codes[:, j].astype(np.int64)

    model = classifier if classifier is not None else HistGradientBoostingClassifier(random_state=0)
    x_test, y_test = xy(real_test)
    scores = {}
    for name, train in (("synthetic", synthetic), ("real", real_train)):
        x, y = xy(train)
        if len(np.unique(y)) < 2:  # one class only: the constant prediction
            scores[name] = float(np.mean(y_test == y[0]))
            scores[f"{name}_auc"] = 0.5
            continue
        fitted = clone(model).fit(x, y)
        scores[name] = float(np.mean(fitted.predict(x_test) == y_test))
        scores[f"{name}_auc"] = _auc(fitted, x_test, y_test)
    scores["majority"] = float(np.max(np.bincount(y_test)) / len(y_test))
    return scores


def _auc(model, x_test: np.ndarray, y_test: np.ndarray) -> float:
    """ROC AUC of ``model``'s probabilities on the test rows (classes it never saw score 0)."""
    from sklearn.metrics import roc_auc_score

    proba = model.predict_proba(x_test)
    classes = np.unique(y_test)
    if len(classes) < 2:
        return math.nan
    full = np.zeros((len(x_test), int(max(classes.max(), model.classes_.max())) + 1))
    full[:, model.classes_.astype(np.int64)] = proba
    if len(classes) == 2:
        return float(roc_auc_score(y_test == classes[1], full[:, classes[1]]))
    scores = full[:, classes]
    scores = scores / np.maximum(scores.sum(axis=1, keepdims=True), 1e-300)
    return float(roc_auc_score(y_test, scores, multi_class="ovr", labels=classes))
