"""A declared target's relations survive the post-processing: margins pooled over every
release that counts a column, sparse rows of a noisy table left to the product, the output
pool's column-by-column support rows (docs/tabular.md, "A declared target")."""

from __future__ import annotations

import math
import warnings
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from privevo import TabularPE
from privevo.tabular import metadata_from_description
from privevo.tabular.measure import pool_margins
from privevo.tabular.pairs import PairBinning, consistent_joint
from privevo.tabular.pool import POOL_SUPPORT, pool_rows

RARE = """
n_rows: 2400
deny: categorical no, yes
insurance: categorical no, yes
group: categorical a, b, c
history: integer 1..6
ratio: numeric 0..3
"""


def rare_table(n: int = 2400, seed: int = 0) -> pd.DataFrame:
    """A mortgage-like table: 40 rows with insurance denied, 90 % of them denied against
    10 % of the others (the gap a reader looks for, in a category smaller than 2σ)."""
    rng = np.random.default_rng(seed)
    insurance = np.where(np.arange(n) < 40, "yes", "no")
    rate = np.where(insurance == "yes", 0.9, 0.1)
    return pd.DataFrame(
        {
            "deny": np.where(rng.random(n) < rate, "yes", "no"),
            "insurance": insurance,
            "group": rng.choice(["a", "b", "c"], size=n),
            "history": rng.integers(1, 7, n),
            "ratio": np.round(rng.gamma(4.0, 0.08, n), 3),
        }
    )


def _binning(values: int) -> PairBinning:
    spec = SimpleNamespace(is_numeric=False, nullable=False, may_be_empty=False)
    return PairBinning(spec, np.full(values, 1.0 / values))


def test_margins_are_pooled_by_inverse_variance():
    """1-way counts (σ_m = 2) and a 2 × 3 table's margin (σ = 1: row sums of 3 cells, variance
    3) of the same column: the estimate weights them 1/4 and 1/3."""
    binnings = [_binning(2), _binning(3)]
    marginals = {
        "release": SimpleNamespace(sigma=2.0),
        "noisy": [np.array([90.0, -10.0]), np.array([30.0, 30.0, 30.0])],
        "targets": [np.array([1.0, 0.0]), np.full(3, 1 / 3)],
    }
    table = np.array([[20.0, 20.0, 20.0], [10.0, 10.0, 10.0]])
    pool_margins(binnings, [([(0, 1)], [table.ravel()], 1.0)], marginals)
    pooled = (np.array([90.0, -10.0]) / 4 + table.sum(axis=1) / 3) / (1 / 4 + 1 / 3)
    np.testing.assert_allclose(marginals["targets"][0], pooled / pooled.sum())
    assert marginals["targets"][0][1] > 0  # the category the 1-way noise zeroed keeps its rows
    assert binnings[0].p is marginals["targets"][0]


def test_a_sparse_row_left_to_noise_survivors_takes_the_product():
    """Row 1 holds 30 rows over 10 cells; σ = 20: the one cell its noise lifts over the cut
    would carry all its mass. It takes the product of the 1-way shares instead; a dense row
    keeps its measured shape."""
    dense = np.array([400.0, 300.0, 200.0, 100.0, 50.0, 50.0, 30.0, 25.0, 25.0, 20.0])
    p_a, p_b = np.array([0.9, 0.1]), dense / dense.sum()
    sparse = np.array([25.0, 12.0, 3.0, 10.0, 15.0, 0.0, 18.0, 5.0, 8.0, 0.0])
    table = consistent_joint(np.vstack([dense, sparse]), p_a, p_b, cut=20.0)
    row = table[1] / table[1].sum()
    assert np.count_nonzero(row) == 10 and row[0] < 0.5  # not all of it in the cell at 25
    assert np.count_nonzero(table[0]) == 10 and table[0, 0] > 5 * table[0, -1]


def test_part_of_the_pool_is_drawn_column_by_column():
    draws = []

    def joint(n, rng):
        draws.append(n)
        return np.zeros((n, 2))

    def column(spec, n, rng):
        return np.ones(n)

    metadata = SimpleNamespace(columns=[None, None])
    api = SimpleNamespace(joint=joint, column=column, embedding=SimpleNamespace(metadata=metadata))
    api.sample_codes = joint
    rows = pool_rows(api, 1000, np.random.default_rng(0))
    support = int(POOL_SUPPORT * 1000)
    assert draws == [1000 - support] and rows.shape == (1000, 2)
    assert (rows[-support:] == 1).all() and (rows[:-support] == 0).all()


@pytest.mark.slow
def test_a_small_category_keeps_its_gap_with_the_target_declared():
    """40 rows, 90 % vs 10 % denied, ε = 1, N = 2400: the sign is kept in ≥ 4 of 5 seeds
    (σ of a target cell ≈ 20: the rate in 40 rows is resolved to about ±0.5)."""
    meta, df = metadata_from_description(RARE), rare_table()
    kept = 0
    for seed in range(5):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            model = TabularPE(1.0, metadata=meta, target="deny", random_state=seed).fit(df)
        syn = model.sample(2400, random_state=seed)
        rate = (syn.deny == "yes").groupby(syn.insurance).mean()
        kept += bool(rate.get("yes", math.nan) > rate.get("no", math.nan))
    assert kept >= 4
