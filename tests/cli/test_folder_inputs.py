"""Folders of parts as input: read like the one file they split, and a broken part or a NaN in
a folder named in a one-line error."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from helpers.cli import SYNTH, swap
from privevo.cli import main


@pytest.mark.parametrize(
    "extra", [[], ["--plot", "-o", "{o}/s.csv"]], ids=["streamed", "in memory"]
)
def test_folder_errors_name_the_file(tmp_path, cli, extra):
    X = np.random.default_rng(0).normal(size=(1000, 2))
    for name, rows in (("broken", X), ("nan", X.copy())):
        (tmp_path / name).mkdir()
        rows[700, 1] = np.nan if name == "nan" else rows[700, 1]
        for i in range(2):
            part = rows[500 * i : 500 * (i + 1)]
            table = pa.table({"a": part[:, 0], "b": part[:, 1]})
            pq.write_table(table, tmp_path / name / f"p{i}.parquet")
    raw = bytearray((tmp_path / "broken" / "p1.parquet").read_bytes())
    raw[4:2000] = (bytes(range(256)) * 8)[:1996]  # data pages destroyed, the footer intact
    (tmp_path / "broken" / "p1.parquet").write_bytes(bytes(raw))
    (tmp_path / "o").mkdir()
    extra = [a.format(o=tmp_path / "o") for a in extra]
    broken = f"{tmp_path}/broken/p1.parquet is not a readable Parquet file"
    for name, message in (("broken", broken), ("nan", f"{tmp_path}/nan: ")):
        argv = swap(SYNTH, data=tmp_path / name, m=2, radius=3, iterations=2)
        code, out, err = cli([*argv, "-q", *extra])
        assert code == 2 and len(err.strip().splitlines()) == 1 and message in err, err
        assert "NaN or infinite" in err or name == "broken"
        assert list((tmp_path / "o").iterdir()) == [] and out == ""


def _cli_points(path) -> np.ndarray:
    return np.loadtxt(path, delimiter=",", skiprows=1)


def test_cli_reads_a_parquet_folder(tmp_path):

    rng = np.random.default_rng(3)
    X = np.vstack([rng.normal(c, 0.1, size=(600, 2)) for c in ([0.5, 0.5], [-0.5, 0.0])])
    np.save(tmp_path / "x.npy", X)
    (tmp_path / "pq").mkdir()
    for i, part in enumerate(np.array_split(X, 3)):
        pq.write_table(
            pa.table({"a": part[:, 0], "b": part[:, 1], "id": np.arange(len(part))}),
            tmp_path / "pq" / f"p{i}.parquet",
        )
    common = ["--epsilon", "2", "--radius", "1", "--iterations", "3", "-q"]
    options = {
        "synth": ["--m", "4", "--selector", "rank", "--seed", "1", *common],
        "kmeans": ["--k", "2", "--seed", "0", *common],
    }
    folder = [str(tmp_path / "pq"), "--columns", "a,b"]
    for command, flags in options.items():  # the folder's two feature columns = the .npy file
        outputs = [tmp_path / f"{command}_{source}.csv" for source in ("npy", "pq")]
        assert main([command, str(tmp_path / "x.npy"), *flags, "-o", str(outputs[0])]) == 0
        assert main([command, *folder, *flags, "-o", str(outputs[1])]) == 0
        np.testing.assert_array_equal(_cli_points(outputs[1]), _cli_points(outputs[0]))
    synth = options["synth"]
    assert main(["synth", str(tmp_path / "pq"), "--columns", "zz", *synth]) == 2
    scheduler = ["--backend", "numpy", "--scheduler", "tcp://127.0.0.1:1"]
    assert main(["synth", str(tmp_path / "pq"), *synth, *scheduler]) == 2
