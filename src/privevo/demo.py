"""The built-in demo (``privevo demo``): bundled data only, no download.

Two experiments, each a table and plots:

1. DP k-means on scikit-learn's digits (1797 × 64, k = 10; the pixel range
   [0, 16] is public, so the bounds cost no privacy): privevo's ``DPKMeans``
   against the DPLloyd baseline and non-private k-means++, mean loss over
   seeds at ε ∈ {0.25, 0.5, 1, 2, 4}.
2. The GAPE paper's 2-D check: n = 2000 from 0.9·N([−1,0], 0.1²I) +
   0.1·N([1,0], 0.1²I); m = 3 starting at (0,−2), (0,0), (0,2); Gaussian
   variation s = 0.1, 2 per point; 20 rounds. Is the small cluster kept
   (a synthetic point within 0.3 of (1, 0))? GAPE vs rank (and subsample).
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

__all__ = ["mixture_2d", "run_demo", "format_table", "kmeans_experiment", "mixture_experiment"]

KMEANS_EPSILONS = (0.25, 0.5, 1.0, 2.0, 4.0)
MIXTURE_EPSILONS = (1.0, 4.0)
MIXTURE_START = np.array([[0.0, -2.0], [0.0, 0.0], [0.0, 2.0]])


def mixture_2d(
    n: int = 2000, rng: np.random.Generator | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """The GAPE paper's 2-D check: 0.9·N([−1,0], 0.1²I) + 0.1·N([1,0], 0.1²I); returns (X,
    centres)."""
    rng = rng or np.random.default_rng(0)
    centers = np.array([[-1.0, 0.0], [1.0, 0.0]])
    label = (rng.random(n) < 0.1).astype(int)
    return centers[label] + 0.1 * rng.standard_normal((n, 2)), centers


def run_demo(seed: int = 0, out_dir=None, progress: bool = False, quick: bool = False) -> dict:
    """Run both experiments; write PNGs to ``out_dir`` (None: no plots).

    Returns ``{"tables": [{"title", "rows", "note"}], "plots": [paths], "seconds"}``.
    ``quick`` uses fewer seeds and ε values (for tests).
    """
    tic = time.perf_counter()
    out = None if out_dir is None else Path(out_dir)
    kmeans = kmeans_experiment(
        seed,
        n_seeds=1 if quick else 3,
        epsilons=(0.5, 1.0) if quick else KMEANS_EPSILONS,
        progress=progress,
    )
    mixture = mixture_experiment(
        seed,
        n_seeds=2 if quick else 10,
        epsilons=(4.0,) if quick else MIXTURE_EPSILONS,
        progress=progress,
    )
    plots = [] if out is None else _write_plots(out, kmeans, mixture)
    return {
        "tables": [kmeans["table"], mixture["table"]],
        "plots": [str(p) for p in plots],
        "seconds": time.perf_counter() - tic,
    }


# -- experiment 1: DP k-means on digits ----------------------------------------------


DIGITS_N = 1797  # rows of scikit-learn's digits


def _kmeans_methods() -> dict:
    """name → factory(epsilon, seed) of an estimator with ``cluster_centers_``."""
    methods = {}
    try:
        from .kmeans import DPKMeans
    except ImportError:
        return methods
    # digits is published, so n is public: the PE-means paper's δ = n^-1.1, passed explicitly
    common = dict(delta=DIGITS_N**-1.1, bounds=(0.0, 16.0))
    methods["privevo DPKMeans"] = lambda eps, s: DPKMeans(10, epsilon=eps, random_state=s, **common)
    try:
        from .baselines import DPLloyd, FastLloyd
    except ImportError:
        return methods
    methods["DPLloyd (baseline)"] = lambda eps, s: DPLloyd(
        10, epsilon=eps, random_state=s, **common
    )
    methods["FastLloyd (baseline)"] = lambda eps, s: FastLloyd(
        10, epsilon=eps, random_state=s, **common
    )
    return methods


def kmeans_experiment(
    seed: int, n_seeds: int = 3, epsilons=KMEANS_EPSILONS, progress: bool = False
) -> dict:
    """Mean k-means loss Σ min‖x − c‖²/n on digits per method and ε."""
    from sklearn.cluster import KMeans
    from sklearn.datasets import load_digits

    from .metrics import area_under_curve, kmeans_loss

    X = load_digits().data
    floor = kmeans_loss(X, KMeans(10, n_init=3, random_state=seed).fit(X).cluster_centers_)
    methods = _kmeans_methods()
    jobs = [(name, eps, seed + s) for name in methods for eps in epsilons for s in range(n_seeds)]
    losses: dict[tuple, list] = {}
    spent: dict[str, float] = {}
    for name, eps, s in _bar(jobs, progress, "k-means runs"):
        model = methods[name](eps, s).fit(X)
        losses.setdefault((name, eps), []).append(kmeans_loss(X, model.cluster_centers_))
        if hasattr(model, "privacy_report_"):
            spent[name] = max(spent.get(name, 0.0), float(model.privacy_report_["epsilon"]) / eps)
    curves = {
        name: (
            list(epsilons),
            [float(np.mean(losses[name, e])) for e in epsilons],
            [float(np.std(losses[name, e])) for e in epsilons],
        )
        for name in methods
    }
    rows = [_loss_row(name, curve, floor, area_under_curve) for name, curve in curves.items()]
    rows.append(
        {
            "method": "k-means++ (non-private)",
            **{f"ε={e:g}": floor for e in epsilons},
            "area": floor * (max(epsilons) - min(epsilons)),
            "× non-private @ε=1": 1.0,
        }
    )
    note = (
        f"digits 1797×64, k=10, public bounds [0,16]; loss = Σ min‖x−c‖²/n, mean of {n_seeds} "
        "seed(s); "
        "area = trapezoid under loss-vs-ε; δ = n^-1.1 (DPLloyd: pure ε-DP). ε spent / ε asked (max "
        "over runs): " + ", ".join(f"{k} {v:.4f}" for k, v in spent.items())
    )
    if "privevo DPKMeans" not in methods:
        note += "\nDPKMeans not installed in this version (privevo.kmeans missing)."
    if "DPLloyd (baseline)" not in methods:
        note += "\nDPLloyd baseline not installed in this version (privevo.baselines missing)."
    return {
        "table": {"title": "DP k-means on sklearn digits (real data)", "rows": rows, "note": note},
        "curves": curves,
        "floor": floor,
    }


def _loss_row(name: str, curve, floor: float, area_under_curve) -> dict:
    eps, mean = curve[0], curve[1]
    row = {
        "method": name,
        **{f"ε={e:g}": m for e, m in zip(eps, mean)},
        "area": area_under_curve(eps, mean),
    }
    at_one = dict(zip(eps, mean)).get(1.0)
    row["× non-private @ε=1"] = at_one / floor if at_one is not None else float("nan")
    return row


# -- experiment 2: small cluster on the 2-D mixture ------------------------------------


def _mixture_selectors() -> dict:
    from .selection import Rank, Subsample

    selectors = {}
    try:
        from .selection.gape import GAPE

        selectors["gape"] = lambda: GAPE(R=2.0)
    except ImportError:
        pass
    selectors["rank"] = Rank
    selectors["subsample"] = Subsample
    return selectors


def _mixture_run(X: np.ndarray, selector, epsilon: float, seed: int):
    from .evolution import PrivateEvolution
    from .variation import GaussianVariation

    pe = PrivateEvolution(
        MIXTURE_START, GaussianVariation(0.1, 2), selector, 3, 20, epsilon, 1e-5, random_state=seed
    )
    return pe.fit(X)


def mixture_experiment(
    seed: int, n_seeds: int = 10, epsilons=MIXTURE_EPSILONS, progress: bool = False
) -> dict:
    """Share of seeds whose final 3 points cover the small cluster (within 0.3 of (1, 0))."""
    from . import metrics

    X, centers = mixture_2d(rng=np.random.default_rng(seed))
    selectors = _mixture_selectors()
    jobs = [(name, eps, seed + s) for name in selectors for eps in epsilons for s in range(n_seeds)]
    covered: dict[tuple, list] = {}
    w1: dict[tuple, list] = {}
    seconds: dict[str, float] = {}
    runs = {}
    for name, eps, s in _bar(jobs, progress, "2-D PE runs"):
        tic = time.perf_counter()
        pe = _mixture_run(X, selectors[name](), eps, s)
        seconds[name] = seconds.get(name, 0.0) + time.perf_counter() - tic
        covered.setdefault((name, eps), []).append(
            metrics.cluster_coverage(centers[1:], pe.synthetic_, 0.3)
        )
        w1.setdefault((name, eps), []).append(metrics.exact_w1(X, pe.synthetic_))
        if s == seed:
            runs[name, eps] = pe
    rows = [
        {
            "selector": name,
            "ε": eps,
            "small cluster kept": f"{np.mean(covered[name, eps]):.0%}",
            "W1 (mean)": float(np.mean(w1[name, eps])),
            "s / run": seconds[name] / (len(epsilons) * n_seeds),
        }
        for eps in epsilons
        for name in selectors
    ]
    note = (
        "n=2000, 90/10 mixture, m=3, T=20, δ=1e-5, Gaussian variation s=0.1 (GAPE: R=2, the public "
        "separation of the "
        f"two modes); share of {n_seeds} seeds with a final point within 0.3 of (1, 0)."
    )
    if "gape" not in selectors:
        note += "\nGAPE selector not installed in this version (privevo.selection.gape missing)."
    table = {
        "title": "Small-cluster check on the 2-D mixture (GAPE paper)",
        "rows": rows,
        "note": note,
    }
    return {"table": table, "runs": runs, "X": X, "centers": centers, "epsilons": epsilons}


# -- plots and formatting ----------------------------------------------------------------


def _write_plots(out: Path, kmeans: dict, mixture: dict) -> list[Path]:
    from .io import atomic_write
    from .plots import figure, plot_loss_vs_epsilon, plot_trajectories, plot_vote_histograms

    figures = {
        "kmeans_loss_vs_epsilon.png": plot_loss_vs_epsilon(
            kmeans["curves"],
            baseline=kmeans["floor"],
            ylabel="k-means loss Σmin‖x−c‖²/n",
            title="DP k-means on digits (k=10)",
        )
    }
    eps = min(mixture["epsilons"])
    names = [n for n in ("gape", "rank", "subsample") if (n, eps) in mixture["runs"]]
    fig, axes = figure(4.6 * len(names), 4.2, ncols=len(names))
    for ax, name in zip(axes.flat, names):
        plot_trajectories(
            mixture["runs"][name, eps].history_,
            mixture["X"],
            ax=ax,
            true_centers=mixture["centers"],
            title=f"{name}, ε={eps:g}",
        )
    figures["mixture_trajectories.png"] = fig
    for name in names[:2]:
        figures[f"mixture_votes_{name}.png"] = plot_vote_histograms(
            mixture["runs"][name, eps].history_, title=f"noisy votes per round, {name}, ε={eps:g}"
        )
    paths = []
    for filename, fig in figures.items():
        with atomic_write(out / filename) as tmp:
            fig.savefig(tmp, format="png", dpi=100)
        paths.append(out / filename)
    return paths


def _bar(items: list, progress: bool, desc: str):
    if not progress:
        return items
    from tqdm.auto import tqdm

    return tqdm(items, desc=desc, leave=False)


def format_table(rows: list[dict]) -> str:
    """Rows of dicts as an aligned text table."""
    if not rows:
        return ""
    keys = list(rows[0])
    cells = [[_fmt(r.get(k, "")) for k in keys] for r in rows]
    widths = [max(len(k), *(len(c[i]) for c in cells)) for i, k in enumerate(keys)]

    def line(vals):
        return "  ".join(v.ljust(w) for v, w in zip(vals, widths))

    return "\n".join([line(keys), line(["-" * w for w in widths]), *map(line, cells)])


def _fmt(value) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)
