"""Where PE-means stops without noise, and what one Lloyd step adds (why DPKMeans recovers).

A point votes for its nearest candidate, and PE-means' Lévy candidates sit
within a few γ of their parent, so votes carry direction more than distance:
the weighted k-means of the voted candidates settles nearer a spatial median
of each cell than its mean. This script runs PE-means with practically no
noise (ε = 10⁴, T = 64, ``recover_share=0``: the paper's algorithm) and
compares its normalised loss with one exact Lloyd step from its centres,
Lloyd to convergence from them, and scikit-learn's k-means++.

    python benchmarks/pe_means_bias.py --seeds 3
"""

from __future__ import annotations

import argparse

import numpy as np
from sklearn.cluster import KMeans

from kmeans import datasets
from privevo import DPKMeans
from privevo.metrics import kmeans_loss, nearest_distances

SETS = ("iris", "blobs k=16 d=16", "penbased", "letter")


def lloyd_step(X: np.ndarray, centers: np.ndarray) -> np.ndarray:
    """Each centre moves to the mean of its Voronoi cell (empty cells stay)."""
    labels = nearest_distances(X, centers)[1]
    return np.array(
        [X[labels == j].mean(axis=0) if np.any(labels == j) else c for j, c in enumerate(centers)]
    )


def row(X: np.ndarray, k: int, seed: int) -> list[float]:
    pe = (
        DPKMeans(
            k,
            epsilon=1e4,
            delta=len(X) ** -1.1,
            radius=1.0,
            iterations=64,
            recover_share=0.0,
            random_state=seed,
        )
        .fit(X)
        .cluster_centers_
    )
    local = KMeans(k, init=pe, n_init=1, random_state=seed).fit(X).cluster_centers_
    return [
        kmeans_loss(X, pe),
        kmeans_loss(X, lloyd_step(X, pe)),
        kmeans_loss(X, local),
        kmeans_loss(X, KMeans(k, n_init=1, random_state=seed).fit(X).cluster_centers_),
        kmeans_loss(X, KMeans(k, n_init=10, random_state=seed).fit(X).cluster_centers_),
    ]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args(argv)
    data = datasets(quick=False)
    print(
        f"Mean normalised loss over {args.seeds} seeds; PE-means at ε = 1e4, T = 64, no recover "
        "step.\n"
    )
    print(
        "| data set | PE-means | + one Lloyd step | + Lloyd to convergence | k-means++ (1 init) | "
        "k-means++ (10 inits) |"
    )
    print("|---|---|---|---|---|---|")
    for name in SETS:
        if name not in data:
            continue
        X, k = data[name]
        mean = np.mean([row(X, k, seed) for seed in range(args.seeds)], axis=0)
        print(f"| {name} | " + " | ".join(f"{v:.4f}" for v in mean) + " |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
