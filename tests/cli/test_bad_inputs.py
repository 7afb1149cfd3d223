"""Bad command lines: exit status 2, one line on stderr that says what to fix, no output, no
input file touched, and no private cell quoted."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from helpers import slow_unless
from helpers.cli import KMEANS, SYNTH, fill, swap


# the templates with ``--flag value`` pairs changed (helpers.cli.swap)
def synth(**changes) -> list:
    return swap(SYNTH, **changes)


def kmeans(**changes) -> list:
    return swap(KMEANS, **changes)


def account(**changes) -> list:
    return swap(["account", "--epsilon", "1", "--delta", "1e-5", "--steps", "3"], **changes)


def audit(**changes) -> list:
    return swap(["audit", "--releases", "100", "--runs", "0"], **changes)


BAD_INPUTS = [
    ("missing file", synth(data="{d}/nope.csv"), "data file not found"),
    ("empty file", synth(data="{d}/empty.csv"), "is empty"),
    ("header only", synth(data="{d}/header.csv"), "header but no data rows"),
    ("non-numeric column", synth(data="{d}/text.csv", header=[]), "column 'label' is not numeric"),
    ("NaN", synth(data="{d}/nan.csv"), "column 'x' has NaN or infinite values"),
    ("inf", kmeans(data="{d}/inf.csv"), "column 'y' has NaN or infinite values"),
    ("empty cell", synth(data="{d}/gap.csv"), "empty cell at line 3"),
    ("ragged rows", synth(data="{d}/ragged.csv"), "line 3 has 3 fields but the header has 2"),
    ("1-D data", kmeans(data="{d}/oned.npy"), "holds a 1-D array; save a 2-D array"),
    ("corrupt npy", synth(data="{d}/junk.npy"), "not a readable .npy file"),
    ("data is a folder", synth(data="{d}/folder.csv"), "is a directory"),
    ("unsupported input", synth(data="{d}/afile"), "unsupported file type"),
    ("k > n", kmeans(k="500"), "--k 500 is larger than the number of rows; choose a smaller"),
    ("k > n, replace", kmeans(k="500", adjacency="replace"), "number of rows (400); choose"),
    ("k = 0", kmeans(k="0"), "--k must be an integer >= 1"),
    ("m = 0", synth(m="0"), "--m must be an integer >= 1"),
    ("epsilon = 0", synth(epsilon="0"), "epsilon must be a finite number > 0"),
    ("epsilon < 0", kmeans(epsilon="-1"), "epsilon must be a finite number > 0"),
    (
        "epsilon not a number",
        synth(epsilon="abc"),
        "--epsilon: invalid float value: 'abc'",
    ),
    ("epsilon missing", synth(epsilon=None), "the following arguments are required: --epsilon"),
    ("delta = 1", synth(delta="1"), "delta must be in (0, 1)"),
    ("delta = 0", kmeans(delta="0"), "delta must be in (0, 1)"),
    ("unknown selector", synth(selector="best"), "argument --selector: invalid choice: 'best'"),
    ("negative radius", synth(radius="-1"), "--radius must be a finite number > 0"),
    ("bounds lo >= hi", kmeans(radius=None, bounds=["3", "3"]), "--bounds LO HI needs LO < HI"),
    ("radius and bounds", kmeans(bounds=["0", "1"]), "not allowed with argument --radius"),
    ("center of wrong length", synth(center=["1", "2", "3"]), "--center needs 1 or 2 values"),
    ("iterations = 0", synth(iterations="0"), "--iterations must be an integer >= 1"),
    (
        "recover share = 1",
        kmeans(recover_share="1"),
        "The 'recover_share' parameter of DPKMeans must be a float in the range [0.0, 1.0) or None",
    ),
    ("negative R", synth(selector="gape", R="-2"), "--R must be a finite number > 0"),
    ("unknown column", synth(columns="x,zz"), "unknown column 'zz'; available columns: x, y"),
    (
        "checkpoint of another run",
        synth(checkpoint="{d}/other.ckpt"),
        "belongs to another run (epsilon is 4.0 there, 1.0 now)",
    ),
    (
        "checkpoint of the other command",
        synth(checkpoint="{d}/km.ckpt"),
        "was written by a DPKMeans run, not by this PrivateEvolution run",
    ),
    ("corrupt checkpoint", synth(checkpoint="{d}/junk.ckpt"), "not a readable privevo checkpoint"),
    ("output path is a folder", synth(output="{o}"), "is a directory"),
    (
        "unwritable output (parent is a file)",
        synth(output="{d}/afile/out.csv"),
        "is not a directory",
    ),
    ("output folder missing", kmeans(output="{o}/no/out.csv"), "does not exist"),
    ("unsupported output type", synth(output="{o}/out.xlsx"), "unsupported file type '.xlsx'"),
    ("plot without output", synth(plot=[]), "--plot needs an output file"),
    ("account: epsilon and sigma", account(sigma="2"), "exactly one of --epsilon or --sigma"),
    ("account: steps = 0", account(steps="0"), "steps must be an integer >= 1"),
    ("account: delta >= 1", account(delta="2"), "delta must be in (0, 1)"),
    ("audit: alpha 1.5", audit(alpha="1.5"), "alpha must be in (0, 1)"),
    ("audit: runs -1", audit(runs="-1"), "runs must be an integer >= 0"),
    ("audit: releases 2", audit(releases="2"), "n_releases"),
    ("audit: epsilon 0", audit(epsilon="0"), "epsilon"),
    ("demo: --out is a file", ["demo", "--out", "{d}/afile"], "exists and is not a folder"),
    # no output may destroy the input or another output
    ("-o is the input", synth(output="{d}/mix.csv"), "-o {d}/mix.csv is the input data file"),
    ("-o is a link to the input", kmeans(output="{d}/link.csv"), "is the input data file"),
    (
        "checkpoint is the input",
        synth(checkpoint="{d}/mix.csv"),
        "--checkpoint {d}/mix.csv is the input data file",
    ),
    (
        "-o inside the input folder",
        synth(data="{d}/parts", output="{d}/parts/o.csv"),
        "is inside the input folder",
    ),
    (
        "checkpoint inside the input folder",
        synth(data="{d}/parts", checkpoint="{d}/parts/c"),
        "is inside the input folder",
    ),
    (
        "-o X --checkpoint X",
        synth(output="{o}/r.csv", checkpoint="{o}/r.csv"),
        "-o and --checkpoint are the same file",
    ),
    (
        "checkpoint is the report",
        kmeans(output="{o}/r.csv", checkpoint="{o}/r.privacy.json"),
        "the privacy report and --checkpoint are the same file",
    ),
    (
        "checkpoint is the plot",
        synth(output="{o}/r.csv", plot=[], checkpoint="{o}/r.png"),
        "the --plot image and --checkpoint are the same file",
    ),
    # no hang
    (
        "iterations above the cap",
        synth(iterations="100000"),
        "--iterations must be at most 10000 (PE rounds), got 100000",
    ),
    ("iterations 1e8", kmeans(iterations="1e8"), "argument --iterations: invalid int value"),
    # one range for epsilon and delta, one message
    ("delta 5e-324", kmeans(delta="5e-324"), "delta must be at least 1e-300"),
    ("synth: epsilon 1e-12", synth(epsilon="1e-12"), "epsilon must be between 1e-06 and 1e+06"),
    ("kmeans: epsilon 1e-12", kmeans(epsilon="1e-12"), "epsilon must be between 1e-06 and"),
    ("account: epsilon 1e-12", account(epsilon="1e-12"), "epsilon must be between 1e-06 and 1e+06"),
    ("account: delta 5e-324", account(delta="5e-324"), "delta must be at least 1e-300"),
    # a folder of mixed parts
    (
        "mixed folder",
        synth(data="{d}/mixed"),
        "b.parquet is a Parquet part in a folder of .npy parts",
    ),
    # header, one row
    (
        "text first line, text below",
        synth(data="{d}/text.csv"),
        "column 'label' is not numeric (line 2",
    ),
    (
        "one row, no --delta, replace adjacency (n public)",
        synth(data="{d}/one.csv", adjacency="replace"),
        "the default delta needs a public size of at least 2 rows; pass --delta",
    ),
    ("--header on .npy", synth(data="{d}/mix.npy", header=[]), "apply to CSV/TSV files only"),
    # a private first row is data, and no message quotes a cell
    (
        "first row with an empty cell",
        synth(data="{d}/firstgap.csv"),
        "column '1' has an empty cell at line 1",
    ),
    (
        "a text cell",
        synth(data="{d}/secret.csv", header=[]),
        "column 'y' is not numeric (line 3 holds a non-number)",
    ),
    # messages
    ("center nan", synth(center="nan"), "--center must be finite numbers, got nan"),
    (
        "center with bounds",
        kmeans(radius=None, bounds=["0", "1"], center="0.5"),
        "--center goes with --radius, not --bounds",
    ),
    ("seed -1", synth(seed="-1"), "--seed must be an integer >= 0, got -1"),
    ("random-bytes npy", synth(data="{d}/random.npy"), "not a readable .npy file (no valid"),
    ("unknown noise", synth(noise="laplace"), "argument --noise: invalid choice: 'laplace'"),
]


@pytest.mark.parametrize(
    "argv, message", [c[1:] for c in BAD_INPUTS], ids=[c[0] for c in BAD_INPUTS]
)
def test_bad_input_one_line_error_no_output(files, tmp_path, cli, argv, message):
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    argv, message = fill(argv, files, out_dir), message.format(d=files, o=out_dir)
    if not {"-o", "--output", "--plot"} & set(argv) and argv[0] in ("synth", "kmeans"):
        argv += ["-o", str(out_dir / "result.csv")]
    code, out, err = cli(argv)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert message in lines[0]
    assert "Traceback" not in err and out == ""
    assert list(out_dir.iterdir()) == []  # no partial output (files_unchanged: no input touched)
    assert "Jane" not in err and "0.7316" not in err  # no private cell in a message


def test_bad_input_table_has_at_least_20_cases():
    assert len(BAD_INPUTS) >= 20


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write to read-only folders")
def test_unwritable_output_folder(files, tmp_path, cli):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        code, _, err = cli(fill(SYNTH, files) + ["-o", str(locked / "o.csv")])
    finally:
        locked.chmod(0o700)
    assert code != 0 and "cannot write to output folder" in err and list(locked.iterdir()) == []


@pytest.mark.parametrize(
    "argv",
    slow_unless(  # test-fast: one real process
        lambda argv: argv[1] == "{d}/nope.csv",
        [
            ["synth", "{d}/nope.csv", "--m", "3", "--epsilon", "1"],
            ["kmeans", "{d}/mix.csv", "--k", "0", "--epsilon", "1"],
            ["synth", "{d}/mix.csv", "--m", "3", "--epsilon", "1", "--selector", "x"],
        ],
    ),
)
def test_real_process_exit_code_and_no_traceback(files, argv):
    argv = fill(argv, files)
    done = subprocess.run(
        [sys.executable, "-m", "privevo.cli", *argv], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith(f"privevo {argv[0]}: error: ")
