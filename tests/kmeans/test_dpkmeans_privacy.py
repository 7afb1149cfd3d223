"""DPKMeans' releases and checkpoints: every release named and noised as asked, a finished
checkpoint refuses a neighbour and never draws again, no exact n under add/remove."""

from __future__ import annotations

import math

import numpy as np
import pytest

import privevo.evolution
import privevo.kmeans
from privevo import DPKMeans, accounting
from privevo.checkpoint import load_checkpoint

SEED = 918273645  # a value that appears nowhere else in a report


def blobs(n=1234, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = np.vstack([rng.normal(c, 0.05, (n // 2, d)) for c in (-0.4, 0.4)])
    return np.vstack([X, rng.normal(0.0, 0.05, (n - len(X), d))])


def test_finished_dpkmeans_checkpoint_refuses_a_neighbour(tmp_path):
    X = blobs()
    path = tmp_path / "km.ckpt"
    params = dict(n_clusters=2, epsilon=1.0, radius=2.0, random_state=SEED, checkpoint=path)
    DPKMeans(**params).fit(X)
    before = path.read_bytes()
    for neighbour in (
        X[1:],
        np.vstack([X, [[0.9, 0.9, 0.9]]]),
        np.where(np.arange(len(X))[:, None] == 5, 0.3, X),
    ):
        # the attack: the same recover noise on D' makes noisy_sums(D') - noisy_sums(D) exact
        with pytest.raises(ValueError, match="made on other data"):
            DPKMeans(**params).fit(neighbour)
    assert path.read_bytes() == before


def test_finished_checkpoint_returns_the_result_without_a_new_release(tmp_path, monkeypatch):
    X = blobs(d=40)  # HDPE-means: count, second moment, rounds, recover step
    path = tmp_path / "km.ckpt"
    params = dict(
        n_clusters=2,
        epsilon=1.0,
        radius=2.0 * math.sqrt(40),
        iterations=4,
        random_state=np.random.default_rng(3),
    )
    first = DPKMeans(**params, checkpoint=path).fit(X)
    keys = [r.key for r in load_checkpoint(path)[1]]
    assert keys == [
        "count",
        "second_moment",
        "initial",
        *(f"{kind}/{t}" for t in range(4) for kind in ("release", "round")),
        "recover",
        "recover_1",
        "recover_2",
        "recover_3",
    ]  # each round's release logged before its selection; the default four recover steps

    def no_release(*args, **kwargs):
        raise AssertionError("a release was drawn again")

    for module, name in (
        (privevo.kmeans, "noisy_cluster_sums"),
        (privevo.kmeans, "noisy_second_moment"),
        (privevo.kmeans, "noisy_count"),
        (privevo.evolution, "noisy_nn_histogram"),
    ):
        monkeypatch.setattr(module, name, no_release)
    params["random_state"] = np.random.default_rng(3)
    again = DPKMeans(**params, checkpoint=path).fit(X)
    np.testing.assert_array_equal(again.cluster_centers_, first.cluster_centers_)
    assert again.privacy_report_["releases"] == first.privacy_report_["releases"]


def test_add_remove_report_holds_no_exact_n():
    X = blobs(n=1234)
    report = DPKMeans(2, epsilon=1.0, radius=2.0).fit(X).privacy_report_
    # no number is n and no text quotes it (a noisy number may start with its digits)
    numbers, texts = _leaves(report)
    assert 1234 not in numbers and not any("1234" in t for t in texts)
    assert "n_samples" not in report["public_parameters"]
    assert report["delta"] == 1e-6  # not derived from n, which it would reveal
    assert report["releases"][0]["name"] == "count"
    assert (
        abs(report["public_parameters"]["n_estimate"] - 1234) < 10 * report["releases"][0]["sigma"]
    )
    replace = DPKMeans(2, epsilon=1.0, radius=2.0, adjacency="replace").fit(X).privacy_report_
    assert replace["public_parameters"]["n_samples"] == 1234
    assert replace["delta"] == accounting.default_delta(1234) <= 1 / (10 * 1234)


@pytest.mark.parametrize("d", [3, 40])
def test_discrete_noise_reaches_every_dpkmeans_release(d):
    X = blobs(n=600, d=d)
    model = DPKMeans(
        2,
        epsilon=1.0,
        radius=2.0 * math.sqrt(d),
        iterations=3,
        noise="discrete_gaussian",
        random_state=0,
    ).fit(X)
    report = model.privacy_report_
    assert report["accountant"] == "zcdp" and report["noise"] == "discrete_gaussian"
    assert {r["noise"] for r in report["releases"]} == {"discrete_gaussian"}
    assert len(report["releases"]) == (5 if d > 32 else 4)
    assert report["epsilon"] <= 1.0 and report["epsilon"] == pytest.approx(1.0, rel=1e-6)


def _leaves(value) -> tuple[list[float], list[str]]:
    """The numbers and the texts (keys too) of a JSON-like document."""
    if isinstance(value, dict):
        parts = [_leaves(v) for v in value.values()] + [([], list(map(str, value)))]
    elif isinstance(value, (list, tuple)):
        parts = [_leaves(v) for v in value]
    elif isinstance(value, str):
        return [], [value]
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        return [value], []
    else:
        return [], []
    return [x for n, _ in parts for x in n], [t for _, ts in parts for t in ts]


def points(n=300, d=3, seed=0):
    X = np.random.default_rng(seed).normal(size=(n, d))
    return X / np.linalg.norm(X, axis=1).max()


def test_dpkmeans_ledger_names_every_release_and_rebuilds_from_its_checkpoint(tmp_path):
    X = points(400, 4)
    path = tmp_path / "run.ckpt"
    model = DPKMeans(3, epsilon=1.0, radius=1.0, random_state=0, checkpoint=path).fit(X)
    names = [r["name"] for r in model.privacy_report_["releases"]]
    assert names == ["count", "nn_histogram", "cluster_sums", "cluster_counts"]
    replayed = DPKMeans(3, epsilon=1.0, radius=1.0, random_state=0, checkpoint=path).fit(X)
    np.testing.assert_array_equal(replayed.cluster_centers_, model.cluster_centers_)
    assert replayed.privacy_report_["releases"] == model.privacy_report_["releases"]
    assert "not differentially private" in model.privacy_report_["evaluation"]


class Stop(Exception):
    pass


def rounds_of(path):
    """The round records of a checkpoint file."""
    return [r for r in load_checkpoint(path)[1] if r.key.startswith("round/")]


@pytest.mark.parametrize("method, d", [("pe-means", 2), ("hdpe-means", 40)])
def test_dpkmeans_checkpoint_resume(tmp_path, monkeypatch, method, d):
    import privevo
    from privevo.evolution import PrivateEvolution as PE

    rng = np.random.default_rng(1)
    X = np.vstack([rng.normal(c, 0.05, (300, d)) for c in (-0.5, 0.5)])
    params = dict(
        n_clusters=2,
        epsilon=1.0,
        radius=2.0 * np.sqrt(d),
        method=method,
        iterations=6,
        random_state=3,
    )
    reference = privevo.DPKMeans(**params).fit(X)
    path = tmp_path / "km.ckpt"
    step, calls = PE.step, []

    def crashing_step(self, X_, state):
        if len(calls) == 3:
            raise Stop
        calls.append(state.completed)
        return step(self, X_, state)

    monkeypatch.setattr(PE, "step", crashing_step)
    with pytest.raises(Stop):
        privevo.DPKMeans(**params, checkpoint=path).fit(X)
    monkeypatch.setattr(PE, "step", step)
    assert len(rounds_of(path)) == 3
    resumed = privevo.DPKMeans(**params, checkpoint=path).fit(X)
    assert resumed.evolution_.resumed_from_ == 3
    np.testing.assert_array_equal(resumed.cluster_centers_, reference.cluster_centers_)
    assert resumed.privacy_report_["epsilon"] == reference.privacy_report_["epsilon"]
    assert resumed.privacy_report_["releases"] == reference.privacy_report_["releases"]
    with pytest.raises(ValueError, match="belongs to another run"):
        privevo.DPKMeans(**{**params, "random_state": 4}, checkpoint=path).fit(X)
    with pytest.raises(ValueError, match=r"belongs to another run \(radius is "):
        privevo.DPKMeans(**{**params, "radius": 3.0 * np.sqrt(d)}, checkpoint=path).fit(X)
