"""Pictures of privevo runs (matplotlib, imported lazily; ``pip install 'privevo[plots]'``).

Figures are built with the object-oriented API (``matplotlib.figure.Figure``),
so plotting never changes the user's pyplot backend or global state; save
them with ``fig.savefig(path)``.

Plots are evaluation tools for the data owner. The ones that take ``X`` draw
the *private* data and are not differentially private: do not publish them.
The DP outputs (selected points, centres, noisy counts) are safe to show.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

__all__ = ["plot_trajectories", "plot_vote_histograms", "plot_loss_vs_epsilon", "plot_centers"]


def figure(width: float, height: float, ncols: int = 1, nrows: int = 1):
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise ImportError("plots need matplotlib: pip install 'privevo[plots]'") from None
    fig = Figure(figsize=(width, height), layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False)
    return fig, axes


def _axes(ax, width: float, height: float):
    """(figure, axes): a new one-panel figure, or the given axes and its figure."""
    if ax is not None:
        return ax.figure, ax
    fig, axes = figure(width, height)
    return fig, axes[0, 0]


def _xy(points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The first two coordinates (a 1-D set is drawn at y = 0)."""
    points = np.asarray(points, dtype=float)
    return points[:, 0], (points[:, 1] if points.shape[1] > 1 else np.zeros(len(points)))


def _labels(ax, columns: Sequence[str] | None) -> None:
    if columns:
        ax.set_xlabel(str(columns[0]))
        if len(columns) > 1:
            ax.set_ylabel(str(columns[1]))


def plot_trajectories(
    history,
    X=None,
    *,
    ax=None,
    title: str | None = None,
    true_centers=None,
    columns: Sequence[str] | None = None,
    max_private: int = 5000,
):
    """2-D trajectories of a PE run from ``history_`` (first two coordinates).

    Each round's selected points are drawn coloured by round (light → dark);
    a segment joins each selected point to the nearest selected point of the
    previous round (its parent, or the closest one). The final selection is
    marked with stars. ``X`` (private, not DP) is drawn faintly underneath.
    """
    fig, ax = _axes(ax, 5.2, 4.4)
    from matplotlib import colormaps

    cmap = colormaps["viridis"]
    if X is not None:
        X = np.asarray(X, dtype=float)
        shown = X if len(X) <= max_private else X[:: int(np.ceil(len(X) / max_private))]
        ax.scatter(*_xy(shown), s=3, c="0.75", label="private data (not DP)", rasterized=True)
    steps = [np.asarray(r.selected_points, dtype=float) for r in history]
    T = max(len(steps), 1)
    for t, points in enumerate(steps):
        color = cmap(0.1 + 0.8 * t / max(T - 1, 1))
        if t > 0:
            parents = _nearest(points, steps[t - 1])
            x0, y0 = _xy(steps[t - 1][parents])
            x1, y1 = _xy(points)
            ax.plot(np.vstack([x0, x1]), np.vstack([y0, y1]), color=color, lw=0.8, alpha=0.8)
        ax.scatter(*_xy(points), s=10, color=color, zorder=3)
    if steps:
        ax.scatter(
            *_xy(steps[-1]),
            s=160,
            marker="*",
            color="crimson",
            edgecolor="k",
            zorder=4,
            label=f"final selection ({len(steps[-1])})",
        )
    if true_centers is not None:
        ax.scatter(
            *_xy(np.asarray(true_centers)),
            s=120,
            marker="x",
            color="k",
            zorder=5,
            label="true centres",
        )
    _labels(ax, columns)
    ax.set_title(title or f"PE trajectories over {len(steps)} rounds")
    ax.legend(loc="best", fontsize=7)
    return fig


def _nearest(points: np.ndarray, previous: np.ndarray) -> np.ndarray:
    from .distances import nearest_distances

    return nearest_distances(points, previous)[1]


