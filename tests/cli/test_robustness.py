"""Odd, careless or hostile command lines: each ends with exit 2 and one line on stderr that
names the file, the flag or the position at fault (never a cell), and every file the command
names is left as it was (SHA-256 before and after)."""

from __future__ import annotations

import os
import stat

import numpy as np
import pytest

from helpers.cli import digests
from privevo.checkpoint import _MAGIC
from privevo.cli import main

CELL = "98765.4321"  # a planted cell: no message may quote it


def _refused(argv, folder, capsys, *expected: str) -> str:
    before = digests(folder)
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert code == 2, (code, err)
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert "internal error" not in err and CELL not in out + err
    for text in expected:
        assert text in err, err
    assert digests(folder) == before
    return err


@pytest.fixture
def d(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    X[3, 0] = float(CELL)
    np.savetxt(tmp_path / "p.csv", X, delimiter=",", header="x,y", comments="", fmt="%.10g")
    return tmp_path


SYNTH = ["synth", "{d}/p.csv", "--m", "5", "--iterations", "1", "--epsilon", "1"]
KMEANS = ["kmeans", "{d}/p.csv", "--k", "2", "--epsilon", "1"]


def _fill(argv, d):
    return [str(a).replace("{d}", str(d)) for a in argv]


# -- a folder read in part ------------------------------------------------------------


def _folder(d, extra: str, kind: str = "npy"):
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = d / "parts"
    folder.mkdir()
    X = np.random.default_rng(1).normal(size=(250, 2))
    if kind == "npy":
        np.save(folder / "a.npy", X)
    else:
        pq.write_table(pa.table({"x": X[:, 0], "y": X[:, 1]}), folder / "a.parquet")
    target = folder / extra
    target.parent.mkdir(exist_ok=True)
    if extra.lower().endswith(".npy"):
        with open(target, "wb") as handle:
            np.save(handle, X)
    elif extra.lower().endswith(".parquet"):
        pq.write_table(pa.table({"x": X[:, 0], "y": X[:, 1]}), target)
    else:
        target.write_text("1,2\n")
    return folder


@pytest.mark.parametrize(
    "kind, extra, named",
    [
        ("npy", "b.NPY", "b.NPY"),
        ("npy", "sub/b.npy", "sub"),
        ("npy", "b.csv", "b.csv"),
        ("npy", "b.parquet", "b.parquet"),
        ("parquet", "b.PARQUET", "b.PARQUET"),
        ("parquet", "b.csv", "b.csv"),
    ],
)
@pytest.mark.parametrize("command", ["synth", "kmeans"])
def test_a_folder_of_mixed_parts_is_refused_naming_the_odd_one(
    d, capsys, kind, extra, named, command
):
    folder = _folder(d, extra, kind)
    argv = {"synth": SYNTH, "kmeans": KMEANS}[command]
    argv = [*_fill(argv, d), "--radius", "5", "-o", d / "o.csv"]
    argv[1] = str(folder)
    _refused(argv, d, capsys, named)


def test_hidden_parts_are_skipped_with_a_line(d, capsys):
    folder = _folder(d, ".b.npy")
    argv = [*_fill(SYNTH, d), "--radius", "5", "-o", str(d / "o.csv")]
    argv[1] = str(folder)
    assert main(argv) == 0
    assert "skipped 1 hidden file(s)" in capsys.readouterr().err


# -- metadata: unknown --categorical, duplicate header ------------------------------------


def test_metadata_unknown_categorical_is_refused(d, capsys):
    (d / "t.csv").write_text("a,b\n1,x\n2,y\n")
    _refused(
        ["metadata", d / "t.csv", "--categorical", "nosuch"], d, capsys, "--categorical nosuch"
    )


def test_metadata_duplicate_header_is_refused(d, capsys):
    (d / "t.csv").write_text("a,a\n1,x\n2,y\n")
    _refused(["metadata", d / "t.csv", "-o", d / "m.json"], d, capsys, "repeats a name")


# -- numbers at the edges -----------------------------------------------------------------


@pytest.mark.parametrize(
    "extra, flag",
    [
        (["--radius", "1e300"], "--radius"),
        (["--radius", "1e100"], "--radius"),
        (["--radius", "1e-300"], "--radius"),
        (["--radius", "5", "--R", "1e300"], "--R"),
        (["--radius", "5", "--scale", "1e-300", "--selector", "rank"], "--scale"),
        (["--bounds", "-1e308", "1e308"], "--bounds"),
        (["--radius", "5", "--center", "1e300"], "--center"),
        (["--bounds", "1", "1"], "--bounds"),
    ],
)
def test_public_parameters_out_of_range_name_the_flag(d, capsys, extra, flag):
    _refused([*_fill(SYNTH, d), *extra, "-o", d / "o.csv"], d, capsys, flag)


def test_metadata_bounds_out_of_range_name_the_column(d, capsys):
    (d / "t.csv").write_text("a\n1\n2\n")
    (d / "desc.txt").write_text("a: numeric -1e308..1e308\n")
    assert (
        main(
            [
                "metadata",
                str(d / "t.csv"),
                "--public-description",
                str(d / "desc.txt"),
                "-o",
                str(d / "m.json"),
            ]
        )
        == 0
    )
    capsys.readouterr()
    argv = ["synth-table", d / "t.csv", "--metadata", d / "m.json", "--epsilon", "1"]
    _refused([*argv, "-o", d / "s.csv"], d, capsys, "column 'a' bounds")


@pytest.mark.parametrize("sigma", ["1e-300", "1e-10", "1e-3", "0", "nan", "-1"])
@pytest.mark.parametrize("noise", ["gaussian", "discrete_gaussian"])
def test_account_tiny_sigma_is_refused_cleanly(d, capsys, sigma, noise):
    argv = ["account", "--sigma", sigma, "--steps", "3", "--delta", "1e-5", "--noise", noise]
    _refused(argv, d, capsys, "--sigma")


def test_account_huge_sigma_gives_epsilon_zero(capsys):
    assert main(["account", "--sigma", "1e300", "--steps", "3", "--delta", "1e-5", "--json"]) == 0
    assert '"epsilon": 0.0' in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv, flag",
    [
        ([*SYNTH[:3], "1000000000000", *SYNTH[4:], "--radius", "5", "-o", "{d}/o.csv"], "--m"),
        (
            [
                "synth-table",
                "{d}/t.csv",
                "--epsilon",
                "1",
                "--rows",
                "1000000000000",
                "-o",
                "{d}/s.csv",
            ],
            "--rows",
        ),
        (
            [
                "synth-table",
                "{d}/t.csv",
                "--epsilon",
                "1",
                "--population",
                "1000000000000",
                "-o",
                "{d}/s.csv",
            ],
            "--population",
        ),
        (["audit", "--releases", "1000000000000", "--runs", "0"], "--releases"),
    ],
)
def test_sizes_beyond_memory_are_refused_up_front(d, capsys, argv, flag):
    (d / "t.csv").write_text("a,b\n1,x\n2,y\n")
    err = _refused(_fill(argv, d), d, capsys, flag, "GiB")
    assert "MemoryError" not in err


