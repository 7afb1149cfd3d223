"""Refusals in the command line's own words: each names the flag or the file (never a Python
parameter), shows the user's value as given (never rounded), says what to do, and leaks no
numpy or pandas internals."""

from __future__ import annotations

import json
import warnings

import pytest

from helpers.cli import KMEANS, SYNTH, fill, swap

ACCOUNT = ["account", "--epsilon", "1", "--delta", "1e-5", "--steps", "3"]
AUDIT = ["audit", "--releases", "100", "--runs", "0"]

CASES = [
    # the memory check blames the flag whose factor is the larger one
    (
        swap(SYNTH, variations=10**12),
        "--variations 1000000000000 needs about",
        "choose a smaller --variations",
    ),
    (swap(SYNTH, m=10**11), "--m 100000000000 needs about", "choose a smaller --m"),
    # values as given: 1.000001e6 is not "1e+06", 5e-324 not "4.94066e-324"
    (swap(SYNTH, epsilon="1.000001e6"), "--epsilon must be between", "got 1000001.0"),
    (swap(KMEANS, delta="1.0000001"), "--delta must be in (0, 1)", "got 1.0000001"),
    (swap(KMEANS, radius="5e-324"), "--radius must be a number from", "got 5e-324"),
    (swap(SYNTH, R="1.0000001e15"), "--R must be a number from", "got 1000000100000000.0"),
    (swap(KMEANS, radius=None, bounds=["0", "1e15000001"]), "--bounds must be finite", "inf"),
    # flags, not Python parameters, in every command that takes them
    (swap(ACCOUNT, epsilon="0"), "--epsilon must be a finite number > 0", "got 0.0"),
    (swap(ACCOUNT, delta="1"), "--delta must be in (0, 1)", "got 1.0"),
    (swap(ACCOUNT, steps="0"), "--steps must be an integer >= 1", "got 0"),
    (swap(ACCOUNT, epsilon=None, sigma="1.0000001e-9"), "--sigma 1.0000001e-09 is too", "larger"),
    (swap(AUDIT, epsilon="2e6"), "--epsilon must be between", "got 2000000.0"),
    (swap(AUDIT, delta="0"), "--delta must be in (0, 1)", "got 0.0"),
    (swap(AUDIT, alpha="1.000001e6"), "--alpha must be in (0, 1)", "got 1000001.0"),
]


@pytest.mark.parametrize("argv, first, second", CASES, ids=[c[1] for c in CASES])
def test_refusal_names_the_flag_and_the_value_as_given(files, cli, argv, first, second):
    code, out, err = cli(fill(argv, files))
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and out == "", err
    assert first in err and second in err, err
    assert "epsilon must" not in err.replace("--epsilon must", "")  # no bare Python names
    assert "delta must" not in err.replace("--delta must", "")
    assert "got 1e+06" not in err and "Traceback" not in err


def _texts(tmp_path):
    path = tmp_path / "reviews.csv"
    path.write_text("review,label\n" + "".join(f"text {i},{i % 2 * 2 - 1}\n" for i in range(8)))
    return path


TEXT = ["--column", "review", "--m", "3", "--epsilon", "1", "--iterations", "1"]


@pytest.fixture
def model_load_refused(monkeypatch):
    """Loading a model ends the run with a marker: every check before it has passed."""
    from privevo.cli import text as cli_text

    def refuse(args):
        raise ValueError("MARKER: the checks passed, a model would load now")

    monkeypatch.setattr(cli_text, "_models", refuse)


def test_labels_that_start_with_a_minus_sign_are_a_value_not_an_option(
    tmp_path, cli, model_load_refused
):
    argv = ["synth-text", _texts(tmp_path), *TEXT, "--label-column", "label"]
    for labels in (["--labels", "-1,1"], ["--labels=-1,1"]):
        code, _, err = cli([*argv, *labels, "--label-weights", "-0,1"])
        assert code == 2 and "MARKER" in err, err  # parsed and checked: it got to the model
    code, _, err = cli([*argv, "--labels", "-1,1", "--label-weights", "-1,x"])
    assert "--label-weights must be comma-separated numbers, got 'x'" in err


def test_label_weights_whose_sum_overflows_are_refused_in_one_line(
    tmp_path, cli, model_load_refused
):
    argv = ["synth-text", _texts(tmp_path), *TEXT, "--label-column", "label", "--labels", "-1,1"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy's overflow warning would fail here
        code, _, err = cli([*argv, "--label-weights", "1e308,1e308"])
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "--label-weights add up to more than the largest float" in err
    assert "smaller" in err and "RuntimeWarning" not in err and "overflow" not in err


@pytest.mark.parametrize("bound", ['"zero"', "[1]", "true"])
def test_a_metadata_bound_that_is_not_a_number_names_the_file_and_the_column(tmp_path, cli, bound):
    meta = {"columns": [{"name": "a", "kind": "numeric", "lower": 0.0, "upper": 5.0}]}
    meta["columns"][0]["upper"] = json.loads(bound)
    path = tmp_path / "meta.json"
    path.write_text(json.dumps(meta))
    (tmp_path / "t.csv").write_text("a\n1\n2\n3\n")
    argv = ["synth-table", tmp_path / "t.csv", "--metadata", path, "--epsilon", "1"]
    code, _, err = cli([*argv, "-o", tmp_path / "out.csv"])
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert f"{path}: metadata column 'a': 'upper' must be a number, got" in err
    assert "could not convert" not in err and "internal error" not in err


@pytest.mark.parametrize("share", ["5e-324", "1e-9"])
def test_a_recover_share_too_small_to_calibrate_is_refused_in_the_flags_terms(cli, tmp_path, share):
    data = tmp_path / "x.csv"
    data.write_text("\n".join(f"{i % 7},{i % 5}" for i in range(60)) + "\n")
    code, out, err = cli(
        [
            "kmeans",
            data,
            "--k",
            "2",
            "--epsilon",
            "1",
            "--radius",
            "10",
            "--seed",
            "1",
            "--recover-share",
            share,
            "-o",
            tmp_path / "c.csv",
        ]
    )
    assert code != 0 and f"--recover-share {float(share)!r} is too small" in err
    assert "internal error" not in err and not (tmp_path / "c.csv").exists()


def test_the_library_refuses_a_recover_share_too_small_to_calibrate():
    import numpy as np

    from privevo import DPKMeans

    X = np.random.default_rng(0).normal(size=(100, 2))
    with pytest.raises(ValueError, match=r"^recover_share=5e-324 is too small"):
        DPKMeans(n_clusters=2, epsilon=1.0, radius=5.0, recover_share=5e-324).fit(X)
