"""Public structure declared in a description: derived columns, numeric value sets and steps,
categories that may be empty, date/time columns declared numeric."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from privevo.tabular import TableMetadata, TabularPE, metadata_from_description

DESCRIPTION = """
n_rows: 600
kind: categorical a, b, c, never | may be empty
wage: numeric 1..400
logwage: derived log(wage)
unemp: numeric values 3.1, 4.5, 6.0
hours: numeric 0..80 step 2.5
"""


def _table(n: int = 600, seed: int = 0, logwage: bool = False) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    wage = np.exp(rng.normal(4.5, 0.4, n)).clip(1, 400)
    df = pd.DataFrame(
        {
            "kind": rng.choice(["a", "b", "c"], n, p=[0.5, 0.3, 0.2]),
            "wage": wage,
            "unemp": rng.choice([3.1, 4.5, 6.0], n),
            "hours": rng.uniform(0, 80, n),
        }
    )
    if logwage:
        df.insert(2, "logwage", rng.normal(size=n))  # garbage: the fit must never read it
    return df


def _fit(df, description: str = DESCRIPTION, seed: int = 3) -> TabularPE:
    meta = metadata_from_description(description, list(df.columns))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return TabularPE(1.0, metadata=meta, random_state=seed).fit(df)


@pytest.fixture(scope="module")
def fitted():
    return _fit(_table())


def test_derived_column_agrees_in_every_row_and_keeps_its_place(fitted):
    out = fitted.sample(800)
    assert list(out.columns) == ["kind", "wage", "logwage", "unemp", "hours"]
    assert np.allclose(out["logwage"], np.log(out["wage"]), rtol=0, atol=1e-12)
    assert "logwage" not in fitted.metadata_.names  # never measured
    assert list(fitted.population_.columns) == list(out.columns)


def test_derived_column_in_the_data_is_dropped_not_read():
    plain = _fit(_table()).sample(300, random_state=5)
    holding = _fit(_table(logwage=True))
    assert list(holding.sample(1).columns) == list(plain.columns)
    pd.testing.assert_frame_equal(holding.sample(300, random_state=5), plain)


def test_value_sets_and_steps_snap_every_synthetic_value(fitted):
    out = fitted.sample(800)
    assert set(out["unemp"]) <= {3.1, 4.5, 6.0}
    k = out["hours"] / 2.5
    assert np.allclose(k, np.round(k)) and out["hours"].between(0, 80).all()


def test_may_be_empty_category_gets_no_rows(fitted):
    assert "never" not in set(fitted.sample(2000)["kind"])
    assert (fitted.population_["kind"] != "never").all()


def test_metadata_json_round_trip_keeps_the_structure():
    meta = metadata_from_description(DESCRIPTION)
    again = TableMetadata.from_dict(meta.as_dict())
    assert again == meta
    assert again.output_names == ["kind", "wage", "logwage", "unemp", "hours"]
    assert meta["unemp"].values == (3.1, 4.5, 6.0) and meta["hours"].step == 2.5
    assert meta["kind"].may_be_empty


@pytest.mark.parametrize(
    "line, words",
    [
        ("y: derived __import__('os')", "not an allowed function call"),
        ("y: derived wage.real", "not allowed"),
        ("y: derived wage > 3", "not allowed"),
        ("y: derived log(wage, base=2)", "not an allowed function call"),
        ("y: derived 'text'", "not a number"),
        ("y: derived wage +", "not an expression"),
        ("y: derived log(pay)", "uses ['pay']"),
        ("y: derived log(kind)", "not numeric"),
        ("y: derived round(wage, 1.5)", "digits must be a whole number"),
        ("y: derived min(wage)", "min() takes 2 or more"),
    ],
)
def test_bad_derived_expression_names_the_line(line, words):
    text = "kind: categorical a, b\nwage: numeric 0..10\n" + line
    with pytest.raises(ValueError, match="description line 3") as err:
        metadata_from_description(text)
    assert words in str(err.value) and "\n" not in str(err.value)


def test_derived_cycle_and_duplicate_are_refused():
    cycle = "wage: numeric 0..10\nx: derived y + 1\ny: derived x * 2\n"
    with pytest.raises(ValueError, match=r"description line 2: .*\['x', 'y'\] .* cycle"):
        metadata_from_description(cycle)
    chained = metadata_from_description("wage: numeric 1..10\nx: derived wage * 2\ny: derived x")
    assert [d.name for d in chained.derived] == ["x", "y"]


@pytest.mark.parametrize(
    "line, words",
    [
        ("u: numeric values 3.1", "two or more values"),
        ("u: numeric values 3.1, x", "write its values as numbers"),
        ("u: numeric values 1, 1, 2", "each listed once"),
        ("u: numeric 0..10 step 1", "write|'integer 0..10'"),
        ("u: integer 0..10 step 1", "'integer 0..10'"),
        ("u: integer 0..10 step 2.5", "whole number"),
        ("u: numeric 0..10 step -1", "must be a number > 0"),
        ("u: numeric 0..10 step 20", "at most upper - lower"),
        ("u: numeric 0..10 | may be empty", "for categorical and boolean columns"),
        ("u: categorical a | may be", "unknown option"),
    ],
)
def test_bad_structure_keyword_names_line_and_column(line, words):
    with pytest.raises(ValueError, match="description line 2: .*'u'") as err:
        metadata_from_description("kind: categorical a, b\n" + line)
    assert any(w in str(err.value) for w in words.split("|"))


def test_derived_json_entry_is_checked():
    bad = {"columns": [{"name": "w", "kind": "numeric", "lower": 0, "upper": 1}]}
    bad["columns"].append({"name": "x", "kind": "derived", "expr": "w"})
    with pytest.raises(ValueError, match="metadata column #1: a derived column"):
        TableMetadata.from_dict(bad)


def test_non_finite_derived_values_are_missing():
    meta = metadata_from_description("w: numeric 0..10\nx: derived log(w)\ny: derived 1 / w")
    from privevo.tabular.encoding import decode_codes

    out = decode_codes(np.array([[0.0], [np.e]]), meta)
    assert np.isnan(out["x"][0]) and np.isnan(out["y"][0]) and out["x"][1] == pytest.approx(1)


def _dates() -> pd.DataFrame:
    days = pd.to_datetime(["2020-01-01", "2021-06-01", "2019-03-04"] * 10)
    return pd.DataFrame({"d": days, "x": [1.0, 2.0, 3.0] * 10})


def test_parquet_timestamp_declared_numeric_is_refused(tmp_path):
    path = tmp_path / "t.parquet"
    _dates().to_parquet(path)
    meta = metadata_from_description("d: numeric 0..90\nx: numeric 0..10")
    with pytest.raises(ValueError, match="column 'd' holds dates or times .* declare it"):
        TabularPE(1.0, metadata=meta, random_state=0).fit(str(path))


def test_csv_dates_declared_numeric_are_refused(tmp_path):
    path = tmp_path / "t.csv"
    _dates().to_csv(path, index=False)
    meta = metadata_from_description("d: numeric 0..90\nx: numeric 0..10")
    df = pd.read_csv(path, dtype=str)
    with pytest.raises(ValueError, match="column 'd' row 0 is not a finite number .* declare"):
        TabularPE(1.0, metadata=meta, random_state=0).fit(df)


@pytest.mark.parametrize("fmt", ["csv", "csv without it", "parquet"])
def test_cli_reads_a_table_with_or_without_its_derived_column(tmp_path, fmt):
    from privevo.cli import main

    df = _table(300, logwage=fmt != "csv without it")
    data = tmp_path / ("t.parquet" if fmt == "parquet" else "t.csv")
    df.to_parquet(data) if fmt == "parquet" else df.to_csv(data, index=False)
    (tmp_path / "d.txt").write_text(DESCRIPTION)
    meta, out = tmp_path / "m.json", tmp_path / "syn.csv"
    argv = ["metadata", str(data), "--public-description", str(tmp_path / "d.txt")]
    assert main([*argv, "-o", str(meta)]) == 0
    argv = ["synth-table", str(data), "--metadata", str(meta), "--epsilon", "1", "--seed", "7"]
    assert main([*argv, "--rows", "50", "-q", "-o", str(out)]) == 0
    syn = pd.read_csv(out)
    assert list(syn.columns) == ["kind", "wage", "logwage", "unemp", "hours"]
    assert np.allclose(syn["logwage"], np.log(syn["wage"]))


def test_cli_refuses_a_derived_column_of_a_dropped_column(tmp_path, capsys):
    from privevo.cli import main

    _table(100).to_csv(tmp_path / "t.csv", index=False)
    (tmp_path / "d.txt").write_text(DESCRIPTION)
    argv = ["metadata", str(tmp_path / "t.csv"), "--public-description", str(tmp_path / "d.txt")]
    assert main([*argv, "-o", str(tmp_path / "m.json")]) == 0
    argv = ["synth-table", str(tmp_path / "t.csv"), "--metadata", str(tmp_path / "m.json")]
    assert main([*argv, "--epsilon", "1", "--drop", "wage", "-o", str(tmp_path / "o.csv")]) == 2
    err = capsys.readouterr().err.strip()
    assert "derived column 'logwage' uses ['wage']" in err and "\n" not in err


def test_without_empty_is_post_processing_of_released_counts():
    from types import SimpleNamespace

    from privevo.tabular.structure import without_empty

    meta = metadata_from_description("k: categorical a, b, c | may be empty\nw: numeric 0..1")
    noisy = [np.array([50.0, 9.9, 10.0]), np.ones(10)]
    targets = [np.array([0.7, 0.15, 0.15]), np.full(10, 0.1)]
    release = SimpleNamespace(sigma=5.0)
    out = without_empty({"noisy": noisy, "targets": targets, "release": release}, meta)
    assert np.allclose(out["targets"][0], [0.7 / 0.85, 0, 0.15 / 0.85])
    assert out["targets"][1] is targets[1]
    flat = {"noisy": [np.array([3.0, 2.0, 1.0]), noisy[1]], "targets": targets, "release": release}
    assert np.allclose(without_empty(flat, meta)["targets"][0], targets[0])  # none stands out


@pytest.mark.parametrize("seed", [0, 3, 5])
def test_may_be_empty_holds_with_a_target_whose_tables_pool_the_shares(seed):
    """The 2-way tables' margins re-estimate 1-way shares (measure.pool_margins); a category
    the released 1-way counts emptied must not come back through their noise."""
    df = _table(3000)
    df["y"] = np.random.default_rng(1).choice(["no", "yes"], len(df))
    description = DESCRIPTION.replace("n_rows: 600", "n_rows: 3000") + "y: categorical no, yes\n"
    meta = metadata_from_description(description, list(df.columns))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = TabularPE(1.0, metadata=meta, random_state=seed, target="y").fit(df)
    assert "never" not in set(model.sample(5000)["kind"])
