"""Fixtures of the command-line tests: the shared input files, the check that no test changes
them, and a guard that no model is loaded."""

from __future__ import annotations

import os

import numpy as np
import pytest

from helpers.cli import digests
from privevo.cli import main


@pytest.fixture(scope="session")
def files(tmp_path_factory, mixture400):
    """A folder of inputs, good and bad: the 2-D mixture as CSV and .npy, broken files, a
    folder of parts, and finished checkpoints of another synth run and of a kmeans run."""
    d = tmp_path_factory.mktemp("data")
    X = mixture400
    np.savetxt(d / "mix.csv", X, delimiter=",", header="x,y", comments="")
    np.save(d / "mix.npy", X)
    np.savetxt(d / "huge.csv", X * 1e300, delimiter=",", header="x,y", comments="")
    (d / "numhead.csv").write_text("1,2\n" + (d / "mix.csv").read_text().split("\n", 1)[1])
    (d / "one.csv").write_text("x,y\n0.1,0.2\n")
    (d / "empty.csv").write_text("")
    (d / "header.csv").write_text("x,y\n")
    (d / "text.csv").write_text("x,label\n1,a\n2,b\n")
    (d / "nan.csv").write_text("x,y\n1,2\nnan,3\n")
    (d / "inf.csv").write_text("x,y\n1,2\n3,inf\n")
    (d / "gap.csv").write_text("x,y\n1,2\n3,\n")
    (d / "ragged.csv").write_text("x,y\n1,2\n3,4,5\n")
    (d / "firstgap.csv").write_text("0.7316,\n0.25,0.5\n0.125,0.75\n")
    (d / "secret.csv").write_text("x,y\n1,2\n3,Jane Roe\n")
    np.save(d / "oned.npy", np.arange(10.0))
    (d / "junk.npy").write_bytes(b"\x00junk")
    (d / "random.npy").write_bytes(b"\x93NUMPY\x01\x00" + bytes(range(256)) * 4)
    (d / "folder.csv").mkdir()
    (d / "afile").write_text("x")
    (d / "junk.ckpt").write_bytes(b"junk")
    (d / "parts").mkdir()
    np.save(d / "parts" / "a.npy", X[:200])
    np.save(d / "parts" / "b.npy", X[200:])
    _mixed_folder(d / "mixed", X)
    os.symlink(d / "mix.csv", d / "link.csv")
    # finished checkpoints of another synth run (epsilon 4, seed 1) and of a kmeans run
    other_synth = ["--m", "3", "--selector", "rank", "--epsilon", "4", "--iterations", "3"]
    for command, options, name in (
        ("synth", [*other_synth, "--seed", "1"], "other"),
        ("kmeans", ["--k", "2", "--epsilon", "1"], "km"),
    ):
        argv = [command, d / "mix.csv", *options, "--radius", "2", "-q"]
        argv += ["--checkpoint", d / f"{name}.ckpt", "-o", d / f"{name}.csv"]
        assert main([str(a) for a in argv]) == 0
    return d


def _mixed_folder(folder, X) -> None:
    """A folder of one .npy part and one Parquet part (refused: one format per folder)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder.mkdir()
    np.save(folder / "a.npy", X[:200])
    pq.write_table(pa.table({"0": X[200:, 0], "1": X[200:, 1]}), folder / "b.parquet")


@pytest.fixture(autouse=True)
def files_unchanged(request):
    """A test that reads the shared input files leaves them byte for byte, and adds none."""
    if "files" not in request.fixturenames:
        yield
        return
    folder = request.getfixturevalue("files")
    before = digests(folder)
    yield
    assert digests(folder) == before


@pytest.fixture
def no_model(monkeypatch):
    """The text commands may not load a model in these tests."""
    from privevo.cli import text as cli_text

    monkeypatch.setattr(cli_text, "_models", lambda args: pytest.fail("a model was loaded"))
