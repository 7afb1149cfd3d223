"""Selection variants tried against PE-means' cluster loss with many clusters (none adopted).

With many clusters and many rounds, PE-means' noisy rounds merge clusters
after the discovery phase (``--coverage`` prints, per round, how many true
clusters of blobs k=64 d=64 have a nearest selected centre). Three
post-processing variants of :class:`privevo.selection.WeightedKMeans`, each
compared with the default on the same seeds (areas under loss-vs-ε, as in
``benchmarks/kmeans.py``):

- ``warm``: the parents are one more start of the weighted k-means;
- ``family``: each parent family's thresholded weights are rescaled to the
  family's unbiased noisy total (parent + its L variations);
- ``guard``: a family whose noisy total exceeds 3σ√(L+1) but owns no centre
  takes one from a family that owns two.

    python benchmarks/kmeans_selection_variants.py --coverage
    python benchmarks/kmeans_selection_variants.py --seeds 2
"""

from __future__ import annotations

import argparse
from unittest import mock

import numpy as np

from kmeans import EPSILONS, datasets, paper_hdpe
from privevo import DPKMeans
from privevo.metrics import area_under_curve, kmeans_loss, nearest_distances
from privevo.selection import Selection
from privevo.selection.weighted_kmeans import WeightedKMeans, pe_means_counts, signal_to_noise

SETS = (
    "blobs k=64 d=64",
    "iris",
    "letter",
    "blobs k=64 d=16",
    "penbased",
    "blobs k=16 d=16",
    "digits",
)


