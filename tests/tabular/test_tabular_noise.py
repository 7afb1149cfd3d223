"""TabularPE's noise choice (gaussian, discrete_gaussian, discrete_gaussian_secure): every release
takes it and the report accounts it (docs/privacy.md, "Accounting"); the published rows come
from a generator split off the seed before any noise is drawn (docs/tabular.md)."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest

pd = pytest.importorskip("pandas")

from helpers.tables import DESCRIPTION, small_table  # noqa: E402
from privevo import TabularPE  # noqa: E402
from privevo.tabular import metadata_from_description  # noqa: E402

NOISES = ("gaussian", "discrete_gaussian", "discrete_gaussian_secure")
EPSILON, DELTA = 4.0, 1e-5


def fit(noise: str = "gaussian", **kw) -> TabularPE:
    meta = metadata_from_description(DESCRIPTION)
    kw = {"n_synthetic": 60, "iterations": 2, "pool": 1000, "random_state": 0, **kw}
    kw.setdefault("pair_selection", "tree")  # the adaptive choices: tests/tabular/test_adaptive.py
    return TabularPE(EPSILON, DELTA, meta, noise=noise, **kw).fit(small_table())


def independent_epsilon(releases: list[dict], noise: str, adjacency: str) -> float:
    """ε of the report's releases by dp_accounting alone: PLD of the Gaussian events, or the RDP
    accountant on ZCDpEvent(ρ = Δ²/(2σ²)) of every count (CKS20 Thm. 4)."""
    import dp_accounting

    if noise == "gaussian":
        acc = dp_accounting.pld.PLDAccountant()
        for r in releases:
            event = dp_accounting.GaussianDpEvent(r["sigma"] / r["sensitivity"])
            acc.compose(event, r["count"])
        return acc.get_epsilon(DELTA)
    acc = dp_accounting.rdp.RdpAccountant()
    for r in releases:
        rho = r["sensitivity"] ** 2 / (2 * r["sigma"] ** 2)
        acc.compose(dp_accounting.ZCDpEvent(rho=rho), r["count"])
    return acc.get_epsilon(DELTA)


@pytest.mark.parametrize("adjacency", ["add_remove", "replace"])
@pytest.mark.parametrize("noise", NOISES)
def test_report_accounts_every_release_with_its_noise(noise, adjacency):
    """Every release is named with the fit's noise; the report's ε is the target (never above)
    and matches dp_accounting's own composition of the listed releases."""
    report = fit(noise, adjacency=adjacency).privacy_report_
    names = [r["name"] for r in report["releases"]]
    assert names == [
        "nn_histogram",
        "column_marginals",
        "numeric_refinements",
        "pair_scores",
        "pair_marginals",
    ]
    assert {r.get("noise", "gaussian") for r in report["releases"]} == {noise}
    assert report["noise"] == noise
    assert report["accountant"] == ("gdp" if noise == "gaussian" else "zcdp")
    assert EPSILON * (1 - 1e-6) <= report["epsilon"] <= EPSILON
    reference = independent_epsilon(report["releases"], noise, adjacency)
    if noise == "gaussian":
        assert reference == pytest.approx(EPSILON, rel=2e-3)
    else:  # the RDP accountant's order grid is a little coarser than our optimum over α
        assert report["epsilon"] <= reference + 1e-9 and reference <= report["epsilon"] * 1.001
        rho = sum(
            r["count"] * r["sensitivity"] ** 2 / (2 * r["sigma"] ** 2) for r in report["releases"]
        )
        assert report["rho"] == pytest.approx(rho, rel=1e-12)


def _is_integer(values) -> bool:
    values = np.concatenate([np.ravel(v) for v in values])
    return bool(np.all(values == np.rint(values)))


@pytest.mark.parametrize("noise", ["discrete_gaussian", "discrete_gaussian_secure"])
def test_discrete_noise_releases_integers(noise):
    """Counts, tree levels, pair scores and 2-way tables, and every round's votes: integers."""
    model = fit(noise)
    released = [
        *model.marginal_counts_,
        *model.fine_["release"].value,
        model.pairs_["releases"][0].value,
        *model.pairs_["releases"][1].value,
        *[r.noisy_counts for r in model.history_],
    ]
    assert _is_integer(released)
    assert not _is_integer(fit("gaussian").marginal_counts_)


def test_dependence_scores_are_integers_against_a_rounded_expected_table():
    """The expected table is rounded to integers (public), so the score — an L1 distance of
    integer counts — is an integer and takes discrete noise exactly (granularity 1)."""
    from privevo.private import noisy_dependence_scores

    cells = np.array([[0, 1], [1, 1], [1, -1]])
    expected = [np.full((2, 3), 0.4)]  # rounds to 0: the score is the number of counted rows
    args = ("s", cells, [2, 3], [(0, 1)], expected)
    release = noisy_dependence_scores(*args, 1e-9, np.random.default_rng(0))
    assert release.value[0] == pytest.approx(2.0)
    rng = np.random.default_rng(0)
    release = noisy_dependence_scores(*args, 1.0, rng, "replace", noise="discrete_gaussian")
    assert (release.noise, release.sensitivity, release.count) == ("discrete_gaussian", 2.0, 1)
    assert release.value[0] == np.rint(release.value[0])


