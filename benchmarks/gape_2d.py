"""The GAPE paper's 2-D experiment and harder mixtures, selectors side by side.

Settings (n = 2000, m = 3, 20 rounds, δ = 1e-5, start (0,−2), (0,0), (0,2)):

- ``paper``: 0.9·N([−1,0], 0.1²I) + 0.1·N([1,0], 0.1²I), Gaussian variation s = 0.1,
  2 per point. Covered = a final point within 0.3 of (1, 0).
- ``mix3``: clusters 60/30/10 at (−1,0), (1,0), (0,1) (σ = 0.1). Covered = every
  cluster has a final point within 0.3.
- ``far``: 0.9·N([−1,0]) + 0.1·N([2.5,0]): the small cluster is 2.5 from the start.

Variants: rank, subsample, gape (faithful: paper threshold, Gaussian s = 0.1) and
gape+ (post-processing only: neighbourhood-summed threshold, population refill,
multi-scale variation). R for every GAPE run is a public lower bound on the cluster
separation, by default the smallest distance between the design's cluster centres (public
knowledge of the design; nothing is read off the private sample); ``--R`` overrides it.

    python benchmarks/gape_2d.py --setting paper --seeds 50
    python benchmarks/gape_2d.py --setting mix3 --seeds 50 --eps 4
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from privevo import PrivateEvolution
from privevo.selection import GAPE, Rank, Subsample
from privevo.variation import GaussianVariation, MultiScaleVariation

START = np.array([[0.0, -2.0], [0.0, 0.0], [0.0, 2.0]])
SETTINGS = {
    "paper": (np.array([[-1.0, 0.0], [1.0, 0.0]]), np.array([0.9, 0.1]), [1]),
    "mix3": (np.array([[-1.0, 0.0], [1.0, 0.0], [0.0, 1.0]]), np.array([0.6, 0.3, 0.1]), [0, 1, 2]),
    "far": (np.array([[-1.0, 0.0], [2.5, 0.0]]), np.array([0.9, 0.1]), [1]),
}
FIG_DIR = Path(__file__).parent / "figures"


def mixture(setting: str, rng: np.random.Generator, n: int = 2000):
    centres, weights, _ = SETTINGS[setting]
    label = rng.choice(len(weights), size=n, p=weights)
    return centres[label] + 0.1 * rng.standard_normal((n, 2))


def separation(setting: str) -> float:
    """The default public R: the smallest distance between the design's cluster centres."""
    c = SETTINGS[setting][0]
    d = np.linalg.norm(c[:, None] - c[None], axis=2)
    return float(d[np.triu_indices(len(c), 1)].min())


def variants(R: float) -> dict:
    """name → (selector, variation API)."""

    def gauss():
        return GaussianVariation(0.1, 2)

    return {
        "rank": lambda: (Rank(), gauss()),
        "subsample": lambda: (Subsample(), gauss()),
        "gape": lambda: (GAPE(R), gauss()),
        "gape+": lambda: (
            GAPE(R, aggregate="neighbourhood", refill=True),
            MultiScaleVariation(R, max_level=8),
        ),
    }


def run(
    setting: str, name: str, epsilon: float, seed: int, R: float | None = None
) -> PrivateEvolution:
    X = mixture(setting, np.random.default_rng(10_000 + seed))
    selector, variation = variants(R or separation(setting))[name]()
    pe = PrivateEvolution(
        START, variation, selector, 3, 20, epsilon, 1e-5, random_state=seed, keep_candidates=False
    )
    return pe.fit(X)


def covered(setting: str, synthetic: np.ndarray) -> bool:
    centres, _, targets = SETTINGS[setting]
    d = np.linalg.norm(centres[targets][:, None] - synthetic[None], axis=2).min(axis=1)
    return bool((d <= 0.3).all())


def plot(setting: str, runs: dict, epsilon: float) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    FIG_DIR.mkdir(exist_ok=True)
    X = mixture(setting, np.random.default_rng(10_000))
    paths = []
    for name, pe in runs.items():
        fig, ax = plt.subplots(figsize=(4.6, 4.2))
        ax.scatter(X[:, 0], X[:, 1], s=2, c="0.8")
        for t, rec in enumerate(pe.history_):  # selected points of every round, coloured by round
            pts = rec.selected_points
            ax.scatter(
                pts[:, 0], pts[:, 1], s=14, color=plt.cm.viridis(t / max(1, len(pe.history_) - 1))
            )
        ax.scatter(
            pe.synthetic_[:, 0], pe.synthetic_[:, 1], s=120, marker="*", c="red", label="final"
        )
        ax.scatter(START[:, 0], START[:, 1], marker="x", c="k")
        ax.set_title(f"{name}, {setting}, ε={epsilon:g}, seed 0 (dark→light: rounds)", fontsize=9)
        ax.set_xlim(-2, 3)
        ax.set_ylim(-2.3, 2.3)
        out = FIG_DIR / f"gape_2d_{setting}_{name}.png"
        fig.savefig(out, dpi=90, bbox_inches="tight")
        plt.close(fig)
        paths.append(out)
    return paths


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--setting", choices=sorted(SETTINGS), default="paper")
    ap.add_argument("--seeds", type=int, default=50)
    ap.add_argument("--eps", type=float, nargs="+", default=[0.5, 1.0, 2.0, 4.0])
    ap.add_argument("--variants", nargs="+", default=list(variants(1.0)))
    ap.add_argument("--plot-eps", type=float, default=1.0)
    ap.add_argument(
        "--R",
        type=float,
        default=None,
        help="GAPE's public R (default: the design's centre separation)",
    )
    ap.add_argument("--plot-only", action="store_true", help="only redraw the trajectory plots")
    args = ap.parse_args()
    if args.plot_only:
        args.eps = []
    print(f"setting={args.setting}, R={args.R or separation(args.setting):.3g}, seeds={args.seeds}")
    share, secs = {}, {}
    for name in args.variants:
        for eps in args.eps:
            tic = time.perf_counter()
            hits = [
                covered(args.setting, run(args.setting, name, eps, s, args.R).synthetic_)
                for s in range(args.seeds)
            ]
            share[name, eps], secs[name] = (
                np.mean(hits),
                secs.get(name, 0.0) + time.perf_counter() - tic,
            )
    if args.eps:
        head = "| selector | " + " | ".join(f"ε={e:g}" for e in args.eps) + " | s / run |"
        print(head + "\n|" + "---|" * (len(args.eps) + 2))
        for name in args.variants:
            cells = " | ".join(f"{share[name, e]:.0%}" for e in args.eps)
            print(f"| {name} | {cells} | {secs[name] / (args.seeds * len(args.eps)):.3f} |")
        if "gape" in args.variants and "rank" in args.variants:
            gaps = ", ".join(
                f"ε={e:g}: {100 * (share['gape', e] - share['rank', e]):+.0f}" for e in args.eps
            )
            print(f"gape − rank (points): {gaps}")
    runs = {name: run(args.setting, name, args.plot_eps, 0, args.R) for name in args.variants}
    for p in plot(args.setting, runs, args.plot_eps):
        print("wrote", p)


if __name__ == "__main__":
    main()
