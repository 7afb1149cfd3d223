"""The command line never destroys a file, never hangs, never prints a wrong number, never
publishes a secret: one test per defect found by trying odd inputs (each replays the defect)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from privevo import accounting
from privevo.cli import main

SEED = 987654321  # a value no output may contain
# a small audit: one ε, one noise, one adjacency, 2000 releases and 4 runs of 2 rounds
SMALL_AUDIT = ["audit", "--epsilon", "1", "--noise", "gaussian", "--adjacency", "add_remove"]
SMALL_AUDIT += ["--releases", "2000", "--runs", "4", "--iterations", "2"]


@pytest.fixture(scope="module")
def data(tmp_path_factory, mixture400):
    d = tmp_path_factory.mktemp("issues")
    X = mixture400
    np.savetxt(d / "mix.csv", X, delimiter=",", header="x,y", comments="")
    np.savetxt(d / "huge.csv", X * 1e300, delimiter=",", header="x,y", comments="")
    (d / "numhead.csv").write_text("1,2\n" + (d / "mix.csv").read_text().split("\n", 1)[1])
    (d / "one.csv").write_text("x,y\n0.1,0.2\n")
    return d


@pytest.fixture(autouse=True)
def inputs_unchanged(request):
    """Every test here leaves the input files byte for byte as they were, and adds none."""
    if "data" not in request.fixturenames:
        yield
        return
    import hashlib

    folder = request.getfixturevalue("data")

    def snap():
        return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.iterdir()}

    before = snap()
    yield
    assert snap() == before


def synth(d, *extra):
    return [
        "synth",
        d / "mix.csv",
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
        *extra,
    ]


def kmeans(d, *extra):
    return ["kmeans", d / "mix.csv", "--k", "2", "--epsilon", "1", "--radius", "2", *extra]


# -- right sigma for a tiny delta; epsilon never above target --


def test_account_tiny_delta_gives_the_gdp_sigma(cli):
    # guards against: sigma = 3.16e8 beside "epsilon: 1.0"
    argv = ["account", "--epsilon", "1", "--delta", "1e-300", "--steps", "10", "--json"]
    code, out, _ = cli(argv)
    result = json.loads(out)
    assert code == 0 and result["sigma"] == pytest.approx(116.5789, abs=1e-3)
    assert 1 - 1e-9 <= result["epsilon"] <= 1.0


def test_synth_tiny_delta_reports_the_target(data, tmp_path, cli):
    # guards against: synth ran with sigma = 3.16e8 and reported epsilon = 3.6e-7
    code, _, err = cli(synth(data, "--delta", "1e-300", "-o", tmp_path / "s.csv"))
    assert code == 0, err
    report = json.loads((tmp_path / "s.privacy.json").read_text())
    assert 1 - 1e-6 <= report["epsilon"] <= 1.0
    assert report["sigma"] == pytest.approx(accounting.gaussian_sigma(1.0, 1e-300, 3), rel=1e-9)


@pytest.mark.parametrize("epsilon", ["0.3", "1", "7"])
def test_reported_epsilon_never_exceeds_the_target(data, cli, epsilon):
    for argv in (synth(data, "--json"), kmeans(data, "--json", "--delta", "1e-300")):
        argv = [a if a != "1" else epsilon for a in argv]  # --epsilon 1 -> epsilon
        code, out, err = cli(argv)
        assert code == 0, err
        reported = json.loads(out)["privacy_report"]["epsilon"]
        assert float(epsilon) * (1 - 1e-6) <= reported <= float(epsilon)


# -- huge finite values ---------------------------------------------------------------


def test_huge_finite_values_are_clipped_not_zeroed(data, cli):
    # guards against: values near 1e300 overflowing while clipping (centres ~0, guarantee "true")
    code, out, err = cli(
        [
            "kmeans",
            data / "huge.csv",
            "--k",
            "2",
            "--epsilon",
            "4",
            "--radius",
            "10",
            "--seed",
            "0",
            "--json",
            "-q",
        ],
    )
    assert code == 0, err
    result = json.loads(out)
    centers = np.asarray(result["points"])
    # every row lies far outside the ball: clipped onto the circle of radius 10, near (+-10, 0)
    assert sorted(np.round(centers[:, 0] / 10).tolist()) == [-1.0, 1.0]
    assert np.all(np.abs(centers[:, 1]) < 3)
    assert result["privacy_report"]["guarantee_holds"] is True


# a seeded rank run in the public ball of radius 10, printed as JSON
SYNTH_IN_BALL_10 = ["--m", "2", "--selector", "rank", "--epsilon", "4", "--radius", "10"]
SYNTH_IN_BALL_10 += ["--iterations", "5", "--seed", "0", "--json", "-q"]


def test_huge_finite_values_synth_agrees(data, cli):
    # guards against: synth called the values "NaN or infinite"
    argv = ["synth", data / "huge.csv", *SYNTH_IN_BALL_10]
    code, out, err = cli(argv)
    assert code == 0, err
    points = np.asarray(json.loads(out)["points"])
    assert np.isfinite(points).all() and np.all(np.linalg.norm(points, axis=1) <= 10 + 1e-9)


def test_huge_finite_values_in_a_streamed_folder(tmp_path, cli, mixture400):
    # a folder with --radius and no --plot is streamed: its blocks are clipped as they are read
    parts = tmp_path / "parts"
    parts.mkdir()
    X = mixture400 * 1e300
    np.save(parts / "a.npy", X[:200])
    np.save(parts / "b.npy", X[200:])
    argv = ["synth", parts, *SYNTH_IN_BALL_10]
    code, out, err = cli(argv)
    assert code == 0, err
    points = np.asarray(json.loads(out)["points"])
    assert np.isfinite(points).all() and np.all(np.linalg.norm(points, axis=1) <= 10 + 1e-9)
    assert np.abs(points[:, 0]).max() > 5  # the modes at ±1e300·(1, 0) clip to ±10, not to 0


# -- GAPE may deliver fewer than m points: say so, or --fill ---------------------------


def test_gape_fewer_points_said_on_stderr_and_in_json(data, tmp_path, cli):
    argv = [
        "synth",
        data / "mix.csv",
        "--m",
        "200",
        "--epsilon",
        "1",
        "--radius",
        "5",
        "--seed",
        "0",
        "--json",
        "-o",
        tmp_path / "s.csv",
    ]
    code, out, err = cli(argv)
    assert code == 0
    result = json.loads(out)
    rows = len(np.loadtxt(tmp_path / "s.csv", delimiter=",", skiprows=1, ndmin=2))
    assert result["m_requested"] == 200 and result["m_delivered"] == rows < 200
    assert err.strip().splitlines() == [
        f"privevo synth: note: the gape selector delivered {rows} of the 200 points asked for (it "
        "keeps only points that pass its noise threshold); pass --fill to get exactly --m"
    ]
    code, out, err = cli(argv + ["--fill"])
    assert code == 0 and err == "" and json.loads(out)["m_delivered"] == 200
    assert len(np.loadtxt(tmp_path / "s.csv", delimiter=",", skiprows=1)) == 200


# -- header rule and the one-row file ---------------------------------------------------


def test_numeric_header_is_data_unless_header_is_given(data, tmp_path, cli):
    for flag, names in (([], "0,1"), (["--header"], "1,2")):
        argv = [
            "synth",
            data / "numhead.csv",
            "--m",
            "2",
            "--selector",
            "rank",
            "--epsilon",
            "1",
            "--radius",
            "2",
            "--iterations",
            "2",
            "-q",
            "-o",
            tmp_path / "s.csv",
            *flag,
        ]
        code, _, err = cli(argv)
        assert code == 0, err
        assert (tmp_path / "s.csv").read_text().splitlines()[0] == names


def test_one_row_with_delta_runs(data, tmp_path, cli):
    code, _, err = cli(
        [
            "synth",
            data / "one.csv",
            "--m",
            "1",
            "--selector",
            "rank",
            "--epsilon",
            "1",
            "--radius",
            "1",
            "--iterations",
            "2",
            "--delta",
            "1e-6",
            "-q",
            "-o",
            tmp_path / "s.csv",
        ],
    )
    assert code == 0, err
    points = np.loadtxt(tmp_path / "s.csv", delimiter=",", skiprows=1, ndmin=2)
    report = json.loads((tmp_path / "s.privacy.json").read_text())
    assert points.shape == (1, 2) and np.linalg.norm(points) <= 1 + 1e-9  # in the public ball
    assert report["delta"] == 1e-6 and report["guarantee_holds"] is True


# -- SIGTERM is handled like Ctrl-C: clean stop, resumable ----------------------------


def test_sigterm_stops_cleanly_and_the_rerun_resumes(data, tmp_path, capsys):
    out = tmp_path / "run"
    out.mkdir()
    argv = [sys.executable, "-m", "privevo.cli", *map(str, synth(data, "--seed", "0", "-q"))]
    argv[argv.index("--iterations") + 1] = "150"
    resumable = argv + ["--checkpoint", str(out / "c.ckpt"), "-o", str(out / "s.csv")]
    proc = subprocess.Popen(resumable, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not (out / "c.ckpt").exists() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.02)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    if proc.returncode == 0:
        pytest.skip("the run finished before SIGTERM arrived (a very fast machine)")
    assert proc.returncode == 143, err
    assert err.strip().splitlines() == [
        "privevo synth: terminated (SIGTERM); rerun the same command to resume from the checkpoint"
    ]
    assert sorted(p.name for p in out.iterdir()) == ["c.ckpt"]  # no hidden temporary, no output
    done = subprocess.run(resumable, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert main(argv[3:] + ["-o", str(tmp_path / "whole.csv")]) == 0  # uninterrupted
    assert (out / "s.csv").read_bytes() == (tmp_path / "whole.csv").read_bytes()


# -- the seed's value is written nowhere ----------------------------------


def test_the_seed_value_is_in_no_output(data, tmp_path, cli, monkeypatch):
    import privevo.demo

    seen = []
    for argv in (
        kmeans(data, "--seed", SEED, "--plot", "-o", tmp_path / "c.csv"),
        kmeans(data, "--seed", SEED, "--json"),
        synth(data, "--seed", SEED, "--plot", "-o", tmp_path / "s.csv"),
        synth(data, "--seed", SEED, "--json"),
        [*SMALL_AUDIT, "--seed", SEED, "--json"],
    ):
        code, out, err = cli(argv)
        assert code == 0, err
        seen.append(out + err)
    real = privevo.demo.run_demo
    monkeypatch.setattr(privevo.demo, "run_demo", lambda **kw: real(**kw, quick=True))
    code, out, err = cli(["demo", "--seed", SEED, "--json", "--out", tmp_path / "demo"])
    assert code == 0, err
    seen.append(out + err)
    assert not any(str(SEED) in text for text in seen)
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert str(SEED).encode() not in path.read_bytes(), path
    report = json.loads((tmp_path / "c.privacy.json").read_text())
    assert report["public_parameters"]["cli"]["seeded"] is True
    assert any("seed" in w and "secret" in w for w in report["warnings"])


def test_summaries_never_carry_the_exact_n_under_add_remove(data, cli):
    for argv in (synth(data, "--json"), kmeans(data, "--json")):
        code, out, _ = cli(argv)
        assert code == 0
        result = json.loads(out)
        result.pop("privacy_report")
        result.pop("points")
        assert "400" not in json.dumps(result)
    for argv in (synth(data), kmeans(data)):  # the stderr summary's delta is not n^-1.1
        code, _, err = cli(argv)
        assert code == 0 and "delta=1e-06 " in err and f"{400**-1.1:.3g}" not in err


# -- --noise reaches the estimators --------------------------------------


def test_synth_noise_option(data, cli):
    code, out, err = cli(synth(data, "--noise", "discrete_gaussian", "--json"))
    assert code == 0, err
    assert json.loads(out)["privacy_report"]["noise"] == "discrete_gaussian"


def test_kmeans_noise_option(data, cli):

    code, out, err = cli(kmeans(data, "--noise", "discrete_gaussian", "--json"))
    assert code == 0, err
    report = json.loads(out)["privacy_report"]
    assert "discrete_gaussian" in json.dumps(report["releases"])


# -- audit shows no progress bars when stderr is not a terminal --------------------


def test_audit_no_progress_bars_off_a_terminal(cli):
    code, out, err = cli(SMALL_AUDIT)
    assert code == 0 and err == "" and "claimed ε" in out


# -- a broken part of a folder is named; NaN in a folder names the folder -------------


@pytest.mark.parametrize(
    "extra", [[], ["--plot", "-o", "{o}/s.csv"]], ids=["streamed", "in memory"]
)
def test_folder_errors_name_the_file(tmp_path, cli, extra):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

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
        code, out, err = cli(
            [
                "synth",
                tmp_path / name,
                "--m",
                "2",
                "--selector",
                "rank",
                "--epsilon",
                "1",
                "--radius",
                "3",
                "--iterations",
                "2",
                "-q",
                *extra,
            ],
        )
        assert code == 2 and len(err.strip().splitlines()) == 1 and message in err, err
        assert "NaN or infinite" in err or name == "broken"
        assert list((tmp_path / "o").iterdir()) == [] and out == ""


def test_summary_line_gives_the_pe_rounds(data, tmp_path, cli):
    # the report's first release may be a noisy count (T = 1): the line shows the PE rounds
    code, out, _ = cli(kmeans(data, "-o", tmp_path / "c.csv"))
    report = json.loads((tmp_path / "c.privacy.json").read_text())
    rounds = next(r for r in report["releases"] if r["name"] == "nn_histogram")
    assert code == 0 and f"T={rounds['count']};" in out and f"sigma={rounds['sigma']:.4g} " in out


def test_delta_default_is_left_to_an_estimator_that_derives_it():
    # under add/remove an n-derived delta would publish the exact n: an estimator that accepts
    # delta=None derives it from a noisy count, and the command line then passes None
    from argparse import Namespace

    from privevo import DPKMeans
    from privevo.cli.kmeans import _kmeans_model
    from privevo.cli.options import run_delta as _delta

    args = Namespace(delta=None, adjacency="add_remove")
    public = Namespace(delta=None, adjacency="replace")
    assert _delta(args, 400, library_default=True) is None
    assert _delta(args, 400, library_default=False) == 1e-6  # fixed: n is private
    assert _delta(public, 400, library_default=False) == 400**-1.1  # n is public
    with pytest.raises(ValueError, match="needs at least 2 rows; pass --delta"):
        _delta(public, 1, library_default=False)
    assert _delta(Namespace(delta=1e-7, adjacency="replace"), 400, library_default=True) == 1e-7
    kmeans_args = Namespace(
        delta=None,
        k=2,
        epsilon=1.0,
        radius=1.0,
        center=None,
        bounds=None,
        method="auto",
        recover_share=None,
        projection="pca",
        iterations=None,
        adjacency="add_remove",
        seed=None,
        quiet=True,
        json=True,
        backend="auto",
        checkpoint=None,
        noise="gaussian",
    )
    model = _kmeans_model(kmeans_args, 2)
    assert model.delta is None and DPKMeans().delta is None  # DPKMeans derives its own


@pytest.mark.parametrize("epsilon", ["1e-6", "1e6"])
def test_the_ends_of_the_epsilon_range_run(data, cli, epsilon):
    # one rule: every command accepts [1e-6, 1e6]; kmeans runs with a T given with --iterations
    for argv in (
        synth(data, "--json"),
        kmeans(data, "--json", "--iterations", "3"),
        synth(data, "--json", "--noise", "discrete_gaussian"),
        ["account", "--epsilon", "1", "--delta", "1e-100", "--steps", "3", "--json"],
    ):
        argv = [a if a != "1" else epsilon for a in argv]
        code, out, err = cli(argv)
        assert code == 0, err
        reported = json.loads(out).get("privacy_report", json.loads(out))["epsilon"]
        assert float(epsilon) * (1 - 1e-6) <= reported <= float(epsilon)


def test_a_long_run_off_a_terminal_is_never_silent(data, cli, monkeypatch):
    # no progress bar off a terminal, but a line every _HEARTBEAT_SECONDS
    import privevo.cli.publishing
    import privevo.cli.synth

    monkeypatch.setattr(privevo.cli.publishing, "_HEARTBEAT_SECONDS", 0.05)
    real = privevo.cli.synth._synth_model

    def slow_model(*args, **kwargs):  # every round takes at least 20 ms: the run lasts >= 1.2 s
        pe = real(*args, **kwargs)
        pe.callbacks = [lambda record: time.sleep(0.02)]
        return pe

    monkeypatch.setattr(privevo.cli.synth, "_synth_model", slow_model)
    argv = synth(data, "-o", str(data.parent / "beat.csv"))
    argv[argv.index("--iterations") + 1] = "60"
    code, _, err = cli(argv)
    assert code == 0
    lines = err.strip().splitlines()
    assert lines and all(line.startswith("privevo synth: running (") for line in lines)
    assert any(" of 60, " in line for line in lines)
    code, _, err = cli(argv + ["-q"])
    assert code == 0 and err == ""