def families(n_candidates: int, k: int) -> np.ndarray | None:
    """Family index of every candidate (the loop puts k parents first, then L variations each)."""
    if n_candidates % k or n_candidates <= k:
        return None
    return np.concatenate([np.arange(k), np.repeat(np.arange(k), n_candidates // k - 1)])


class WarmStart(WeightedKMeans):
    def __init__(self, n_init: int = 3):
        super().__init__(n_init=n_init, warm_start=True)


class FamilyMass(WeightedKMeans):
    """Thresholded weights rescaled so that each family carries its unbiased noisy total."""

    def select(self, candidates, noisy_counts, context):
        k, noisy = context.n_select, np.asarray(noisy_counts, dtype=np.float64)
        fam = families(len(candidates), k) if context.iteration > 0 else None
        if fam is None:
            return super().select(candidates, noisy_counts, context)
        weights, _ = pe_means_counts(noisy, context.n_private)
        total = np.maximum(np.bincount(fam, weights=noisy, minlength=k), 0.0)
        kept = np.bincount(fam, weights=weights, minlength=k)
        scaled = weights * np.where(kept > 0, total / np.where(kept > 0, kept, 1.0), 0.0)[fam]
        orphan = (kept <= 0) & (total > 0)
        scaled[:k][orphan] = total[orphan]
        variations = self._next_variations(
            len(candidates), k, signal_to_noise(weights, context.sigma)
        )  # SNR of the plain weights
        points = self._centers(candidates, noisy, scaled, k, context.rng)
        return Selection(points=points, indices=None, weights=None, variations_per_point=variations)


class Guard(WeightedKMeans):
    """A clearly voted-for family that lost its centre takes one from a family holding two."""

    def select(self, candidates, noisy_counts, context):
        sel = super().select(candidates, noisy_counts, context)
        k, noisy = context.n_select, np.asarray(noisy_counts, dtype=np.float64)
        fam = families(len(candidates), k) if context.iteration > 0 else None
        if fam is None:
            return sel
        L = len(candidates) // k - 1
        significant = np.bincount(fam, weights=noisy, minlength=k) > 3.0 * context.sigma * np.sqrt(
            L + 1
        )
        centers, parents = sel.points.copy(), candidates[:k]
        owner = nearest_distances(centers, parents)[1]
        owned = np.bincount(owner, minlength=k)
        weights, _ = pe_means_counts(noisy, context.n_private)
        for j in np.flatnonzero(significant & (owned == 0)):
            crowded = np.flatnonzero(owned[owner] >= 2)
            if crowded.size == 0:
                break
            d2 = ((centers[crowded, None, :] - centers[None, :, :]) ** 2).sum(-1)
            d2[np.arange(len(crowded)), crowded] = np.inf
            d2[owner[crowded][:, None] != owner[None, :]] = np.inf
            free = crowded[int(np.argmin(d2.min(axis=1)))]
            members = np.flatnonzero(fam == j)
            w = weights[members]
            centers[free] = w @ candidates[members] / w.sum() if w.sum() > 0 else parents[j]
            owned[owner[free]] -= 1
            owner[free], owned[j] = j, owned[j] + 1
        return type(sel)(
            points=centers,
            indices=None,
            weights=None,
            variations_per_point=sel.variations_per_point,
            info=sel.info,
        )


VARIANTS = {"default": WeightedKMeans, "warm": WarmStart, "family": FamilyMass, "guard": Guard}


def fit(selector_cls, X, k: int, eps: float, seed: int, iterations=None) -> DPKMeans:
    """DPKMeans with its selector class swapped (it builds ``WeightedKMeans(n_init=...)``).

    With the paper's settings (HDPE at d' = 16, its T), under which these variants were tried.
    """
    params = paper_hdpe(eps, X.shape[1], iterations)
    with mock.patch("privevo.kmeans.WeightedKMeans", selector_cls):
        return DPKMeans(
            k, epsilon=eps, delta=len(X) ** -1.1, radius=1.0, random_state=seed, **params
        ).fit(X)


def coverage(seed: int) -> None:
    """Per round: true clusters of blobs k=64 d=64 with a nearest selected centre (in HDPE's
    projection)."""
    from sklearn.datasets import make_blobs

    from kmeans import unit_ball

    raw, y = make_blobs(n_samples=20000, n_features=64, centers=64, random_state=1)
    X = unit_ball(raw)
    basis = np.linalg.qr(np.random.default_rng(seed).standard_normal((64, 16)))[
        0
    ]  # DPKMeans' first draw
    true = np.array([(X @ basis)[y == j].mean(axis=0) for j in range(64)])
    for name in ("default", "warm"):
        for eps, T in ((1.0, None), (4.0, None), (4.0, 16)):
            est = fit(VARIANTS[name], X, 64, eps, seed, T)
            hit = [
                len(set(nearest_distances(r.selected_points, true)[1]))
                for r in est.evolution_.history_
            ]
            print(
                f"{name:8s} ε={eps:g} T={est.n_iter_:3d}: loss "
                f"{kmeans_loss(X, est.cluster_centers_):.4f}, "
                f"coverage per round {hit}",
                flush=True,
            )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument(
        "--seed-offset", type=int, default=200, help="first seed (the main sweep uses 0–49)"
    )
    parser.add_argument(
        "--coverage", action="store_true", help="only the per-round coverage diagnostic (seed 0)"
    )
    args = parser.parse_args(argv)
    if args.coverage:
        coverage(0)
        return 0
    data = datasets(quick=False)
    seeds = range(args.seed_offset, args.seed_offset + args.seeds)
    print(
        f"Area under the mean normalised-loss-vs-ε curve, {args.seeds} seeds from "
        f"{args.seed_offset}.\n"
    )
    print("| data set | " + " | ".join(VARIANTS) + " |")
    print("|---|" + "---|" * len(VARIANTS))
    for name in SETS:
        if name not in data:
            continue
        X, k = data[name]
        areas = [
            area_under_curve(
                EPSILONS,
                [
                    np.mean([kmeans_loss(X, fit(cls, X, k, e, s).cluster_centers_) for s in seeds])
                    for e in EPSILONS
                ],
            )
            for cls in VARIANTS.values()
        ]
        print(f"| {name} | " + " | ".join(f"{a:.4f}" for a in areas) + " |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
