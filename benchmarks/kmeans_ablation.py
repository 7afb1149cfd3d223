"""Where DPKMeans' budget goes: each release made exact in turn (a non-private ablation).

Protocol of ``benchmarks/kmeans_diffprivlib.py``: each set mapped from its
documented range onto [−1, 1]^d, ``bounds=(−1, 1)``, DPKMeans' defaults
(add/remove, default δ, the noisy count), excess loss = DP loss / k-means++
loss − 1, mean ± standard error over seeds. A row makes one release exact
(its σ set to ~0, everything else unchanged, the same seeds):

- ``count``: the noisy row count (population size, PE-means' count threshold);
- ``moment``: HDPE's noisy second moment (its PCA basis; d > 32 only);
- ``rounds``: every PE round's vote histogram;
- ``recover``: the recover step's sums and counts (and its shrinkage, which
  then trusts the exact means);
- ``all``: every release exact (what the plan gives without noise).

Exact releases are not private: this script measures, it is no estimator.

    python benchmarks/kmeans_ablation.py --seeds 10

``--paper`` runs the rows on ``benchmarks/kmeans.py``'s protocol instead (its 18 sets in the
unit ball, ``radius=1``, δ = n^−1.1, ε ∈ {0.25, …, 4}) and prints each set's area over the best
baseline's (that table's ``BEST_BASELINE``) and their mean, the table's headline ratio:

    python benchmarks/kmeans_ablation.py --paper --seeds 3 --rows none rounds recover all
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.cluster import KMeans

sys.path.insert(0, str(Path(__file__).resolve().parent))
import privevo.evolution as ev  # noqa: E402
import privevo.kmeans as km  # noqa: E402
from kmeans import BEST_BASELINE, EPSILONS, datasets  # noqa: E402
from kmeans_diffprivlib import raw_sets  # noqa: E402
from privevo import DPKMeans  # noqa: E402
from privevo.metrics import area_under_curve, kmeans_loss  # noqa: E402

SETS = ("optdigits", "satimage", "penbased", "letter")
ROWS = ("none", "count", "moment", "rounds", "recover", "all")
TINY = 1e-9


@contextlib.contextmanager
def exact(parts: set[str]):
    """Patch the named releases of ``privevo.kmeans`` to σ ≈ 0 for the duration."""
    saved = {
        name: getattr(km, name)
        for name in ("noisy_count", "noisy_second_moment", "recover_noise", "PrivateEvolution")
    }
    if "count" in parts:
        km.noisy_count = lambda Z, sigma, rng, noise="gaussian": saved["noisy_count"](
            Z, TINY, rng, noise
        )
    if "moment" in parts:
        km.noisy_second_moment = lambda Z, sigma, rng, **kw: saved["noisy_second_moment"](
            Z, TINY, rng, **kw
        )
    if "recover" in parts:

        def recover_noise(*args, **kwargs):
            out = dict(saved["recover_noise"](*args, **kwargs))
            out["sigma_sum"] = out["sigma_count"] = TINY
            return out

        km.recover_noise = recover_noise
    if "rounds" in parts:

        def evolution(*args, **kwargs):
            kwargs["noise_scale"] = TINY
            return saved["PrivateEvolution"](*args, **kwargs)

        km.PrivateEvolution = evolution
    # near-zero σ's have no finite ε: the privacy reports of an ablated fit are skipped
    reports = (km.privacy_report, ev.privacy_report)
    if parts:
        km.privacy_report = ev.privacy_report = lambda **kw: {"warnings": []}
    try:
        yield
    finally:
        for name, value in saved.items():
            setattr(km, name, value)
        km.privacy_report, ev.privacy_report = reports


def fit_loss(X, k, seed, params, **setting) -> float:
    """One DPKMeans fit's k-means loss on X (``setting``: ε and the protocol's domain and δ)."""
    model = DPKMeans(k, random_state=seed, **setting, **params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X)
    return kmeans_loss(X, model.cluster_centers_)


def excess(X, k, eps, seeds, parts, floor, params) -> np.ndarray:
    with exact(parts):
        losses = [fit_loss(X, k, s, params, epsilon=eps, bounds=(-1.0, 1.0)) for s in range(seeds)]
    return np.array(losses) / floor - 1


def paper_ratio(X, k, seeds, parts, params) -> float:
    """Area under the mean loss over ε, the fits of ``benchmarks/kmeans.py``'s protocol."""
    setting = {"delta": len(X) ** -1.1, "radius": 1.0}
    with exact(parts):
        means = [
            np.mean([fit_loss(X, k, s, params, epsilon=eps, **setting) for s in range(seeds)])
            for eps in EPSILONS
        ]
    return area_under_curve(EPSILONS, means)


def paper_table(rows, seeds, params, names=None) -> None:
    """One line per row: each set's area / its best baseline's, and the mean over the sets."""
    data = {n: v for n, v in datasets(False).items() if names is None or n in names}
    print(f"area / best baseline (kmeans.py protocol), {seeds} seeds, params {params or 'default'}")
    print("| exact release | " + " | ".join(data) + " | mean |")
    print("|---|" + "---|" * (len(data) + 1))
    for row in rows:
        parts = set(ROWS[1:-1]) if row == "all" else ({row} if row != "none" else set())
        ratios = [
            paper_ratio(X, k, seeds, parts, params) / BEST_BASELINE[n] for n, (X, k) in data.items()
        ]
        cells = " | ".join(f"{r:.3f}" for r in ratios)
        print(f"| {row} | {cells} | {np.mean(ratios):.3f} |", flush=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", nargs="+", default=list(SETS))
    parser.add_argument("--rows", nargs="+", default=list(ROWS), choices=ROWS)
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--paper", action="store_true", help="benchmarks/kmeans.py's protocol")
    parser.add_argument(
        "--param",
        nargs="*",
        default=[],
        help="extra DPKMeans parameters as NAME=VALUE (Python literals), e.g. recover_share=0.5",
    )
    args = parser.parse_args(argv)
    import ast

    params = {p.split("=", 1)[0]: ast.literal_eval(p.split("=", 1)[1]) for p in args.param}
    tic = time.perf_counter()
    if args.paper:
        paper_table(args.rows, args.seeds, params, None if args.sets == list(SETS) else args.sets)
        print(f"\nwall {(time.perf_counter() - tic) / 60:.1f} min")
        return 0
    data = raw_sets(args.sets)
    names = [n for n in args.sets if n in data]
    print(f"excess loss at ε = {args.epsilon:g}, {args.seeds} seeds, params {params or 'default'}")
    print("| exact release | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    floors = {}
    for n in names:
        X, k = data[n]
        floors[n] = kmeans_loss(X, KMeans(k, n_init=10, random_state=0).fit(X).cluster_centers_)
    for row in args.rows:
        parts = set(ROWS[1:-1]) if row == "all" else ({row} if row != "none" else set())
        cells = []
        for name in names:
            X, k = data[name]
            if row == "moment" and X.shape[1] <= 32:
                cells.append("—")
                continue
            e = excess(X, k, args.epsilon, args.seeds, parts, floors[name], params)
            cells.append(f"{e.mean():.3f} ± {e.std(ddof=1) / np.sqrt(len(e)):.3f}")
        print(f"| {row} | " + " | ".join(cells) + " |", flush=True)
    print(f"\nwall {(time.perf_counter() - tic) / 60:.1f} min")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
