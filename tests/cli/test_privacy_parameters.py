"""The privacy parameters on the command line: the reported ε never exceeds the target over the
whole range, a tiny δ gets its σ, δ's default is left to the estimator that derives it, and
--noise and --adjacency offer the library's own choices."""

from __future__ import annotations

import json

import pytest

from helpers.cli import KMEANS, SYNTH, fill, swap
from privevo import accounting


def test_synth_tiny_delta_reports_the_target(files, tmp_path, cli):
    # guards against: synth ran with sigma = 3.16e8 and reported epsilon = 3.6e-7
    code, _, err = cli(fill(swap(SYNTH, delta="1e-300"), files) + ["-o", tmp_path / "s.csv"])
    assert code == 0, err
    report = json.loads((tmp_path / "s.privacy.json").read_text())
    assert 1 - 1e-6 <= report["epsilon"] <= 1.0
    assert report["sigma"] == pytest.approx(accounting.gaussian_sigma(1.0, 1e-300, 3), rel=1e-9)


@pytest.mark.parametrize("epsilon", ["1e-6", "0.3", "7", "1e6"])
def test_reported_epsilon_never_exceeds_the_target(files, cli, epsilon):
    # one rule: every command accepts [1e-6, 1e6]; kmeans runs with a T given with --iterations
    for argv in (
        swap(SYNTH, epsilon=epsilon, json=[]),
        swap(SYNTH, epsilon=epsilon, json=[], noise="discrete_gaussian"),
        swap(KMEANS, epsilon=epsilon, json=[], delta="1e-300", iterations=3),
        ["account", "--epsilon", epsilon, "--delta", "1e-100", "--steps", "3", "--json"],
    ):
        code, out, err = cli(fill(argv, files))
        assert code == 0, err
        reported = json.loads(out).get("privacy_report", json.loads(out))["epsilon"]
        assert float(epsilon) * (1 - 1e-6) <= reported <= float(epsilon)


def test_noise_option_reaches_every_release(files, cli):
    code, out, err = cli(fill(swap(SYNTH, noise="discrete_gaussian", json=[]), files))
    assert code == 0, err
    assert json.loads(out)["privacy_report"]["noise"] == "discrete_gaussian"
    code, out, err = cli(fill(swap(KMEANS, noise="discrete_gaussian", json=[]), files))
    assert code == 0, err
    releases = json.loads(out)["privacy_report"]["releases"]
    assert {r.get("noise") for r in releases} == {"discrete_gaussian"}


def test_delta_default_is_left_to_an_estimator_that_derives_it():
    # under add/remove an n-derived delta would publish the exact n: an estimator that accepts
    # delta=None derives it from a noisy count, and the command line then passes None
    from argparse import Namespace

    from privevo import DPKMeans
    from privevo.cli.kmeans import _kmeans_model
    from privevo.cli.options import run_delta as _delta

    args = Namespace(delta=None, adjacency="add_remove")
    public = Namespace(delta=None, adjacency="replace")
    assert _delta(args, 400, library_default=True) is None
    assert _delta(args, 400, library_default=False) == 1e-6  # fixed: n is private
    assert _delta(public, 400, library_default=False) == 1e-6  # min(1e-6, 1/(10 n))
    assert _delta(public, 10**6, library_default=False) == 1e-7  # n is public: 1/(10 n)
    with pytest.raises(ValueError, match="at least 2 rows; pass --delta"):
        _delta(public, 1, library_default=False)
    assert _delta(Namespace(delta=1e-7, adjacency="replace"), 400, library_default=True) == 1e-7
    kmeans_args = Namespace(
        delta=None,
        k=2,
        epsilon=1.0,
        radius=1.0,
        center=None,
        bounds=None,
        method="auto",
        recover_share=None,
        projection="pca",
        iterations=None,
        adjacency="add_remove",
        seed=None,
        quiet=True,
        json=True,
        backend="auto",
        checkpoint=None,
        noise="gaussian",
    )
    model = _kmeans_model(kmeans_args)
    assert model.delta is None and DPKMeans().delta is None  # DPKMeans derives its own


def test_the_cli_choices_are_the_library_s():
    """The parser keeps its own copies (building it imports no numpy); they must not drift."""
    from privevo.adjacency import ADJACENCIES
    from privevo.cli import options
    from privevo.private import NOISES

    assert options.NOISES == NOISES and options.ADJACENCIES == ADJACENCIES
