"""The non-private floor: scikit-learn k-means++ with ``n_init=10``."""

from __future__ import annotations

from sklearn.cluster import KMeans

from ._base import BaselineKMeans


class NonPrivateKMeans(BaselineKMeans):
    """scikit-learn ``KMeans`` (k-means++, ``n_init``); no privacy at all."""

    def __init__(self, n_clusters: int = 8, *, n_init: int = 10, random_state=None):
        self.n_clusters = n_clusters
        self.n_init = n_init
        self.random_state = random_state

    def _box(self, X):
        return X.min(axis=0), X.max(axis=0)

    def _fit_centers(self, X, lo, hi, k, rng):
        seed = int(rng.integers(2**31 - 1))
        return KMeans(k, n_init=self.n_init, random_state=seed).fit(X).cluster_centers_