@pytest.mark.parametrize(
    "extra",
    [
        ["--bounds", "-1e1", "1e1"],
        ["--radius", "1", "--center", "-1e-1", "0"],
        ["--bounds", "-.5", "5"],
    ],
)
def test_negative_numbers_are_values(d, capsys, extra):
    assert main([*_fill(SYNTH, d), *extra, "--json"]) == 0, capsys.readouterr().err


# -- messages ------------------------------------------------------------------------------


def test_a_bad_cell_below_a_header_names_its_line(d, capsys):
    (d / "b.csv").write_text(f"x,y\n1,2\n3,zero\n{CELL},6\n")
    err = _refused(
        [*_fill(KMEANS, d)[:1], d / "b.csv", *KMEANS[2:], "--radius", "5"], d, capsys, "line 3"
    )
    assert "zero" not in err and "pass --header" not in err


def test_a_trailing_comma_says_why_line_1_is_data(d, capsys):
    (d / "c.csv").write_text(f"x,y,\n1,{CELL},\n3,4,\n")
    _refused(
        ["kmeans", d / "c.csv", *KMEANS[2:], "--radius", "5"],
        d,
        capsys,
        "line 1",
        "trailing delimiter",
    )


@pytest.mark.parametrize("command", ["synth-table", "metadata", "synth-text", "kmeans"])
def test_input_not_utf8_names_the_file(d, capsys, no_model, command):
    data = d / "l.csv"
    data.write_bytes(b"review,b\ncaf\xe9,1\n")
    argv = {
        "synth-table": ["synth-table", data, "--epsilon", "1", "-o", d / "s.csv"],
        "metadata": ["metadata", data],
        "synth-text": ["synth-text", data, "--column", "review", "--epsilon", "1", "--m", "2"],
        "kmeans": ["kmeans", data, *KMEANS[2:], "--radius", "5"],
    }[command]
    err = _refused(argv, d, capsys, str(data), "UTF-8")
    assert "0xe9" not in err and "codec" not in err


