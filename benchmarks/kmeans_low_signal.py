"""DPKMeans where the signal is weak, today's code beside an older revision's, in one run.

Three checks of the low-signal rule (``privevo.kmeans.shrunk_means``):

- **small cluster**: the CLI's 2-D toy (400 rows, 90 % at (−1, 0) and 10 % — 40 rows — at
  (1, 0), radius 2, ε = 1): share of seeds whose two centres have x rounding to −1 and 1;
- **toy**: scikit-learn's ``check_clustering`` data at ε = 2 (no public bound, so the data's
  range, as the check runs it): seeds whose labels on its 55-row set are not all of 0..j,
  and the mean adjusted Rand index on its 50-row set;
- **iris, wine**: normalised loss (DP / k-means++) on [−1, 1]^d, ``benchmarks/
  kmeans_diffprivlib.py``'s protocol, at small ε.

The older revision's package is imported beside today's (``kmeans_fit_time.old_dpkmeans``).

    python benchmarks/kmeans_low_signal.py --rev 7bafff5 --seeds 40
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.cluster import KMeans
from sklearn.datasets import make_blobs
from sklearn.metrics import adjusted_rand_score
from sklearn.preprocessing import StandardScaler
from sklearn.utils import shuffle

sys.path.insert(0, str(Path(__file__).resolve().parent))
from kmeans_diffprivlib import raw_sets  # noqa: E402
from kmeans_fit_time import old_dpkmeans  # noqa: E402
from privevo import DPKMeans  # noqa: E402
from privevo.demo import mixture_2d  # noqa: E402
from privevo.metrics import kmeans_loss  # noqa: E402

EPSILONS = (0.1, 0.5, 1.0)


def toy_sets() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """scikit-learn's check_clustering data: (X 50 rows, its labels, X with 5 uniform rows)."""
    X, y = make_blobs(n_samples=50, random_state=1)
    X, y = shuffle(X, y, random_state=7)
    X = StandardScaler().fit_transform(X)
    noise = np.random.RandomState(7).uniform(low=-3, high=3, size=(5, 2))
    return X, y, np.concatenate([X, noise])


def small_cluster_found(cls, seeds: int) -> int:
    X = mixture_2d(400, np.random.default_rng(0))[0]
    found = 0
    for seed in range(seeds):
        centers = cls(2, epsilon=1.0, radius=2.0, random_state=seed).fit(X).cluster_centers_
        found += sorted(np.round(centers[:, 0]).tolist()) == [-1.0, 1.0]
    return found


def toy_checks(cls, seeds: int) -> tuple[int, float]:
    """(seeds whose 55-row labels are not contiguous from 0, mean ARI on the 50 rows)."""
    X, y, X_noise = toy_sets()
    gaps, ari = 0, []
    for seed in range(seeds):
        used = np.unique(cls(3, epsilon=2.0, random_state=seed).fit(X_noise).labels_)
        gaps += not np.array_equal(used, np.arange(len(used)))
        ari.append(adjusted_rand_score(y, cls(3, epsilon=2.0, random_state=seed).fit(X).labels_))
    return gaps, float(np.mean(ari))


def small_set_losses(cls, sets: dict, seeds: int) -> list[str]:
    cells = []
    for X, k in sets.values():
        floor = kmeans_loss(X, KMeans(k, n_init=10, random_state=0).fit(X).cluster_centers_)
        for eps in EPSILONS:
            losses = [
                kmeans_loss(
                    X,
                    cls(k, epsilon=eps, bounds=(-1.0, 1.0), random_state=s).fit(X).cluster_centers_,
                )
                / floor
                for s in range(seeds)
            ]
            se = np.std(losses, ddof=1) / np.sqrt(seeds)
            cells.append(f"{np.mean(losses):.2f} ± {se:.2f}")
    return cells


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rev", default="HEAD", help="git revision to compare with")
    parser.add_argument("--seeds", type=int, default=40, help="toy seeds (small cluster: 2x)")
    parser.add_argument("--loss-seeds", type=int, default=10, help="seeds per iris/wine cell")
    args = parser.parse_args(argv)
    tic = time.perf_counter()
    warnings.simplefilter("ignore")
    sets = raw_sets(["iris", "wine"])
    head = ["revision", "small cluster found", "toy labels not contiguous", "toy ARI"] + [
        f"{name} ε={eps:g}" for name in sets for eps in EPSILONS
    ]
    print("| " + " | ".join(head) + " |\n|" + "---|" * len(head))
    for name, cls in ((args.rev, old_dpkmeans(args.rev)), ("today", DPKMeans)):
        found = small_cluster_found(cls, 2 * args.seeds)
        gaps, ari = toy_checks(cls, args.seeds)
        cells = [
            name,
            f"{found}/{2 * args.seeds}",
            f"{gaps}/{args.seeds}",
            f"{ari:.3f}",
            *small_set_losses(cls, sets, args.loss_seeds),
        ]
        print("| " + " | ".join(cells) + " |", flush=True)
    print(f"\nseeds 0..n−1; wall {(time.perf_counter() - tic) / 60:.1f} min")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
