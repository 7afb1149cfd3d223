"""``privevo kmeans``: centres, report and plot written; the HDPE projection option; bounds and
JSON; checkpoints bound to their run; the summary line."""

from __future__ import annotations

import json

import numpy as np
import pytest

from helpers.cli import KMEANS, fill, read_report, swap


def test_kmeans_writes_centers_and_report(files, tmp_path, cli):
    code, out, err = cli(fill(KMEANS, files) + ["-o", tmp_path / "c.csv", "--plot"])
    assert code == 0, err
    centers = np.loadtxt(tmp_path / "c.csv", delimiter=",", skiprows=1)
    assert centers.shape == (2, 2)
    # the 90 % cluster at (−1, 0) is found; how often the 10 % one (40 of the 400 rows) is found
    # at ε = 1 is a rate over seeds (tests/kmeans/test_dpkmeans.py,
    # test_small_cluster_found_at_a_rate)
    assert np.abs(centers - [-1.0, 0.0]).max(axis=1).min() < 0.25
    report = read_report(tmp_path / "c.privacy.json")
    assert report["epsilon"] == pytest.approx(1.0, rel=1e-6) and report["guarantee_holds"] is True
    assert (tmp_path / "c.png").exists()


@pytest.mark.parametrize("projection", ["pca", "random"])
def test_kmeans_hdpe_projection_option(files, cli, projection):
    argv = swap(KMEANS, json=[], method="hdpe-means", projection=projection)
    code, out, err = cli(fill(argv, files))
    assert code == 0, err
    report = json.loads(out)["privacy_report"]
    names = [r["name"] for r in report["releases"]]
    assert ("second_moment" in names) == (projection == "pca")
    assert report["public_parameters"]["projection"] == projection
    assert report["epsilon"] == pytest.approx(1.0, rel=1e-6)


def test_kmeans_json_to_stdout_with_bounds(files, cli):
    argv = swap(KMEANS, radius=None, bounds=["-2", "2"], json=[], columns="x,y")
    code, out, err = cli(fill(argv, files))
    assert code == 0, err
    result = json.loads(out)
    assert np.asarray(result["points"]).shape == (2, 2) and result["outputs"] == {}
    assert result["privacy_report"]["epsilon"] == pytest.approx(1.0, rel=1e-6)


def test_kmeans_checkpoint_resumes(files, tmp_path, cli):
    argv = fill(swap(KMEANS, checkpoint=tmp_path / "km.ckpt"), files)
    assert cli(argv + ["-o", tmp_path / "a.csv"])[0] == 0
    assert cli(argv + ["-o", tmp_path / "b.csv"])[0] == 0
    assert (tmp_path / "a.csv").read_text() == (tmp_path / "b.csv").read_text()
    code, _, err = cli(swap(argv, epsilon=2) + ["-o", tmp_path / "c.csv"])
    assert code == 2 and "belongs to another run" in err and not (tmp_path / "c.csv").exists()


def test_summary_line_gives_the_pe_rounds(files, tmp_path, cli):
    # the report's first release may be a noisy count (T = 1): the line shows the PE rounds
    code, out, _ = cli(fill(KMEANS, files) + ["-o", tmp_path / "c.csv"])
    report = json.loads((tmp_path / "c.privacy.json").read_text())
    rounds = next(r for r in report["releases"] if r["name"] == "nn_histogram")
    assert code == 0 and f"T={rounds['count']};" in out and f"sigma={rounds['sigma']:.4g} " in out