def test_a_corrupt_parquet_part_is_named(d, capsys):
    folder = _folder(d, "b.csv", "parquet")
    (folder / "b.csv").unlink()
    (folder / "z.parquet").write_bytes(b"PAR1 not a parquet file")
    _refused([*_fill(SYNTH, d)[:1], folder, *SYNTH[2:], "--radius", "5"], d, capsys, "z.parquet")


@pytest.mark.parametrize("where", ["file", "folder"])
def test_a_bad_npy_is_named(d, capsys, where):
    if where == "file":
        target = d / "bad.npy"
        data = target
    else:
        data = _folder(d, "b.csv")
        (data / "b.csv").unlink()
        target = data / "z.npy"
    target.write_bytes(b"\x93NUMPY")
    err = _refused(["synth", data, *SYNTH[2:], "--radius", "5"], d, capsys, target.name)
    assert "EOF" not in err and "magic string" not in err


def test_parquet_non_numeric_column_uses_cli_wording(d, capsys):
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = d / "q"
    folder.mkdir()
    pq.write_table(pa.table({"x": [1.0, 2.0], "s": ["zero", CELL]}), folder / "a.parquet")
    err = _refused(["synth", folder, *SYNTH[2:], "--radius", "5"], d, capsys, "--columns")
    assert "columns=[" not in err.split("--columns")[0] and "zero" not in err


@pytest.mark.parametrize("target", ["/dev/null", "loop"])
@pytest.mark.parametrize("flag", ["-o", "--checkpoint"])
def test_checkpoint_or_output_on_a_device_or_a_loop(d, capsys, target, flag):
    if target == "loop":
        os.symlink(d / "loop2", d / "loop")
        os.symlink(d / "loop", d / "loop2")
        target = str(d / "loop")
    err = _refused([*_fill(SYNTH, d), "--radius", "5", flag, target], d, capsys)
    assert "Errno" not in err and "RuntimeError" not in err


def test_one_row_kmeans_does_not_print_its_n(d, capsys):
    (d / "one.csv").write_text(f"x,y\n{CELL},1\n")
    err = _refused(
        ["kmeans", d / "one.csv", "--k", "1", "--epsilon", "1", "--radius", "5"],
        d,
        capsys,
        "at least 2 rows",
    )
    assert "1 sample" not in err


def test_a_torn_checkpoint_header_is_refused_untouched(d, capsys):
    ckpt = d / "run.ckpt"
    assert main([*_fill(SYNTH, d), "--radius", "5", "--checkpoint", str(ckpt), "--json"]) == 0
    capsys.readouterr()
    whole = ckpt.read_bytes()
    ckpt.write_bytes(whole[: len(_MAGIC) + 20])  # the magic and part of the header's frame
    assert stat.S_ISREG(ckpt.stat().st_mode)
    err = _refused(
        [*_fill(SYNTH, d), "--radius", "5", "--checkpoint", ckpt, "--json"],
        d,
        capsys,
        "no valid header",
    )
    assert len(ckpt.read_bytes()) == len(_MAGIC) + 20, err


def test_demo_help_states_the_fixed_seed(capsys):
    with pytest.raises(SystemExit):
        main(["demo", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "default 0" in text and "fresh randomness" not in text
