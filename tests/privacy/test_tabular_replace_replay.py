"""Neighbour replay of TabularPE under replace adjacency: D and D' with one row replaced publish the
same bytes once the releases are pinned (tests/helpers/neighbour.py; docs/privacy.md, "What may
depend on the data"). The row count is public under replace, so it is the same on both sides.

Mirrors the add/remove tabular replays of test_neighbour_replay.py: the same kind of table, the
default selector, fitted in memory and from a Parquet folder.
"""

from __future__ import annotations

import shutil

import numpy as np
import pandas as pd
import pytest

from helpers.neighbour import assert_neighbour_safe, estimator_artefacts
from privevo import TabularPE
from privevo.tabular import metadata_from_description

DESCRIPTION = """
color: categorical red, green, blue, other | other=other
size: integer 0..100
weight: integer 0..2000 | nullable
amount: numeric 0..2000
"""


def table(n: int = 120) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame(
        {
            "color": rng.choice(["red", "green", "blue"], n),
            "size": rng.integers(0, 100, n),
            "weight": rng.integers(500, 1500, n),  # integer-looking numbers: int64
            "amount": rng.integers(500, 1500, n),
        }
    )


def _replaced(**cells) -> pd.DataFrame:
    """``table()`` with row 0's ``cells`` replaced (the same number of rows)."""
    df = table()
    for column, value in cells.items():
        if pd.isna(value) or isinstance(value, float):
            df[column] = df[column].astype(float)
        else:
            df[column] = df[column].astype(object if isinstance(value, str) else df[column].dtype)
        df.loc[0, column] = value
    return df


REPLACED = {
    "an extreme value": _replaced(weight=10**9, amount=-(10**9)),
    "a new category (other)": _replaced(color="purple"),
    "a missing value": _replaced(weight=np.nan),
    "a row unlike any other": _replaced(color="purple", size=10**6, weight=np.nan, amount=0.5),
}


def tabular_pe(meta, iterations: int) -> TabularPE:
    return TabularPE(
        4.0,
        1e-5,
        meta,
        n_synthetic=20,
        iterations=iterations,
        pool=200,
        adjacency="replace",
        random_state=0,
    )


@pytest.mark.parametrize("neighbour", sorted(REPLACED))
def test_tabular_pe_replace(neighbour):
    meta = metadata_from_description(DESCRIPTION)
    assert len(REPLACED[neighbour]) == len(table())

    def run(df):
        est = tabular_pe(meta, iterations=2).fit(df)  # the first round's selection shapes the rows
        sample = est.sample(50, random_state=1)
        assert est.privacy_report_["adjacency"] == "replace"
        return {
            "csv": sample.to_csv(index=False),
            "dtypes": [str(t) for t in sample.dtypes],
            "report": estimator_artefacts(est)["privacy_report_"],
        }

    assert_neighbour_safe(run, table(), REPLACED[neighbour])


def write_parquet(folder, df) -> None:
    """The table as a folder of two Parquet parts (row groups of 50 rows)."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir()
    half = len(df) // 2
    df.iloc[:half].to_parquet(folder / "part-0.parquet", row_group_size=50)
    df.iloc[half:].to_parquet(folder / "part-1.parquet", row_group_size=50)


@pytest.mark.parametrize("neighbour", sorted(REPLACED))
def test_tabular_pe_replace_parquet_folder(tmp_path, neighbour):
    """The block-by-block path: the table read from a Parquet folder."""
    pytest.importorskip("pyarrow")
    meta = metadata_from_description(DESCRIPTION)

    def run(df):
        write_parquet(tmp_path / "table", df)
        est = tabular_pe(meta, iterations=1)
        sample = est.fit(tmp_path / "table").sample(50, random_state=1)
        return {"csv": sample.to_csv(index=False), "report": estimator_artefacts(est)}

    assert_neighbour_safe(run, table(), REPLACED[neighbour])