def plot_vote_histograms(
    history, *, rounds: Sequence[int] | None = None, max_panels: int = 6, title: str | None = None
):
    """Per-iteration noisy vote histograms (the DP releases), sorted descending.

    Selected candidates are drawn dark, the rest light; a dashed line marks a
    selector's threshold when its ``info`` has one (``tau`` / ``threshold``).
    """
    if rounds is None:
        rounds = sorted(
            set(np.linspace(0, len(history) - 1, min(max_panels, len(history))).round().astype(int))
        )
    rounds = list(rounds)
    ncols = min(3, len(rounds))
    nrows = int(np.ceil(len(rounds) / ncols))
    fig, axes = figure(3.4 * ncols, 2.5 * nrows, ncols, nrows)
    for ax in axes.flat[len(rounds) :]:
        ax.set_visible(False)
    for ax, t in zip(axes.flat, rounds):
        _vote_panel(ax, history[t])
    fig.suptitle(title or "noisy vote histograms (DP releases)")
    return fig


def _vote_panel(ax, record) -> None:
    counts = np.asarray(record.noisy_counts, dtype=float)
    order = np.argsort(-counts, kind="stable")
    chosen = np.zeros(len(counts), dtype=bool)
    if record.selected is not None:
        chosen[np.asarray(record.selected, dtype=int)] = True
    colors = np.where(chosen[order], "tab:blue", "lightsteelblue")
    ax.bar(np.arange(len(counts)), counts[order], color=colors, width=1.0)
    tau = next(
        (
            record.info[k]
            for k in ("tau", "threshold")
            if isinstance(record.info.get(k), (int, float))
        ),
        None,
    )
    if tau is not None:
        ax.axhline(tau, ls="--", color="crimson", lw=1, label=f"τ = {tau:.3g}")
        ax.legend(fontsize=7)
    ax.axhline(0, color="k", lw=0.5)
    ax.set_title(f"round {record.iteration + 1}: σ = {record.sigma:.3g}", fontsize=9)
    ax.set_xlabel("candidates, by noisy count", fontsize=8)
    ax.set_ylabel("noisy votes", fontsize=8)


def plot_loss_vs_epsilon(
    curves: Mapping[
        str,
        tuple[Sequence[float], Sequence[float]]
        | tuple[Sequence[float], Sequence[float], Sequence[float]],
    ],
    *,
    ax=None,
    ylabel: str = "k-means loss (mean over seeds)",
    title: str | None = None,
    baseline: float | None = None,
    baseline_label: str = "non-private k-means++",
    logx: bool = True,
):
    """Loss vs ε, one line per method: ``{name: (epsilons, losses[, std])}``."""
    fig, ax = _axes(ax, 5.2, 3.8)
    for name, curve in curves.items():
        eps, loss = np.asarray(curve[0], dtype=float), np.asarray(curve[1], dtype=float)
        line = ax.plot(eps, loss, marker="o", label=name)[0]
        if len(curve) > 2 and curve[2] is not None:
            std = np.asarray(curve[2], dtype=float)
            ax.fill_between(eps, loss - std, loss + std, color=line.get_color(), alpha=0.15)
    if baseline is not None:
        ax.axhline(baseline, ls="--", color="k", lw=1, label=baseline_label)
    if logx:
        ax.set_xscale("log", base=2)
    ax.set_xlabel("ε")
    ax.set_ylabel(ylabel)
    ax.set_title(title or "loss vs ε")
    ax.legend(fontsize=8)
    return fig


def plot_centers(
    X,
    centers,
    *,
    columns: Sequence[str] | None = None,
    title: str | None = None,
    max_private: int = 5000,
):
    """DP centres over the private data (first two features; the data layer is not DP)."""
    fig, axes = figure(5.2, 4.4)
    ax = axes[0, 0]
    X = np.asarray(X, dtype=float)
    shown = X if len(X) <= max_private else X[:: int(np.ceil(len(X) / max_private))]
    ax.scatter(*_xy(shown), s=3, c="0.7", label="private data (not DP)", rasterized=True)
    ax.scatter(
        *_xy(np.asarray(centers)),
        s=150,
        marker="*",
        color="crimson",
        edgecolor="k",
        label="DP centres",
    )
    _labels(ax, columns)
    ax.set_title(title or "DP centres")
    ax.legend(fontsize=7)
    return fig
