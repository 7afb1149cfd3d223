"""Each test replays an attack on a published artefact (the privacy-holes issue); it must fail.

Attacks: the seed read from the report, a checkpoint resumed on a neighbour,
a resume after a changed plug-in parameter, releases counted once, the exact
n under add/remove adjacency, DPLloyd's sums in a box without 0, the noise
choice ignored by some release.
"""

from __future__ import annotations

import inspect
import json
import math

import numpy as np
import pytest

import privevo.evolution
import privevo.kmeans
from privevo import DPKMeans, PrivateEvolution
from privevo._params import constructor_params, describe
from privevo.audit import audit_dplloyd
from privevo.checkpoint import load_checkpoint
from privevo.demo import MIXTURE_START, mixture_2d
from privevo.selection import GAPE, Rank, Subsample, WeightedKMeans
from privevo.variation import (
    GaussianVariation,
    LevyVariation,
    MultiScaleVariation,
    SpherePacking,
    UniformBall,
)

SEED = 918273645  # a value that appears nowhere else in a report


def blobs(n=1234, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = np.vstack([rng.normal(c, 0.05, (n // 2, d)) for c in (-0.4, 0.4)])
    return np.vstack([X, rng.normal(0.0, 0.05, (n - len(X), d))])


def make_pe(**kw):
    params = dict(n_synthetic=3, iterations=4, epsilon=2.0, delta=1e-5, random_state=SEED)
    params.update(kw)
    return PrivateEvolution(MIXTURE_START, GaussianVariation(0.1, 2), Subsample(), **params)


@pytest.fixture(scope="module")
def mixture():
    return mixture_2d(rng=np.random.default_rng(0))[0]


# -- 1. the seed is never published ----------------------------------------------------


@pytest.mark.parametrize(
    "fit",
    [
        lambda X: make_pe().fit(X),
        lambda X: DPKMeans(2, epsilon=1.0, radius=2.0, random_state=SEED).fit(X),
    ],
)
def test_report_says_seeded_never_the_seed(mixture, fit):
    report = fit(mixture).privacy_report_
    text = json.dumps(report)
    assert (
        str(SEED) not in text
    )  # rerunning with a published seed on D and D' would reveal membership
    assert report["seeded"] is True
    assert any("seed stays secret" in w for w in report["warnings"])


def test_unseeded_report_has_no_seed_warning(mixture):
    report = make_pe(random_state=None).fit(mixture).privacy_report_
    assert report["seeded"] is False and not any("seed" in w for w in report["warnings"])


# -- 2. a checkpoint binds to its data and never redraws a release -------------------


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
        "round/0",
        "round/1",
        "round/2",
        "round/3",
        "recover",
        "recover_1",
        "recover_2",
        "recover_3",
    ]  # the default four recover (noisy Lloyd) steps

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


def test_digest_and_seed_stay_inside_the_checkpoint(tmp_path, mixture):
    path = tmp_path / "run.ckpt"
    model = make_pe(checkpoint=path).fit(mixture)
    header, _ = load_checkpoint(path)
    report = json.dumps(model.privacy_report_)
    assert header["digest"] not in report and str(SEED) not in report
    assert oct(path.stat().st_mode)[-3:] == "600"


def test_a_second_run_on_an_open_checkpoint_is_refused(tmp_path, mixture):
    from privevo.checkpoint import Checkpoint
    from privevo.private import data_digest

    path = tmp_path / "run.ckpt"
    model = make_pe(checkpoint=path)
    model._validate_params()
    with Checkpoint.open(path, fingerprint=model.fingerprint(2), digest=data_digest(mixture)):
        with pytest.raises(ValueError, match="in use by another run"):
            make_pe(checkpoint=path).fit(mixture)


def test_a_torn_last_record_is_dropped(tmp_path, mixture):
    path = tmp_path / "run.ckpt"
    reference = make_pe().fit(mixture)
    make_pe(checkpoint=path).fit(mixture)
    data = path.read_bytes()
    path.write_bytes(data[:-100])  # a crash in the middle of writing round 3
    resumed = make_pe(checkpoint=path).fit(mixture)
    assert resumed.resumed_from_ == 3
    np.testing.assert_array_equal(resumed.synthetic_, reference.synthetic_)
    assert path.read_bytes() == data


# -- 3. the fingerprint holds every parameter of every plug-in ----------------------


PLUGINS = [
    Subsample(),
    GAPE(R=1.0),
    WeightedKMeans(),
    UniformBall(),
    SpherePacking(),
    GaussianVariation(),
    MultiScaleVariation(R=1.0),
    LevyVariation(),
]


def _changed(value):
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value + 1 if value == value else 0.5
    if isinstance(value, str):
        return value + "x"
    if value is None:
        return 0.25
    return None


@pytest.mark.parametrize("plugin", PLUGINS, ids=lambda p: type(p).__name__)
def test_changing_any_plugin_parameter_changes_the_fingerprint(plugin):
    names = list(constructor_params(plugin))  # every __init__ parameter, read back from the object
    for name in names:
        value = _changed(getattr(plugin, name))
        assert value is not None, f"no changed value for {type(plugin).__name__}.{name}"
        other = type(plugin)(**{n: getattr(plugin, n) for n in names if n != name}, **{name: value})
        assert describe(other) != describe(plugin), (
            f"{type(plugin).__name__}.{name} is not in the fingerprint"
        )


def test_fingerprint_hides_credentials_but_keeps_token_counts():
    from privevo._params import Plugin

    class Generator(Plugin):
        def __init__(self, max_new_tokens=40, api_key="sk-1", auth_token="t", temperature=1.0):
            self.max_new_tokens, self.api_key = max_new_tokens, api_key
            self.auth_token, self.temperature = auth_token, temperature

    Generator.__module__ = "privevo.text.llm"  # described as a privevo plug-in
    seen = describe(Generator())
    assert "sk-1" not in json.dumps(seen) and '"t"' not in json.dumps(seen)
    assert describe(Generator(max_new_tokens=41)) != seen  # a count, not a credential
    assert describe(Generator(api_key="sk-2")) == seen


def test_resume_after_changing_gape_agg_radius_is_refused(tmp_path, mixture):
    path = tmp_path / "run.ckpt"

    def make(gape):
        return PrivateEvolution(
            MIXTURE_START,
            MultiScaleVariation(2.0, max_level=4),
            gape,
            n_synthetic=3,
            iterations=2,
            epsilon=2.0,
            delta=1e-5,
            random_state=1,
            checkpoint=path,
        )

    make(GAPE(R=2.0)).fit(mixture)
    changed = (
        GAPE(R=2.0, agg_radius=0.5)
        if "agg_radius" in inspect.signature(GAPE).parameters
        else GAPE(R=2.0, beta=0.1)
    )
    with pytest.raises(ValueError, match="belongs to another run"):
        make(changed).fit(mixture)


# -- 4. every release drawn is counted --------------------------------------------------


def test_fit_then_resume_reports_every_release(mixture):
    model = make_pe().fit(mixture)
    one_run = model.privacy_report_
    model.resume(mixture, model.initial_state(2, np.random.default_rng(1)))
    report = model.privacy_report_
    assert sum(r["count"] for r in report["releases"]) == 8  # 4 + 4 noisy histograms were drawn
    assert report["epsilon"] > one_run["epsilon"]
    assert report["mu"] == pytest.approx(math.sqrt(2) * one_run["mu"], rel=1e-12)


# -- 5. no exact n under add/remove ------------------------------------------------------


def test_add_remove_report_holds_no_exact_n():
    X = blobs(n=1234)
    report = DPKMeans(2, epsilon=1.0, radius=2.0).fit(X).privacy_report_
    # no number is n and no text quotes it (a noisy number may start with its digits)
    numbers, texts = _leaves(report)
    assert 1234 not in numbers and not any("1234" in t for t in texts)
    assert "n_samples" not in report["public_parameters"]
    assert report["delta"] == 1e-6  # not n^-1.1, which inverts to n
    assert report["releases"][0]["name"] == "count"
    assert (
        abs(report["public_parameters"]["n_estimate"] - 1234) < 10 * report["releases"][0]["sigma"]
    )
    replace = DPKMeans(2, epsilon=1.0, radius=2.0, adjacency="replace").fit(X).privacy_report_
    assert replace["public_parameters"]["n_samples"] == 1234 and replace["delta"] == pytest.approx(
        1234**-1.1
    )


def test_pe_selector_never_sees_the_exact_n_under_add_remove(mixture):
    seen = []

    class Spy(Rank):
        def select(self, candidates, noisy_counts, context):
            seen.append(context.n_private)
            return super().select(candidates, noisy_counts, context)

    PrivateEvolution(
        MIXTURE_START, GaussianVariation(0.1, 2), Spy(), 3, 2, 2.0, 1e-5, random_state=0
    ).fit(mixture)
    PrivateEvolution(
        MIXTURE_START,
        GaussianVariation(0.1, 2),
        Spy(),
        3,
        2,
        2.0,
        1e-5,
        adjacency="replace",
        random_state=0,
    ).fit(mixture)
    assert seen == [None, None, 2000, 2000]


# -- 6. DPLloyd in a box that excludes 0 ---------------------------------------------------


def _raw_sum_release(X, centers, lo, hi, split, rng):
    """The old DPLloyd: raw sums with the range as Laplace scale (overspends when 0 is not in the
    box)."""
    from privevo.private import cluster_statistics, release_noise

    sums, counts = cluster_statistics(X, centers)
    noisy_counts = release_noise(counts, 1.0 / split.count, rng, "geometric")
    noisy = sums + rng.laplace(0.0, (hi - lo) / split.feature_sum, size=sums.shape)
    return noisy, noisy_counts


def test_dplloyd_audit_in_a_box_without_zero():
    fixed = audit_dplloyd(1.0, n_releases=3000, random_state=0)
    assert fixed.epsilon_lower <= fixed.claimed_epsilon
    old = audit_dplloyd(1.0, n_releases=3000, random_state=0, release=_raw_sum_release)
    assert old.epsilon_lower > old.claimed_epsilon  # the attack on the old code succeeds


# -- 10. one noise choice for every release ---------------------------------------------------


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


def test_size_mismatch_errors_never_print_the_private_row_count():
    from privevo.baselines import DPLloyd
    from privevo.private import nn_histogram

    X = np.random.default_rng(0).normal(size=(437, 2))
    with pytest.raises(ValueError) as groups_error:
        nn_histogram(X, X[:5], groups=np.zeros(3))
    with pytest.raises(ValueError) as k_error:
        DPLloyd(500, bounds=(-5, 5)).fit(X)
    for err in (groups_error, k_error):
        assert "437" not in str(err.value)


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
