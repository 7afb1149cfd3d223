"""The privevo command line: outputs, reports, resume, and a table of bad inputs."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from privevo import accounting
from privevo.cli import main

REPORT_KEYS = {
    "epsilon",
    "delta",
    "mu",
    "sigma",
    "steps",
    "adjacency",
    "sensitivity",
    "noise",
    "mechanism",
    "dp_event",
    "releases",
    "public_parameters",
    "warnings",
    "guarantee_holds",
    "privevo_version",
    "timestamp",
}


@pytest.fixture(scope="module")
def files(tmp_path_factory, mixture400):
    d = tmp_path_factory.mktemp("data")
    X = mixture400
    np.savetxt(d / "mix.csv", X, delimiter=",", header="x,y", comments="")
    np.save(d / "mix.npy", X)
    (d / "empty.csv").write_text("")
    (d / "header.csv").write_text("x,y\n")
    (d / "text.csv").write_text("x,label\n1,a\n2,b\n")
    (d / "nan.csv").write_text("x,y\n1,2\nnan,3\n")
    (d / "inf.csv").write_text("x,y\n1,2\n3,inf\n")
    (d / "gap.csv").write_text("x,y\n1,2\n3,\n")
    (d / "ragged.csv").write_text("x,y\n1,2\n3,4,5\n")
    np.save(d / "oned.npy", np.arange(10.0))
    (d / "junk.npy").write_bytes(b"\x00junk")
    (d / "folder.csv").mkdir()
    (d / "afile").write_text("x")
    (d / "junk.ckpt").write_bytes(b"junk")
    # a finished checkpoint of another run (epsilon 4, seed 1)
    code = main(
        [
            "synth",
            str(d / "mix.csv"),
            "--m",
            "3",
            "--selector",
            "rank",
            "--epsilon",
            "4",
            "--radius",
            "2",
            "--iterations",
            "3",
            "--seed",
            "1",
            "--checkpoint",
            str(d / "other.ckpt"),
            "-q",
            "-o",
            str(d / "other.csv"),
        ]
    )
    assert code == 0
    code = main(
        [
            "kmeans",
            str(d / "mix.csv"),
            "--k",
            "2",
            "--epsilon",
            "1",
            "--radius",
            "2",
            "-q",
            "--checkpoint",
            str(d / "km.ckpt"),
            "-o",
            str(d / "km.csv"),
        ]
    )
    assert code == 0
    (d / "numhead.csv").write_text("1,2\n" + (d / "mix.csv").read_text().split("\n", 1)[1])
    (d / "one.csv").write_text("x,y\n0.1,0.2\n")
    (d / "firstgap.csv").write_text("0.7316,\n0.25,0.5\n0.125,0.75\n")
    (d / "secret.csv").write_text("x,y\n1,2\n3,Jane Roe\n")
    (d / "random.npy").write_bytes(b"\x93NUMPY\x01\x00" + bytes(range(256)) * 4)
    (d / "mixed").mkdir()
    np.save(d / "mixed" / "a.npy", X[:200])
    (d / "parts").mkdir()
    np.save(d / "parts" / "a.npy", X[:200])
    np.save(d / "parts" / "b.npy", X[200:])
    os.symlink(d / "mix.csv", d / "link.csv")
    pq.write_table(pa.table({"0": X[200:, 0], "1": X[200:, 1]}), d / "mixed" / "b.parquet")
    return d


def snapshot(folder) -> dict[str, str]:
    """Every file under ``folder`` (links followed) → the SHA-256 of its bytes."""
    import hashlib

    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


SYNTH = [
    "synth",
    "{d}/mix.csv",
    "--m",
    "3",
    "--selector",
    "rank",
    "--epsilon",
    "1",
    "--radius",
    "2",
    "--iterations",
    "3",
    "--seed",
    "0",
]
KMEANS = ["kmeans", "{d}/mix.csv", "--k", "2", "--epsilon", "1", "--radius", "2", "--seed", "0"]


def swap(argv, **changes):
    """argv with ``--flag value`` pairs replaced (value None drops the flag)."""
    out = list(argv)
    for flag, value in changes.items():
        flag = "--" + flag.replace("_", "-") if flag != "data" else None
        if flag is None:
            out[1] = value
            continue
        if flag in out:
            i = out.index(flag)
            del out[i : i + 2]
        if value is not None:
            out += [flag, *([value] if isinstance(value, str) else value)]
    return out


BAD_INPUTS = [
    ("missing file", swap(SYNTH, data="{d}/nope.csv"), "data file not found"),
    ("empty file", swap(SYNTH, data="{d}/empty.csv"), "is empty"),
    ("header only", swap(SYNTH, data="{d}/header.csv"), "header but no data rows"),
    (
        "non-numeric column",
        swap(SYNTH, data="{d}/text.csv", header=[]),
        "column 'label' is not numeric",
    ),
    ("NaN", swap(SYNTH, data="{d}/nan.csv"), "column 'x' has NaN or infinite values"),
    ("inf", swap(KMEANS, data="{d}/inf.csv"), "column 'y' has NaN or infinite values"),
    ("empty cell", swap(SYNTH, data="{d}/gap.csv"), "empty cell at line 3"),
    ("ragged rows", swap(SYNTH, data="{d}/ragged.csv"), "line 3 has 3 fields but the header has 2"),
    ("1-D data", swap(KMEANS, data="{d}/oned.npy"), "1-D array of shape (10,)"),
    ("corrupt npy", swap(SYNTH, data="{d}/junk.npy"), "not a readable .npy file"),
    ("data is a folder", swap(SYNTH, data="{d}/folder.csv"), "is a directory"),
    ("unsupported input", swap(SYNTH, data="{d}/afile"), "unsupported file type"),
    ("k > n", swap(KMEANS, k="500"), "--k 500 is larger than the number of rows; choose a smaller"),
    ("k > n, replace", swap(KMEANS, k="500", adjacency="replace"), "number of rows (400); choose"),
    ("k = 0", swap(KMEANS, k="0"), "--k must be an integer >= 1"),
    ("m = 0", swap(SYNTH, m="0"), "--m must be an integer >= 1"),
    ("epsilon = 0", swap(SYNTH, epsilon="0"), "epsilon must be a finite number > 0"),
    ("epsilon < 0", swap(KMEANS, epsilon="-1"), "epsilon must be a finite number > 0"),
    (
        "epsilon not a number",
        swap(SYNTH, epsilon="abc"),
        "argument --epsilon: invalid float value: 'abc'",
    ),
    (
        "epsilon missing",
        swap(SYNTH, epsilon=None),
        "the following arguments are required: --epsilon",
    ),
    ("delta = 1", swap(SYNTH, delta="1"), "delta must be in (0, 1)"),
    ("delta = 0", swap(KMEANS, delta="0"), "delta must be in (0, 1)"),
    (
        "unknown selector",
        swap(SYNTH, selector="best"),
        "argument --selector: invalid choice: 'best'",
    ),
    ("negative radius", swap(SYNTH, radius="-1"), "--radius must be a finite number > 0"),
    (
        "bounds lo >= hi",
        swap(swap(KMEANS, radius=None), bounds=["3", "3"]),
        "--bounds LO HI needs LO < HI",
    ),
    ("radius and bounds", swap(KMEANS, bounds=["0", "1"]), "not allowed with argument --radius"),
    ("center of wrong length", swap(SYNTH, center=["1", "2", "3"]), "--center needs 1 or 2 values"),
    ("iterations = 0", swap(SYNTH, iterations="0"), "--iterations must be an integer >= 1"),
    ("recover share = 1", swap(KMEANS, recover_share="1"), "--recover-share must be in [0, 1)"),
    ("negative R", swap(SYNTH, selector="gape", R="-2"), "--R must be a finite number > 0"),
    ("unknown column", swap(SYNTH, columns="x,zz"), "unknown column 'zz'; available columns: x, y"),
    (
        "checkpoint of another run",
        swap(SYNTH, checkpoint="{d}/other.ckpt"),
        "belongs to another run (epsilon is 4.0 there, 1.0 now)",
    ),
    (
        "checkpoint of the other command",
        swap(SYNTH, checkpoint="{d}/km.ckpt"),
        "was written by a DPKMeans run, not by this PrivateEvolution run",
    ),
    (
        "corrupt checkpoint",
        swap(SYNTH, checkpoint="{d}/junk.ckpt"),
        "not a readable privevo checkpoint",
    ),
    ("output path is a folder", swap(SYNTH, output="{o}"), "is a directory"),
    (
        "unwritable output (parent is a file)",
        swap(SYNTH, output="{d}/afile/out.csv"),
        "is not a directory",
    ),
    ("output folder missing", swap(KMEANS, output="{o}/no/out.csv"), "does not exist"),
    (
        "unsupported output type",
        swap(SYNTH, output="{o}/out.xlsx"),
        "unsupported file type '.xlsx'",
    ),
    ("plot without output", swap(SYNTH, plot=[]), "--plot needs an output file"),
    (
        "account: epsilon and sigma",
        ["account", "--epsilon", "1", "--sigma", "2", "--delta", "1e-5", "--steps", "3"],
        "exactly one of --epsilon or --sigma",
    ),
    (
        "account: steps = 0",
        ["account", "--epsilon", "1", "--delta", "1e-5", "--steps", "0"],
        "steps must be an integer >= 1",
    ),
    (
        "account: delta >= 1",
        ["account", "--epsilon", "1", "--delta", "2", "--steps", "3"],
        "delta must be in (0, 1)",
    ),
    ("demo: --out is a file", ["demo", "--out", "{d}/afile"], "exists and is not a folder"),
    # no output may destroy the input or another output
    ("-o is the input", swap(SYNTH, output="{d}/mix.csv"), "-o {d}/mix.csv is the input data file"),
    ("-o is a link to the input", swap(KMEANS, output="{d}/link.csv"), "is the input data file"),
    (
        "checkpoint is the input",
        swap(SYNTH, checkpoint="{d}/mix.csv"),
        "--checkpoint {d}/mix.csv is the input data file",
    ),
    (
        "-o inside the input folder",
        swap(SYNTH, data="{d}/parts", output="{d}/parts/o.csv"),
        "is inside the input folder",
    ),
    (
        "checkpoint inside the input folder",
        swap(SYNTH, data="{d}/parts", checkpoint="{d}/parts/c"),
        "is inside the input folder",
    ),
    (
        "-o X --checkpoint X",
        swap(SYNTH, output="{o}/r.csv", checkpoint="{o}/r.csv"),
        "-o and --checkpoint are the same file",
    ),
    (
        "checkpoint is the report",
        swap(KMEANS, output="{o}/r.csv", checkpoint="{o}/r.privacy.json"),
        "the privacy report and --checkpoint are the same file",
    ),
    (
        "checkpoint is the plot",
        swap(SYNTH, output="{o}/r.csv", plot=[], checkpoint="{o}/r.png"),
        "the --plot image and --checkpoint are the same file",
    ),
    # no hang
    (
        "iterations above the cap",
        swap(SYNTH, iterations="100000"),
        "--iterations must be at most 10000 (PE rounds), got 100000",
    ),
    ("iterations 1e8", swap(KMEANS, iterations="1e8"), "argument --iterations: invalid int value"),
    # one range for epsilon and delta, one message
    ("delta 5e-324", swap(KMEANS, delta="5e-324"), "delta must be at least 1e-300"),
    (
        "synth: epsilon 1e-12",
        swap(SYNTH, epsilon="1e-12"),
        "epsilon must be between 1e-06 and 1e+06",
    ),
    ("kmeans: epsilon 1e-12", swap(KMEANS, epsilon="1e-12"), "epsilon must be between 1e-06 and"),
    (
        "account: epsilon 1e-12",
        ["account", "--epsilon", "1e-12", "--delta", "1e-5", "--steps", "3"],
        "epsilon must be between 1e-06 and 1e+06",
    ),
    (
        "account: delta 5e-324",
        ["account", "--epsilon", "1", "--delta", "5e-324", "--steps", "3"],
        "delta must be at least 1e-300",
    ),
    # a folder of mixed parts
    (
        "mixed folder",
        swap(SYNTH, data="{d}/mixed"),
        "b.parquet is a Parquet part in a folder of .npy parts",
    ),
    # header, one row
    (
        "text first line, text below",
        swap(SYNTH, data="{d}/text.csv"),
        "column 'label' is not numeric (line 2",
    ),
    (
        "one row, no --delta, replace adjacency (n public)",
        swap(SYNTH, data="{d}/one.csv") + ["--adjacency", "replace"],
        "the default delta n^-1.1 needs at least 2 rows; pass --delta",
    ),
    ("--header on .npy", swap(SYNTH, data="{d}/mix.npy", header=[]), "apply to CSV/TSV files only"),
    # a private first row is data, and no message quotes a cell
    (
        "first row with an empty cell",
        swap(SYNTH, data="{d}/firstgap.csv"),
        "column '1' has an empty cell at line 1",
    ),
    (
        "a text cell",
        swap(SYNTH, data="{d}/secret.csv", header=[]),
        "column 'y' is not numeric (line 3 holds a non-number)",
    ),
    # messages
    ("center nan", swap(SYNTH, center="nan"), "--center must be finite numbers, got nan"),
    (
        "center with bounds",
        swap(swap(KMEANS, radius=None), bounds=["0", "1"], center="0.5"),
        "--center goes with --radius, not --bounds",
    ),
    ("seed -1", swap(SYNTH, seed="-1"), "--seed must be an integer >= 0, got -1"),
    ("random-bytes npy", swap(SYNTH, data="{d}/random.npy"), "not a readable .npy file (no valid"),
    ("unknown noise", swap(SYNTH, noise="laplace"), "argument --noise: invalid choice: 'laplace'"),
]


@pytest.mark.parametrize(
    "argv, message", [c[1:] for c in BAD_INPUTS], ids=[c[0] for c in BAD_INPUTS]
)
def test_bad_input_one_line_error_no_output(files, tmp_path, cli, argv, message):
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    argv = [a.format(d=files, o=out_dir) for a in argv]
    message = message.format(d=files, o=out_dir)
    if not {"-o", "--output", "--plot"} & set(argv) and argv[0] in ("synth", "kmeans"):
        argv += ["-o", str(out_dir / "result.csv")]
    before = snapshot(files)
    code, out, err = cli(argv)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert message in lines[0]
    assert "Traceback" not in err and out == ""
    assert list(out_dir.iterdir()) == []  # no partial output
    assert snapshot(files) == before  # every input file and checkpoint byte for byte
    assert "Jane" not in err and "0.7316" not in err  # no private cell in a message


def test_bad_input_table_has_at_least_20_cases():
    assert len(BAD_INPUTS) >= 20


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write to read-only folders")
def test_unwritable_output_folder(files, tmp_path, cli):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        code, _, err = cli([a.format(d=files) for a in SYNTH] + ["-o", str(locked / "o.csv")])
    finally:
        locked.chmod(0o700)
    assert code != 0 and "cannot write to output folder" in err and list(locked.iterdir()) == []


@pytest.mark.parametrize(
    "argv",
    [
        ["synth", "{d}/nope.csv", "--m", "3", "--epsilon", "1"],
        ["kmeans", "{d}/mix.csv", "--k", "0", "--epsilon", "1"],
        ["synth", "{d}/mix.csv", "--m", "3", "--epsilon", "1", "--selector", "x"],
    ],
)
def test_real_process_exit_code_and_no_traceback(files, argv):
    argv = [a.format(d=files) for a in argv]
    done = subprocess.run(
        [sys.executable, "-m", "privevo.cli", *argv], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith(f"privevo {argv[0]}: error: ")


def read_report(path) -> dict:
    report = json.loads(path.read_text())
    assert REPORT_KEYS <= set(report)
    return report


def test_synth_writes_points_report_and_plot(files, tmp_path, cli):
    argv = [a.format(d=files) for a in swap(SYNTH, iterations="5", epsilon="2")] + [
        "-o",
        tmp_path / "syn.csv",
        "--plot",
    ]
    code, out, err = cli(argv)
    assert code == 0 and err == ""  # not a terminal: no progress bars
    points = np.loadtxt(tmp_path / "syn.csv", delimiter=",", skiprows=1)
    assert points.shape == (3, 2)
    report = read_report(tmp_path / "syn.privacy.json")
    assert report["epsilon"] == pytest.approx(2.0, rel=1e-9) and report["steps"] == 5
    assert report["guarantee_holds"] is True and len(report["warnings"]) == 1
    assert "seed" in report["warnings"][0] and report["public_parameters"]["cli"]["seeded"] is True
    assert report["public_parameters"]["radius"] == 2.0 and report["public_parameters"]["cli"][
        "columns"
    ] == ["x", "y"]
    assert (tmp_path / "syn.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "epsilon=2 " in out and "wrote" in out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["syn.csv", "syn.png", "syn.privacy.json"]
    # same seed, same points
    code, _, _ = cli(argv[:-3] + ["-o", tmp_path / "again.npy"])
    np.testing.assert_array_equal(np.load(tmp_path / "again.npy"), points)


@pytest.mark.parametrize("selector", ["gape", "gape_agg", "subsample", "weighted_kmeans"])
def test_synth_selectors_and_json(files, cli, selector):
    argv = [a.format(d=files) for a in swap(SYNTH, selector=selector)] + ["--json"]
    code, out, err = cli(argv)
    assert code == 0, err
    result = json.loads(out)
    assert np.asarray(result["points"]).shape[1] == 2 and 1 <= len(result["points"]) <= 3
    assert result["privacy_report"]["epsilon"] == pytest.approx(1.0, rel=1e-9)
    assert result["selector"] == selector


def test_synth_without_public_radius_warns_and_marks_report(files, tmp_path, cli):
    argv = [a.format(d=files) for a in swap(SYNTH, radius=None)] + ["-o", tmp_path / "s.npy"]
    code, _, err = cli(argv)
    assert code == 0
    assert (
        err.startswith("privevo: warning: PrivacyLeakWarning: ")
        and len(err.strip().splitlines()) == 1
    )
    report = read_report(tmp_path / "s.privacy.json")
    assert report["guarantee_holds"] is False and "not DP" in report["warnings"][-1]


def test_synth_checkpoint_resume_spends_nothing_more(files, tmp_path, cli):
    argv = [a.format(d=files) for a in swap(SYNTH, iterations="4")] + [
        "--checkpoint",
        tmp_path / "run.ckpt",
    ]
    code, _, _ = cli(argv + ["-o", tmp_path / "a.csv"])
    assert code == 0
    first = (tmp_path / "run.ckpt").read_bytes()
    code, _, _ = cli(argv + ["-o", tmp_path / "b.csv"])
    assert code == 0
    assert (tmp_path / "a.csv").read_text() == (tmp_path / "b.csv").read_text()
    a, b = read_report(tmp_path / "a.privacy.json"), read_report(tmp_path / "b.privacy.json")
    assert a["epsilon"] == b["epsilon"] and b["releases"][0]["count"] == 4
    assert (tmp_path / "run.ckpt").read_bytes() == first  # finished: nothing released or rewritten


def test_kmeans_writes_centers_and_report(files, tmp_path, cli):
    argv = [a.format(d=files) for a in KMEANS] + ["-o", tmp_path / "c.csv", "--plot"]
    code, out, err = cli(argv)
    assert code == 0, err
    centers = np.loadtxt(tmp_path / "c.csv", delimiter=",", skiprows=1)
    assert centers.shape == (2, 2)
    # the 90 % cluster at (−1, 0) is found; how often the 10 % one (40 of the 400 rows) is found
    # at ε = 1 is a rate over seeds (tests/test_kmeans.py, test_small_cluster_found_at_a_rate)
    assert np.abs(centers - [-1.0, 0.0]).max(axis=1).min() < 0.25
    report = read_report(tmp_path / "c.privacy.json")
    assert report["epsilon"] == pytest.approx(1.0, rel=1e-6) and report["guarantee_holds"] is True
    assert (tmp_path / "c.png").exists()


@pytest.mark.parametrize("projection", ["pca", "random"])
def test_kmeans_hdpe_projection_option(files, cli, projection):
    argv = [a.format(d=files) for a in KMEANS] + [
        "--json",
        "--method",
        "hdpe-means",
        "--projection",
        projection,
    ]
    code, out, err = cli(argv)
    assert code == 0, err
    report = json.loads(out)["privacy_report"]
    names = [r["name"] for r in report["releases"]]
    assert ("second_moment" in names) == (projection == "pca")
    assert report["public_parameters"]["projection"] == projection
    assert report["epsilon"] == pytest.approx(1.0, rel=1e-6)


def test_kmeans_json_to_stdout_with_bounds(files, cli):
    argv = [a.format(d=files) for a in swap(swap(KMEANS, radius=None), bounds=["-2", "2"])] + [
        "--json",
        "--columns",
        "x,y",
    ]
    code, out, err = cli(argv)
    assert code == 0, err
    result = json.loads(out)
    assert np.asarray(result["points"]).shape == (2, 2) and result["outputs"] == {}
    assert result["privacy_report"]["epsilon"] == pytest.approx(1.0, rel=1e-6)


def test_account_both_directions(cli):
    code, out, _ = cli(["account", "--epsilon", "1", "--delta", "1e-5", "--steps", "10", "--json"])
    forward = json.loads(out)
    assert code == 0 and forward["sigma"] == pytest.approx(accounting.gaussian_sigma(1.0, 1e-5, 10))
    code, out, _ = cli(
        ["account", "--sigma", str(forward["sigma"]), "--delta", "1e-5", "--steps", "10", "--json"],
    )
    assert json.loads(out)["epsilon"] == pytest.approx(1.0, rel=1e-9)


def test_help_has_examples_for_every_command(cli):
    for command in ("kmeans", "synth", "account", "demo"):
        code, out, _ = cli([command, "--help"])
        assert code == 0 and "examples:" in out and f"privevo {command}" in out


def test_demo_quick_writes_tables_and_plots(tmp_path):
    from privevo.demo import run_demo

    result = run_demo(seed=0, out_dir=tmp_path, quick=True)
    kmeans, mixture = result["tables"]
    floor = next(r for r in kmeans["rows"] if r["method"].startswith("k-means++"))["ε=1"]
    for row in kmeans["rows"]:
        assert row["ε=1"] >= floor * 0.99  # DP centres do not beat the non-private fit
    assert {r["selector"] for r in mixture["rows"]} >= {"rank", "subsample"}
    assert all(r["small cluster kept"].endswith("%") for r in mixture["rows"])
    names = sorted(os.path.basename(p) for p in result["plots"])
    assert "kmeans_loss_vs_epsilon.png" in names and "mixture_trajectories.png" in names
    assert all((tmp_path / n).stat().st_size > 10_000 for n in names)


def test_progress_bar_only_on_a_terminal(files, tmp_path):
    import fcntl
    import pty
    import struct
    import termios

    argv = [
        sys.executable,
        "-m",
        "privevo.cli",
        *[a.format(d=files) for a in swap(SYNTH, iterations="30")],
    ]
    shown = {}
    for quiet in (False, True):
        leader, follower = pty.openpty()
        fcntl.ioctl(
            follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0)
        )  # a 100-column terminal
        done = subprocess.run(
            argv + ["-o", str(tmp_path / f"s{quiet}.csv")] + (["-q"] if quiet else []),
            stderr=follower,
            stdout=subprocess.PIPE,
            timeout=120,
        )
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:
                break
            if not chunk:
                break
            chunks.append(chunk)
        os.close(leader)
        assert done.returncode == 0
        shown[quiet] = b"".join(chunks).decode(errors="replace")
    assert "PE rounds:" in shown[False] and "/30 [" in shown[False]
    assert shown[True] == ""


def test_kmeans_checkpoint_resumes(files, tmp_path, cli):
    argv = [a.format(d=files) for a in KMEANS] + ["--checkpoint", tmp_path / "km.ckpt"]
    assert cli(argv + ["-o", tmp_path / "a.csv"])[0] == 0
    assert cli(argv + ["-o", tmp_path / "b.csv"])[0] == 0
    assert (tmp_path / "a.csv").read_text() == (tmp_path / "b.csv").read_text()
    code, _, err = cli(swap(argv, epsilon="2") + ["-o", tmp_path / "c.csv"])
    assert code == 2 and "belongs to another run" in err and not (tmp_path / "c.csv").exists()
