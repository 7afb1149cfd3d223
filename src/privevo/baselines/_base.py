"""Shared estimator plumbing of the baselines: input checks, public domain, predict/score."""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin

from .. import accounting
from .._validation import (
    check_delta,
    check_epsilon,
    check_points,
    check_positive_int,
    check_random_state,
    too_many_clusters,
)
from ..adjacency import check_adjacency
from ..distances import nearest_distances
from ..metrics import labels_and_inertia
from ..private import public_domain


class BaselineKMeans(ClusterMixin, BaseEstimator):
    """Base class: subclasses implement ``_fit_centers(X, lo, hi, n, rng) -> centers``."""

    def fit(self, X, y=None):
        X = check_points(X, "X", min_rows=2)
        k = check_positive_int(self.n_clusters, "n_clusters")
        if k > len(X):
            raise too_many_clusters(k)
        lo, hi = self._box(X)
        rng = check_random_state(self.random_state)
        self.cluster_centers_ = self._fit_centers(np.clip(X, lo, hi), lo, hi, k, rng)
        self.labels_, self.inertia_ = labels_and_inertia(X, self.cluster_centers_)
        return self

    def predict(self, X) -> np.ndarray:
        return nearest_distances(check_points(X, "X"), self.cluster_centers_)[1]

    def score(self, X, y=None) -> float:
        return -float(nearest_distances(check_points(X, "X"), self.cluster_centers_)[0].sum())

    def _box(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Public per-feature box: ``bounds``, the cube around the ``radius`` ball, or (warned) the
        data's."""
        domain = public_domain(
            X,
            radius=getattr(self, "radius", None),
            bounds=getattr(self, "bounds", None),
            stacklevel=4,
        )
        return domain.bounding_box()


class DPBaselineKMeans(BaselineKMeans):
    """A DP baseline with the common parameters: k, the (ε, δ) budget, the public domain, the
    adjacency, the seed.

    ``adjacency`` (docs/privacy.md, "Adjacency"): ``"add_remove"`` (default) releases a noisy
    row count for the iteration count and thresholds; under ``"replace"`` n is public (read as
    X's length, no release, the whole budget goes to the iterations) and every release is
    calibrated to its replace sensitivity.
    """

    def __init__(
        self,
        n_clusters: int = 8,
        *,
        epsilon: float = 1.0,
        delta=None,
        radius=None,
        bounds=None,
        adjacency: str = "add_remove",
        random_state=None,
    ):
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.delta = delta
        self.radius = radius
        self.bounds = bounds
        self.adjacency = adjacency
        self.random_state = random_state

    def _public_n(self, X: np.ndarray) -> int | None:
        """n where it is public (replace adjacency), else None: then a noisy count stands in."""
        return len(X) if check_adjacency(self.adjacency) == "replace" else None

    def _epsilon_delta(self, n_public: int | None = None) -> tuple[float, float]:
        """The checked budget; ``delta=None`` → :func:`~privevo.accounting.default_delta`
        (min(1e-6, 1/(10 n)) of a public n, else the fixed, refusable 1e-6)."""
        epsilon = check_epsilon(self.epsilon)
        if self.delta is not None:
            return epsilon, check_delta(self.delta)
        adjacency = check_adjacency(self.adjacency)
        return epsilon, accounting.default_delta(accounting.public_size(adjacency, n_public))
