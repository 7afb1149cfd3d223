"""Shared estimator plumbing of the baselines: input checks, public domain, predict/score."""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin

from .._validation import check_points, check_positive_int, check_positive_real, check_random_state
from ..exceptions import PrivacyLeakWarning
from ..metrics import nearest_distances


class BaselineKMeans(ClusterMixin, BaseEstimator):
    """Base class: subclasses implement ``_fit_centers(X, lo, hi, n, rng) -> centers``."""

    def fit(self, X, y=None):
        X = check_points(X, "X", min_rows=2)
        k = check_positive_int(self.n_clusters, "n_clusters")
        if k > len(X):
            raise ValueError(f"n_clusters={k} must be <= n_samples={len(X)}; lower n_clusters")
        lo, hi = self._box(X)
        rng = check_random_state(self.random_state)
        self.cluster_centers_ = self._fit_centers(np.clip(X, lo, hi), lo, hi, k, rng)
        dist, self.labels_ = nearest_distances(X, self.cluster_centers_)
        self.inertia_ = float(dist.sum())
        return self

    def predict(self, X) -> np.ndarray:
        return nearest_distances(check_points(X, "X"), self.cluster_centers_)[1]

    def score(self, X, y=None) -> float:
        return -float(nearest_distances(check_points(X, "X"), self.cluster_centers_)[0].sum())

    def _box(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Public per-feature box: from ``bounds``, or the cube around the ``radius`` ball."""
        d = X.shape[1]
        radius, bounds = getattr(self, "radius", None), getattr(self, "bounds", None)
        if bounds is not None:
            lo, hi = (np.broadcast_to(np.asarray(b, dtype=float), (d,)).copy() for b in bounds)
            if not (lo < hi).all():
                raise ValueError("bounds must have lo < hi for every feature")
            return lo, hi
        if radius is not None:
            r = check_positive_real(radius, "radius")
            return np.full(d, -r), np.full(d, r)
        warnings.warn("no radius/bounds: using the data's range, the result is NOT DP", PrivacyLeakWarning, stacklevel=3)
        lo, hi = X.min(axis=0), X.max(axis=0)
        return lo, np.where(hi > lo, hi, lo + 1.0)


class DPBaselineKMeans(BaselineKMeans):
    """A DP baseline with the common parameters: k, the (ε, δ) budget, the public domain, the seed."""

    def __init__(self, n_clusters: int = 8, *, epsilon: float = 1.0, delta=None, radius=None, bounds=None, random_state=None):
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.delta = delta
        self.radius = radius
        self.bounds = bounds
        self.random_state = random_state
