"""No error path names a secret: the seed's value, or any cell of the input.

Each case plants distinctive values (a seed, cells no code would print by chance) and
provokes a refusal after the data reach the estimator; the message and every warning
are scanned. The CLI's own odd-input harness lives in tests/cli/.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from helpers.text_doubles import ConstantEmbedder
from privevo import DPKMeans, PrivateEvolution, TabularPE, accounting
from privevo.selection import Rank
from privevo.tabular import metadata_from_description
from privevo.text import TextPrivateEvolution
from privevo.variation import (
    GaussianVariation,
    UniformBall,
)

SEED = 987_654_321


CELLS = ("123.456789", "7.654321", "078-05-1120", "3.14159")


def points(n: int = 40) -> np.ndarray:
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (n, 3))
    X[3] = [123.456789, 7.654321, 3.14159]
    return X


def pe(**kw) -> PrivateEvolution:
    base = dict(
        random_api=UniformBall(2.0),
        variation_api=GaussianVariation(0.1),
        selector=Rank(),
        n_synthetic=4,
        iterations=2,
        epsilon=1.0,
        delta=1e-5,
        random_state=SEED,
    )
    return PrivateEvolution(**{**base, **kw})


def with_nan(X):
    X = X.astype(object)
    X[5, 1] = np.nan
    return X.astype(float)


def with_string(X):
    X = X.astype(object)
    X[5, 1] = "078-05-1120"
    return X


def tabular() -> TabularPE:
    meta = metadata_from_description("a: numeric 0..10\nb: categorical x, y")
    return TabularPE(1.0, 1e-5, meta, n_synthetic=5, iterations=1, random_state=SEED)


def text_pe() -> TextPrivateEvolution:
    return TextPrivateEvolution(
        None, ConstantEmbedder(), n_synthetic=4, iterations=1, epsilon=1.0, delta=1e-5,
        random_state=SEED, random_api=["tea is good"] * 8,
    )  # fmt: skip


def kmeans(k: int = 3) -> DPKMeans:
    return DPKMeans(k, epsilon=1, radius=2, random_state=SEED)


CASES = {
    "DPKMeans, NaN cell": lambda: kmeans().fit(with_nan(points())),
    "DPKMeans, string cell": lambda: kmeans().fit(with_string(points())),
    "DPKMeans, inf cell": lambda: kmeans().fit(
        np.where(np.arange(120).reshape(40, 3) == 7, np.inf, points())
    ),
    "DPKMeans, 1-D input": lambda: kmeans().fit(points()[:, 0]),
    "DPKMeans, k > n": lambda: kmeans(50).fit(points()),
    "PE, NaN cell": lambda: pe().fit(with_nan(points())),
    "PE, string cell": lambda: pe().fit(with_string(points())),
    "PE, wrong width": lambda: pe(random_api=np.zeros((4, 2))).fit(points()),
    "PE, defaulted delta too large": lambda: pe(delta=accounting.DefaultDelta(0.5)).fit(points()),
    "TabularPE, string in a numeric column": lambda: tabular().fit(
        pd.DataFrame({"a": ["078-05-1120", "3.14159"], "b": ["x", "y"]})
    ),
    "TextPE, a number among the texts": lambda: text_pe().fit(
        ["a good meal", 3.14159, "078-05-1120"]
    ),
    "TabularPE, missing column": lambda: tabular().fit(pd.DataFrame({"a": [7.654321, 3.14159]})),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_refusal_names_no_cell_and_no_seed(case):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises((ValueError, TypeError)) as refused:
            CASES[case]()
    texts = [str(refused.value), *(str(w.message) for w in caught)]
    for text in texts:
        assert str(SEED) not in text, text
        for cell in CELLS:
            assert cell not in text, text
    assert len(str(refused.value).splitlines()) == 1, str(refused.value)


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