def _pin_releases(monkeypatch, calls: list, extra_at: int = -1, extra: int = 0) -> None:
    """Patch ``release_noise`` in every privevo module that binds it: it returns the exact
    values (every run's releases are pinned to the same values), counts its calls in ``calls``
    and at call number ``extra_at`` draws ``extra`` more values from the noise generator."""
    import privevo.private.release as release_module

    original = release_module.release_noise

    def pinned(values, sigma, rng, *args, **kwargs):
        if len(calls) == extra_at:
            rng.random(extra)
        calls.append(None)
        return np.asarray(values, dtype=np.float64).copy()

    for name, module in list(sys.modules.items()):
        if name.startswith("privevo") and getattr(module, "release_noise", None) is original:
            monkeypatch.setattr(module, "release_noise", pinned)


@pytest.mark.parametrize("pool", [1000, 0], ids=["pool", "last-candidates"])
def test_published_rows_do_not_depend_on_the_noise_generator(monkeypatch, pool):
    """With every release pinned to the same values, more draws from the noise generator in the
    last release (a rejection sampler draws more or fewer, depending on the noise it returns)
    change neither the output pool nor the sample: both come from a generator split off the
    seed before any noise is drawn."""
    calls: list = []
    _pin_releases(monkeypatch, calls)
    fit(pool=pool)
    monkeypatch.undo()
    assert len(calls) > 1
    outputs = []
    for extra in (0, 7):
        _pin_releases(monkeypatch, [], extra_at=len(calls) - 1, extra=extra)
        model = fit(pool=pool)
        monkeypatch.undo()
        outputs.append((model.population_.to_csv(), model.sample(300).to_csv()))
    assert outputs[0] == outputs[1]


def test_secure_noise_sample_reproduces_from_the_seed(monkeypatch):
    """discrete_gaussian_secure draws its noise from the OS; with those releases replayed, a
    second fit with the same seed publishes the same pool and sample (the published rows'
    generator comes from the seed, not from the noise source)."""
    import privevo.private.release as release_module

    original = release_module.release_noise
    recorded: list = []

    def replayed(replay: bool):
        calls = iter(range(10**6))

        def pinned(*args, **kwargs):
            noisy = original(*args, **kwargs)
            if not replay:
                recorded.append(noisy)
                return noisy
            return recorded[next(calls)].copy()

        return pinned

    outputs = []
    for replay in (False, True):
        pinned = replayed(replay)  # one call counter for every module that binds it
        for name, module in list(sys.modules.items()):
            if name.startswith("privevo") and getattr(module, "release_noise", None) is original:
                monkeypatch.setattr(module, "release_noise", pinned)
        model = fit("discrete_gaussian_secure")
        monkeypatch.undo()
        outputs.append((model.population_.to_csv(), model.sample(300).to_csv()))
    assert outputs[0] == outputs[1]


def test_unknown_noise_is_refused_before_the_data_is_read():
    meta = metadata_from_description(DESCRIPTION)
    with pytest.raises(ValueError, match="noise") as err:
        TabularPE(1.0, 1e-5, meta, noise="laplace").fit(None)
    assert len(str(err.value).splitlines()) == 1


def test_cli_synth_table_discrete_gaussian_secure(tmp_path, capsys):
    """privevo synth-table --noise discrete_gaussian_secure, end to end: the rows, and a report
    whose every release is the secure discrete Gaussian, accounted by zCDP within ε."""
    from privevo.cli import main

    data, meta_json, out = tmp_path / "t.csv", tmp_path / "m.json", tmp_path / "syn.csv"
    small_table(300).to_csv(data, index=False)
    metadata_from_description(DESCRIPTION).to_json(meta_json)
    argv = ["synth-table", str(data), "--metadata", str(meta_json), "-o", str(out)]
    flags = "--epsilon 1 --delta 1e-5 --rows 40 --population 50 --json"
    assert main([*argv, *flags.split(), "--noise", "discrete_gaussian_secure"]) == 0
    printed = json.loads(capsys.readouterr().out)
    report = json.loads((tmp_path / "syn.privacy.json").read_text())
    assert len(pd.read_csv(out)) == 40 == printed["rows"]
    assert report["noise"] == "discrete_gaussian_secure" and report["accountant"] == "zcdp"
    noises = {r["name"]: r["noise"] for r in report["releases"]}
    assert noises.pop("marginal_choices") == "exponential"  # drawn from the CSPRNG as well
    assert set(noises.values()) == {"discrete_gaussian_secure"}
    assert 1.0 * (1 - 1e-6) <= report["epsilon"] <= 1.0 and report["guarantee_holds"]
    with pytest.raises(SystemExit) as refused:  # argparse's choices: the estimators' noises
        main([*argv, "--epsilon", "1", "--noise", "laplace"])
    assert refused.value.code == 2 and "invalid choice" in capsys.readouterr().err


@pytest.mark.parametrize("noise", ["discrete_gaussian", "discrete_gaussian_secure"])
def test_discrete_noise_fit_is_neighbour_safe(noise):
    """The neighbour replay (docs/privacy.md, "How the checks work") on a discrete-noise fit:
    with D's releases pinned, one more row changes no published byte (the pool, the default
    sample, the report) and no release's exact statistic beyond its declared sensitivity."""
    from helpers.neighbour import assert_neighbour_safe, estimator_artefacts

    df = small_table(200)
    neighbour = pd.concat([df, df.iloc[[3]]], ignore_index=True)

    def run(table):
        meta = metadata_from_description(DESCRIPTION)
        kw = {"n_synthetic": 30, "iterations": 2, "pool": 300, "random_state": 0}
        est = TabularPE(EPSILON, DELTA, meta, noise=noise, **kw).fit(table)
        return {
            "pool": est.population_.to_csv(index=False),
            "sample": est.sample(50).to_csv(index=False),
            "report": estimator_artefacts(est)["privacy_report_"],
        }

    assert_neighbour_safe(run, df, neighbour)
