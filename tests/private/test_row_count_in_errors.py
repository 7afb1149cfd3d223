"""No refusal of invalid input says how many rows it has, or how many rows are bad.

Under add/remove adjacency the row count n is private (docs/privacy.md, "What is public"), so
an error message may name the axis that is wrong, a line and a column, and the number of
columns, never n and never a count of rows with a property. Each case below builds the same
invalid input at two row counts (and, for bad cells, with 4 and 5 bad rows, the first one at
the same place), and the two refusals must be the same text, with neither count in it. The
command-line cases read files through ``privevo.cli.main`` and compare its stderr.
"""

from __future__ import annotations

import contextlib
import io
import warnings

import numpy as np
import pandas as pd
import pytest

from helpers.text_doubles import ConstantEmbedder
from privevo import DPKMeans, PrivateEvolution, TabularPE
from privevo.baselines import DPLloyd, FastLloyd, LSHTreeKMeans, NonPrivateKMeans
from privevo.cli import main
from privevo.metrics import kmeans_loss
from privevo.private import nn_histogram
from privevo.selection import Rank
from privevo.tabular import metadata_from_description
from privevo.text import TextPrivateEvolution
from privevo.variation import GaussianVariation, UniformBall

SIZES = (4321, 4322)


def rows(n: int, d: int = 2) -> np.ndarray:
    return np.random.default_rng(0).uniform(-1, 1, (n, d))


def bad_rows(n: int) -> list[int]:
    """Row 3 and the rows from 4318 on: 4 bad rows at n = 4321, 5 at n = 4322."""
    return [3, *range(4318, n)]


def with_nan(n: int) -> np.ndarray:
    X = rows(n)
    X[bad_rows(n), 1] = np.nan
    return X


def pe() -> PrivateEvolution:
    return PrivateEvolution(
        UniformBall(2.0), GaussianVariation(0.1), Rank(), n_synthetic=4, iterations=1,
        epsilon=1.0, delta=1e-5, random_state=0,
    )  # fmt: skip


def kmeans(**kw) -> DPKMeans:
    return DPKMeans(2, epsilon=1.0, radius=2.0, random_state=0, **kw)


def text_pe() -> TextPrivateEvolution:
    return TextPrivateEvolution(
        None, ConstantEmbedder(), n_synthetic=4, iterations=1, epsilon=1.0, delta=1e-5,
        random_state=0, random_api=["tea is good"] * 8, initial_labels=["x"] * 8,
        label_names=["x", "y"],
    )  # fmt: skip


def tabular() -> TabularPE:
    meta = metadata_from_description("a: numeric 0..10\nb: categorical x, y")
    return TabularPE(1.0, 1e-5, meta, n_synthetic=5, iterations=1, random_state=0)


def table(n: int, a=1.0, b="x") -> pd.DataFrame:
    bad = set(bad_rows(n))
    return pd.DataFrame(
        {
            "a": [a if i in bad else 1.0 for i in range(n)],
            "b": [b if i in bad else "x" for i in range(n)],
        }
    )


def fitted_kmeans() -> DPKMeans:
    return kmeans().fit(rows(50))


def dask_rows(n: int, ndim: int):
    da = pytest.importorskip("dask.array")
    X = rows(n)[:, 0] if ndim == 1 else rows(n)[:, :, None]
    return da.from_array(X)


BASELINES = {"DPLloyd": DPLloyd, "FastLloyd": FastLloyd, "LSHTreeKMeans": LSHTreeKMeans}

