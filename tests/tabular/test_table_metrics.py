"""The synthetic-table metrics: marginal TVD and downstream accuracy."""

from __future__ import annotations

import pytest

pd = pytest.importorskip("pandas")

from helpers.tables import small_table  # noqa: E402
from privevo.evaluation import downstream_accuracy, marginal_tvd  # noqa: E402
from privevo.tabular import ColumnSpec, TableMetadata  # noqa: E402


def test_marginal_tvd_values(meta):
    df = small_table()
    assert marginal_tvd(df, df, meta) == 0.0 and marginal_tvd(df, df, meta, 2) == 0.0
    one = ColumnSpec("c", "categorical", categories=("a", "b"))
    m = TableMetadata((one,))
    real, syn = pd.DataFrame({"c": ["a"] * 3 + ["b"]}), pd.DataFrame({"c": ["a", "b"]})
    assert marginal_tvd(real, syn, m) == pytest.approx(0.25)  # ½(|.75 − .5| + |.25 − .5|)
    with pytest.raises(ValueError, match="way"):
        marginal_tvd(df, df, meta, 3)


def test_downstream_accuracy(meta):
    train, test = small_table(300, seed=1), small_table(200, seed=2)
    from sklearn.linear_model import LogisticRegression

    scores = downstream_accuracy(
        train, train, test, "flag", meta, LogisticRegression(max_iter=1000)
    )
    assert scores["real"] > 0.95 and scores["synthetic"] == scores["real"]
    with pytest.raises(ValueError, match="target"):
        downstream_accuracy(train, train, test, "size", meta)
