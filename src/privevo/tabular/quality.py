"""Quality of a synthetic table against the real one: marginal TVDs on the public bins and on the
real table's quantiles, per-column numeric errors, downstream accuracy (docs/tabular.md).

Evaluation tools for the data owner (exported by :mod:`privevo.evaluation`): they read the
private table, their outputs are *not* differentially private and never part of a release.
"""

from __future__ import annotations

import math

import numpy as np

from .._validation import check_positive_int
from .encoding import TableEmbedding, encode_table

__all__ = ["marginal_tvd", "quantile_tvd", "numeric_errors", "downstream_accuracy"]


def _binned_table(df, metadata, bins: int) -> np.ndarray:
    """(n, C) integer bin of every cell: category code (missing its own), or one of ``bins``
    equal-width bins of the public ``[lower, upper]`` (missing: bin ``bins``)."""

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
