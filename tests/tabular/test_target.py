"""A declared target: its 2-way tables measured, kept in the rows, reported with their
signal-to-noise; the budget plan; duplicate rows spread inside their pair cells."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from privevo import TabularPE
from privevo._params import constructor_params
from privevo.tabular import metadata_from_description
from privevo.tabular.measure import signal_to_noise
from privevo.tabular.plan import TARGET_SHARE, make_plan
from privevo.tabular.pool import systematic_draw

LOAN = """
n_rows: 3000
deny: categorical no, yes
group: categorical a, b
history: integer 1..6
ratio: numeric 0..3
other: categorical x, y, z
"""


def loan_table(n: int = 3000, seed: int = 0) -> pd.DataFrame:
    """deny depends on group (28 % vs 9 %, as a mortgage table's race gap) and on history."""
    rng = np.random.default_rng(seed)
    group = rng.choice(["a", "b"], size=n, p=[0.85, 0.15])
    history = rng.integers(1, 7, n)
    ratio = np.round(rng.gamma(4.0, 0.08, n), 3)
    rate = np.where(group == "b", 0.28, 0.09) + 0.03 * (history - 1)
    deny = np.where(rng.random(n) < np.clip(rate, 0, 1), "yes", "no")
    other = rng.choice(["x", "y", "z"], size=n)
    return pd.DataFrame(
        {"deny": deny, "group": group, "history": history, "ratio": ratio, "other": other}
    )


def gap(df: pd.DataFrame) -> float:
    yes = df.deny == "yes"
    return float(yes[df.group == "b"].mean() - yes[df.group == "a"].mean())


@pytest.fixture(scope="module")
def fitted():
    meta = metadata_from_description(LOAN)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return TabularPE(1.0, metadata=meta, target="deny", random_state=0).fit(loan_table())


def test_every_target_pair_is_measured_and_reported(fitted):
    releases = {r["name"]: r for r in fitted.privacy_report_["releases"]}
    assert releases["target_marginals"]["count"] == 4  # C − 1 tables, one release
    assert releases["marginal_choices"]["count"] == releases["clique_marginals"]["count"] == 4
    pairs = {tuple(r["columns"]) for r in fitted.relations_}
    assert {("deny", c) for c in ("group", "history", "ratio", "other")} <= pairs
    assert fitted.privacy_report_["relations"] == fitted.relations_
    sigma = {r["columns"][1]: r["sigma"] for r in fitted.relations_ if r["columns"][0] == "deny"}
    assert sigma["group"] == pytest.approx(releases["target_marginals"]["sigma"])


def test_the_synthetic_rows_keep_the_measured_target_gap(fitted):
    """Real gap ≈ 0.19 at n = 3000, ε = 1: the rows sampled carry it (sign and size)."""
    real = gap(loan_table())
    synthetic = gap(fitted.sample(3000, random_state=1))
    assert real > 0.15 and synthetic > 0.5 * real


def test_the_target_takes_its_planned_share(fitted):
    shares = fitted.shares_
    assert TARGET_SHARE[0] <= shares["target_pairs"] <= TARGET_SHARE[1]
    assert sum(shares.values()) == pytest.approx(1.0)
    no_target = make_plan(constructor_params(TabularPE(1.0)), metadata_from_description(LOAN), 1e-5)
    assert "target_pairs" not in no_target.shares


def test_a_small_epsilon_warns_that_a_relation_is_not_resolved():
    meta = metadata_from_description(LOAN)
    with pytest.warns(UserWarning, match="cannot tell their relation from independence"):
        model = TabularPE(0.05, metadata=meta, target="deny", random_state=0)
        model.fit(loan_table(600))
    assert any("cannot tell" in w for w in model.privacy_report_["warnings"])


def test_signal_to_noise_separates_a_relation_from_pure_noise():
    rng = np.random.default_rng(0)
    noise = rng.normal(0, 10.0, (2, 10)) + 100
    strong = np.array([[300.0] * 5 + [20.0] * 5, [20.0] * 5 + [300.0] * 5])
    assert signal_to_noise(noise, 10.0) < 1.5 < signal_to_noise(strong, 10.0)


@pytest.mark.parametrize("target", ["ratio", "missing"])
def test_a_bad_target_is_refused_before_any_release(target):
    meta = metadata_from_description(LOAN)
    with pytest.raises(ValueError, match=f"target '{target}' must be a categorical"):
        TabularPE(1.0, metadata=meta, target=target).fit(loan_table(50))


def test_cli_target_flag(tmp_path, capsys):
    from privevo.cli import main

    data, meta_json = tmp_path / "t.csv", tmp_path / "m.json"
    loan_table(400).to_csv(data, index=False)
    metadata_from_description(LOAN).to_json(meta_json)
    argv = ["synth-table", str(data), "--metadata", str(meta_json), "--epsilon", "1"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        assert main([*argv, "--target", "deny", "--seed", "1", "-o", str(tmp_path / "s.csv")]) == 0
    report = (tmp_path / "s.privacy.json").read_text()
    assert '"target_marginals"' in report
    capsys.readouterr()
    code = main([*argv, "--target", "nope", "-o", str(tmp_path / "r.csv")])
    err = capsys.readouterr().err
    assert code == 2 and "target 'nope'" in err and len(err.strip().splitlines()) == 1


def _pool_draws(model, n: int, seed: int) -> np.ndarray:
    """The pool indices ``sample(n, random_state=seed)`` draws before spreading repeats."""
    return systematic_draw(model.weights_, n, np.random.default_rng(seed))


def test_repeated_pool_rows_are_spread_inside_their_pair_cells():
    """Exact duplicates come from drawing the weighted pool with replacement; a repeat's
    numeric values are redrawn inside their pair cells, so every measured cell is kept."""
    meta = metadata_from_description(LOAN)
    model = TabularPE(1.0, metadata=meta, random_state=0).fit(loan_table())
    syn = model.sample(3000, random_state=2)
    assert syn.duplicated().mean() <= 0.02
    binning = model.pairs_["binnings"][meta.names.index("ratio")]
    drawn = model.codes_[_pool_draws(model, 3000, 2), meta.names.index("ratio")]
    assert np.array_equal(binning.cells(drawn), binning.cells(syn["ratio"].to_numpy(float)))


WAVES = """
n_rows: 6000
year: integer 1974..2018
age: integer 18..89
kids: integer 0..8
work: categorical full, part
hours: integer 1..99
"""


def test_repeats_of_integer_only_rows_leave_their_values():
    """Rows of small-range integers and categories only (one integer per leaf) repeat as
    often as the pool is drawn back, unless a repeat is redrawn across its pair cell: a
    6000-row draw from a 3000-row pool (half its draws repeat one) keeps ≤ 5 % duplicates
    (its real rows: 0.4 %), and each column's pair-cell counts are the draw's."""
    rng = np.random.default_rng(0)
    n = 6000
    df = pd.DataFrame(
        {
            "year": rng.choice(np.arange(1974, 2019, 2), size=n),
            "age": np.clip(rng.normal(45, 15, n).round(), 18, 89).astype(int),
            "kids": rng.poisson(1.5, n).clip(0, 8),
            "work": rng.choice(["full", "part"], size=n),
            "hours": rng.integers(1, 100, n),
        }
    )
    meta = metadata_from_description(WAVES)
    model = TabularPE(1.0, metadata=meta, pool=3000, pool_growth=0, random_state=0).fit(df)
    syn = model.sample(n, random_state=3)
    drawn = model.codes_[_pool_draws(model, n, 3)]
    assert pd.DataFrame(drawn).duplicated().mean() > 0.4  # the pool's own repeats
    assert syn.duplicated().mean() <= 0.05
    for j, binning in enumerate(model.pairs_["binnings"]):
        if binning.spec.is_numeric:
            cells = binning.cells(syn.iloc[:, j].to_numpy(float))
            assert np.array_equal(binning.cells(drawn[:, j]), cells)


SURVEY = """
n_rows: 6000
region: categorical r1, r2, r3, r4, r5, r6, r7, r8
job: categorical j1, j2, j3, j4, j5, j6, j7, j8
school: categorical s1, s2, s3, s4, s5, s6
married: categorical m1, m2, m3, m4, m5
sport: categorical p1, p2, p3, p4, p5, p6, p7, p8, p9, p10
music: categorical u1, u2, u3, u4, u5, u6, u7, u8, u9, u10
wave: integer 2000..2004
"""


def survey_table(n: int = 6000) -> pd.DataFrame:
    """Categories and a 5-value integer: a pool row has no numeric value to spread."""
    rng = np.random.default_rng(0)
    region = rng.integers(8, size=n)
    job = (region + rng.integers(3, size=n)) % 8  # job depends on region
    return pd.DataFrame(
        {
            "region": [f"r{v + 1}" for v in region],
            "job": [f"j{v + 1}" for v in job],
            "school": [f"s{v + 1}" for v in rng.integers(6, size=n)],
            "married": [f"m{v + 1}" for v in rng.integers(5, size=n)],
            "sport": [f"p{v + 1}" for v in rng.integers(10, size=n)],
            "music": [f"u{v + 1}" for v in rng.integers(10, size=n)],
            "wave": rng.integers(2000, 2005, size=n),
        }
    )


def test_the_pool_grows_where_its_draw_would_repeat_rows():
    """A 6000-row draw from a 3000-row pool of such rows must repeat rows; grown with PE
    variations of the rows the draw takes more than once, the pool's draw repeats far fewer."""
    df = survey_table()
    meta = metadata_from_description(SURVEY)
    plain = TabularPE(1.0, metadata=meta, pool=3000, pool_growth=0, random_state=0).fit(df)
    grown = TabularPE(1.0, metadata=meta, pool=3000, random_state=0).fit(df)
    assert len(grown.codes_) > len(plain.codes_)
    rates = [m.sample(len(df), random_state=3).duplicated().mean() for m in (plain, grown)]
    assert rates[1] < rates[0] / 2  # measured: 59 % → 17 % (the private rows: 0.9 %)
