"""The evaluation door: the one place outside :mod:`privevo.private` that reads private rows.

Metrics and plots compare private data with what a run released, for the
data owner. What they compute is **not differentially private** and is never
part of a release; reports that carry such values say so (``EVALUATION_NOTE``),
and published artefacts (reports, ``--json``, logs) never hold them. The
estimators' ``labels_`` and ``inertia_`` (scikit-learn's conventions) are
computed here for the same reason.
"""

from __future__ import annotations

from .metrics import (
    EVALUATION_NOTE,
    cluster_coverage,
    exact_w1,
    intrinsic_dimension,
    kmeans_loss,
    knn_precision_recall,
    labels_and_inertia,
    max_coverage_distance,
    nearest_distances,
    sinkhorn_w1,
)
from .tabular.quality import downstream_accuracy, marginal_tvd, numeric_errors, quantile_tvd

__all__ = [
    "EVALUATION_NOTE",
    "cluster_coverage",
    "downstream_accuracy",
    "exact_w1",
    "intrinsic_dimension",
    "kmeans_loss",
    "knn_precision_recall",
    "labels_and_inertia",
    "marginal_tvd",
    "max_coverage_distance",
    "nearest_distances",
    "numeric_errors",
    "plot_centers",
    "quantile_tvd",
    "sinkhorn_w1",
]


def plot_centers(X, centers, **kwargs):
    """:func:`privevo.plots.plot_centers`: private points under the centres (a figure to keep
    private)."""
    from .plots import plot_centers as plot

    return plot(X, centers, **kwargs)