CASES = {
    "PrivateEvolution, 1-D X": lambda n: pe().fit(rows(n)[:, 0]),
    "PrivateEvolution, 3-D X": lambda n: pe().fit(rows(n)[:, :, None]),
    "PrivateEvolution, NaN cells": lambda n: pe().fit(with_nan(n)),
    "PrivateEvolution, groups of the wrong length": lambda n: pe().fit(
        rows(n), groups=np.arange(n + 1)
    ),
    "PrivateEvolution, 2-D groups": lambda n: pe().fit(rows(n), groups=np.arange(n)[:, None]),
    "PrivateEvolution, 1-D Dask array": lambda n: pe().fit(dask_rows(n, 1)),
    "PrivateEvolution, 3-D Dask array": lambda n: pe().fit(dask_rows(n, 3)),
    "nn_histogram, 1-D private data": lambda n: nn_histogram(rows(n)[:, 0], rows(3)),
    "nn_histogram, 3-D integer data": lambda n: nn_histogram(
        np.zeros((n, 2, 1), dtype=np.int64), rows(3)
    ),
    "nn_histogram, groups of the wrong length": lambda n: nn_histogram(
        rows(n), rows(3), groups=np.zeros(n - 1)
    ),
    "DPKMeans, 1-D X": lambda n: kmeans().fit(rows(n)[:, 0]),
    "DPKMeans, 3-D X": lambda n: kmeans().fit(rows(n)[:, :, None]),
    "DPKMeans, no columns": lambda n: kmeans().fit(np.zeros((n, 0))),
    "DPKMeans, NaN cells": lambda n: kmeans().fit(with_nan(n)),
    "DPKMeans replace, 1-D X": lambda n: kmeans(adjacency="replace").fit(rows(n)[:, 0]),
    "DPKMeans.predict, 1-D X": lambda n: fitted_kmeans().predict(rows(n)[:, 0]),
    "NonPrivateKMeans, 1-D X": lambda n: NonPrivateKMeans(2).fit(rows(n)[:, 0]),
    **{
        f"{name}, {ndim}-D X": (
            lambda n, cls=cls, ndim=ndim: cls(2, bounds=(-1, 1)).fit(
                rows(n)[:, 0] if ndim == 1 else rows(n)[:, :, None]
            )
        )
        for name, cls in BASELINES.items()
        for ndim in (1, 3)
    },
    "DPLloyd, no columns": lambda n: DPLloyd(2, bounds=(-1, 1)).fit(np.zeros((n, 0))),
    "TextPrivateEvolution, 1-D embeddings": lambda n: text_pe().fit(embeddings=rows(n)[:, 0]),
    "TextPrivateEvolution, 3-D embeddings": lambda n: text_pe().fit(embeddings=rows(n)[:, :, None]),
    "TextPrivateEvolution, labels of the wrong length": lambda n: text_pe().fit(
        ["a good meal"] * n, labels=["x"] * (n + 1)
    ),
    "TabularPE, infinite cells": lambda n: tabular().fit(table(n, a=np.inf)),
    "TabularPE, unknown categories": lambda n: tabular().fit(table(n, b="z")),
    "kmeans_loss, 1-D points": lambda n: kmeans_loss(rows(n)[:, 0], rows(3)),
}


def refusal(case, n: int) -> str:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises((ValueError, TypeError)) as refused:
            case(n)
    return str(refused.value)


def assert_no_row_count(messages: list[str]) -> None:
    """Neither n is printed, and the two refusals (n and n + 1 rows, 4 and 5 bad rows) are one
    text: no count of rows, or of bad rows, in any form."""
    assert messages[0] == messages[1], messages
    for n in SIZES:
        assert str(n) not in messages[0], messages[0]


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_refusal_does_not_depend_on_the_row_count(case):
    assert_no_row_count([refusal(CASES[case], n) for n in SIZES])


# -- the command line --------------------------------------------------------------------


def csv_text(n: int, cell: str) -> str:
    cells = rows(n).round(3).astype(object)
    cells[bad_rows(n), 1] = cell
    return "x,y\n" + "".join(f"{a},{b}\n" for a, b in cells)


def parquet_with_nulls(n: int, path) -> None:
    pytest.importorskip("pyarrow")
    bad = set(bad_rows(n))
    y = pd.array([None if i in bad else 0.5 for i in range(n)], dtype="Float64")
    pd.DataFrame({"x": rows(n)[:, 0], "y": y}).to_parquet(path)


FILES = {
    "CSV, NaN cells": ("data.csv", lambda n, p: p.write_text(csv_text(n, "nan"))),
    "CSV, infinite cells": ("data.csv", lambda n, p: p.write_text(csv_text(n, "-inf"))),
    "CSV, empty cells": ("data.csv", lambda n, p: p.write_text(csv_text(n, ""))),
    "CSV, ragged rows": ("data.csv", lambda n, p: p.write_text(csv_text(n, "1,2"))),
    ".npy, 1-D array": ("data.npy", lambda n, p: np.save(p, rows(n)[:, 0])),
    ".npy, 3-D array": ("data.npy", lambda n, p: np.save(p, rows(n)[:, :, None])),
    ".npy, no columns": ("data.npy", lambda n, p: np.save(p, np.zeros((n, 0)))),
    ".npy, NaN cells": ("data.npy", lambda n, p: np.save(p, with_nan(n))),
    "Parquet, null cells": ("data.parquet", parquet_with_nulls),
    "folder of .npy, a 3-D part": ("parts/a.npy", lambda n, p: np.save(p, rows(n)[:, :, None])),
    "folder of .npy, NaN cells": ("parts/a.npy", lambda n, p: np.save(p, with_nan(n))),
}

COMMANDS = {
    "kmeans": ["--k", "2", "--epsilon", "1", "--radius", "2"],
    "synth": ["--m", "3", "--epsilon", "1", "--radius", "2", "--iterations", "1"],
}


def cli_refusal(argv: list[str]) -> str:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        status = main(argv)
    assert status == 2, err.getvalue()
    return err.getvalue().strip()


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("case", sorted(FILES))
def test_a_command_line_refusal_does_not_depend_on_the_row_count(tmp_path, command, case):
    name, write = FILES[case]
    path = tmp_path / name
    path.parent.mkdir(exist_ok=True)
    data = path.parent if "/" in name else path
    messages = []
    for n in SIZES:  # one file name for both sizes: the message names the file
        path.unlink(missing_ok=True)
        write(n, path)
        argv = [command, str(data), *COMMANDS[command], "--out", str(tmp_path / "out.csv")]
        messages.append(cli_refusal(argv))
    assert_no_row_count(messages)
