"""``privevo synth``: points, report and plot written; every selector; checkpoints; the GAPE
shortfall said; one-row input; user-level and k-neighbour votes from columns."""

from __future__ import annotations

import json

import numpy as np
import pytest

from helpers.cli import SYNTH, fill, read_report, swap


def test_synth_writes_points_report_and_plot(files, tmp_path, cli):
    argv = fill(swap(SYNTH, iterations=5, epsilon=2), files)
    code, out, err = cli([*argv, "-o", tmp_path / "syn.csv", "--plot"])
    assert code == 0 and err == ""  # not a terminal: no progress bars
    points = np.loadtxt(tmp_path / "syn.csv", delimiter=",", skiprows=1)
    assert points.shape == (3, 2)
    report = read_report(tmp_path / "syn.privacy.json")
    assert report["epsilon"] == pytest.approx(2.0, rel=1e-9) and report["steps"] == 5
    assert report["guarantee_holds"] is True and len(report["warnings"]) == 1
    assert "seed" in report["warnings"][0] and report["public_parameters"]["cli"]["seeded"] is True
    assert report["public_parameters"]["radius"] == 2.0
    assert report["public_parameters"]["cli"]["columns"] == ["x", "y"]
    assert (tmp_path / "syn.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "epsilon=2 " in out and "wrote" in out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["syn.csv", "syn.png", "syn.privacy.json"]
    # same seed, same points
    code, _, _ = cli([*argv, "-o", tmp_path / "again.npy"])
    np.testing.assert_array_equal(np.load(tmp_path / "again.npy"), points)


@pytest.mark.parametrize("selector", ["gape", "gape_agg", "subsample", "weighted_kmeans"])
def test_synth_selectors_and_json(files, cli, selector):
    code, out, err = cli(fill(swap(SYNTH, selector=selector, json=[]), files))
    assert code == 0, err
    result = json.loads(out)
    assert np.asarray(result["points"]).shape[1] == 2 and 1 <= len(result["points"]) <= 3
    assert result["privacy_report"]["epsilon"] == pytest.approx(1.0, rel=1e-9)
    assert result["selector"] == selector


def test_synth_without_public_radius_warns_and_marks_report(files, tmp_path, cli):
    code, _, err = cli(fill(swap(SYNTH, radius=None), files) + ["-o", tmp_path / "s.npy"])
    assert code == 0
    assert err.startswith("privevo: warning: PrivacyLeakWarning: ")
    assert len(err.strip().splitlines()) == 1
    report = read_report(tmp_path / "s.privacy.json")
    assert report["guarantee_holds"] is False and "not DP" in report["warnings"][-1]


def test_synth_checkpoint_resume_spends_nothing_more(files, tmp_path, cli):
    argv = fill(swap(SYNTH, iterations=4, checkpoint=tmp_path / "run.ckpt"), files)
    code, _, _ = cli(argv + ["-o", tmp_path / "a.csv"])
    assert code == 0
    first = (tmp_path / "run.ckpt").read_bytes()
    code, _, _ = cli(argv + ["-o", tmp_path / "b.csv"])
    assert code == 0
    assert (tmp_path / "a.csv").read_text() == (tmp_path / "b.csv").read_text()
    a, b = read_report(tmp_path / "a.privacy.json"), read_report(tmp_path / "b.privacy.json")
    assert a["epsilon"] == b["epsilon"] and b["releases"][0]["count"] == 4
    assert (tmp_path / "run.ckpt").read_bytes() == first  # finished: nothing released or rewritten


def test_gape_fewer_points_said_on_stderr_and_in_json(files, tmp_path, cli):
    # GAPE keeps only the points that pass its noise threshold: it may deliver fewer than --m
    argv = fill(swap(SYNTH, m=200, selector=None, radius=5, iterations=None), files)
    argv += ["--json", "-o", tmp_path / "s.csv"]
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


def test_one_row_with_delta_runs(files, tmp_path, cli):
    argv = swap(SYNTH, data="{d}/one.csv", m=1, radius=1, iterations=2, delta="1e-6")
    code, _, err = cli(fill(argv, files) + ["-q", "-o", tmp_path / "s.csv"])
    assert code == 0, err
    points = np.loadtxt(tmp_path / "s.csv", delimiter=",", skiprows=1, ndmin=2)
    report = json.loads((tmp_path / "s.privacy.json").read_text())
    assert points.shape == (1, 2) and np.linalg.norm(points) <= 1 + 1e-9  # in the public ball
    assert report["delta"] == 1e-6 and report["guarantee_holds"] is True


def test_user_column_and_neighbors(tmp_path, cli, mixture400):
    path = tmp_path / "rows.csv"
    users = np.arange(len(mixture400)) // 4  # 100 users of 4 rows
    np.savetxt(
        path, np.column_stack([mixture400, users]), delimiter=",", header="x,y,user", comments=""
    )
    before = path.read_bytes()
    argv = swap(SYNTH, data=path, epsilon=2, radius=3, user_column="user", neighbors=2)
    code, out, err = cli([*argv, "--json", "-q"])
    assert code == 0, err
    out = json.loads(out)
    assert out["privacy_report"]["unit"] == "user"
    assert np.asarray(out["points"]).shape == (3, 2)  # the user column is not a feature
    code, _, err = cli(swap(argv, user_column="owner", neighbors=None) + ["--json", "-q"])
    assert code == 2 and "--user-column owner is not a column" in err
    assert path.read_bytes() == before
