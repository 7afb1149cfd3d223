"""privevo.plots: figures built from a run's history (object API, no pyplot state)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("matplotlib")

from privevo import PrivateEvolution, plots  # noqa: E402
from privevo.demo import MIXTURE_START, mixture_2d  # noqa: E402
from privevo.selection import Rank  # noqa: E402
from privevo.variation import GaussianVariation  # noqa: E402


@pytest.fixture(scope="module")
def run():
    X, centers = mixture_2d(500, np.random.default_rng(0))
    pe = PrivateEvolution(
        MIXTURE_START, GaussianVariation(0.1, 2), Rank(), 3, 7, 4.0, 1e-5, random_state=0
    ).fit(X)
    return X, centers, pe


def test_trajectories_draw_every_round_and_the_final_selection(run):
    X, centers, pe = run
    fig = plots.plot_trajectories(pe.history_, X, true_centers=centers)
    ax = fig.axes[0]
    offsets = [c.get_offsets() for c in ax.collections]
    # private data, one scatter per round, the final stars, the true centres
    assert len(offsets) == 1 + 7 + 1 + 1
    np.testing.assert_array_equal(offsets[1 + 6], pe.history_[-1].selected_points)
    np.testing.assert_array_equal(offsets[-2], pe.synthetic_)
    assert len(ax.lines) == 6 * 3  # one parent segment per selected point after round 1


def test_vote_histograms_show_the_noisy_counts_sorted(run):
    _, _, pe = run
    fig = plots.plot_vote_histograms(pe.history_, rounds=[0, 6])
    first = fig.axes[0]
    heights = [p.get_height() for p in first.patches]
    np.testing.assert_allclose(heights, np.sort(pe.history_[0].noisy_counts)[::-1])
    assert "round 7" in fig.axes[1].get_title()


def test_loss_vs_epsilon_lines_and_baseline(tmp_path):
    fig = plots.plot_loss_vs_epsilon(
        {"a": ([0.5, 1, 2], [3.0, 2.0, 1.5], [0.1, 0.1, 0.1]), "b": ([0.5, 1, 2], [4.0, 3.0, 2.0])},
        baseline=1.0,
    )
    ax = fig.axes[0]
    assert [line.get_label() for line in ax.lines] == ["a", "b", "non-private k-means++"]
    np.testing.assert_array_equal(ax.lines[1].get_ydata(), [4.0, 3.0, 2.0])
    fig.savefig(tmp_path / "f.png")
    assert (tmp_path / "f.png").read_bytes()[:4] == b"\x89PNG"
