"""Values near 1e300 are clipped onto the public ball, not overflowed to 0 or called infinite,
by kmeans and synth, in a file or in a streamed folder."""

from __future__ import annotations

import json

import numpy as np

from helpers.cli import KMEANS, SYNTH, fill, swap

# a seeded rank run in the public ball of radius 10, printed as JSON
SYNTH_IN_BALL_10 = swap(SYNTH, m=2, epsilon=4, radius=10, iterations=5, json=[]) + ["-q"]


def test_huge_finite_values_are_clipped_not_zeroed(files, cli):
    # guards against: values near 1e300 overflowing while clipping (centres ~0, guarantee "true")
    argv = swap(KMEANS, data="{d}/huge.csv", epsilon=4, radius=10, json=[]) + ["-q"]
    code, out, err = cli(fill(argv, files))
    assert code == 0, err
    result = json.loads(out)
    centers = np.asarray(result["points"])
    # every row lies far outside the ball: clipped onto the circle of radius 10, near (+-10, 0)
    assert sorted(np.round(centers[:, 0] / 10).tolist()) == [-1.0, 1.0]
    assert np.all(np.abs(centers[:, 1]) < 3)
    assert result["privacy_report"]["guarantee_holds"] is True


def test_huge_finite_values_synth_agrees(files, cli):
    # guards against: synth called the values "NaN or infinite"
    code, out, err = cli(fill(swap(SYNTH_IN_BALL_10, data="{d}/huge.csv"), files))
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
    code, out, err = cli(swap(SYNTH_IN_BALL_10, data=parts))
    assert code == 0, err
    points = np.asarray(json.loads(out)["points"])
    assert np.isfinite(points).all() and np.all(np.linalg.norm(points, axis=1) <= 10 + 1e-9)
    assert np.abs(points[:, 0]).max() > 5  # the modes at ±1e300·(1, 0) clip to ±10, not to 0
