"""synth-text / intrinsic-dim: every argument checked before any model loads, -q, labels.

Models are replaced by stand-ins (no weights): ``_models`` is patched to fail the
test if a bad argument gets that far, or to return a seeded fake generator.
"""

from __future__ import annotations

import csv
import json

import pytest

from helpers.text_doubles import HashEmbedder, TopicLM
from privevo.cli import main
from privevo.cli import text as cli_text

DIM = 8


@pytest.fixture
def data(tmp_path):
    path = tmp_path / "r.csv"
    with open(path, "w", newline="") as handle:
        w = csv.writer(handle)
        w.writerow(["review", "score"])
        for i in range(30):
            w.writerow([f"review number {i} of some snack, fine", "great" if i % 3 else "other"])
    return path


@pytest.fixture
def no_models(monkeypatch):
    def fail(args):
        raise AssertionError("a model was loaded before the arguments were checked")

    monkeypatch.setattr(cli_text, "_models", fail)


@pytest.fixture
def fake_models(monkeypatch):
    monkeypatch.setattr(cli_text, "_models", lambda args: (TopicLM(), HashEmbedder(DIM)))


BASE = ["--column", "review", "--m", "4", "--epsilon", "1", "--iterations", "2"]


@pytest.mark.parametrize(
    "extra,message",
    [
        (["--temperature", "-1"], "--temperature must be a finite number >= 0"),
        (["--temperature", "nan"], "--temperature must be a finite number >= 0"),
        (["--topics", ","], "--topics holds no topic"),
        (["--topics", " , ,"], "--topics holds no topic"),
        (["--prompt", "Write about {thing}"], "unknown placeholder {thing}"),
        (["--prompt", "Write {kind"], "--prompt is not a valid template"),
        (["--prompt", "a {label} text"], "unknown placeholder {label}"),
        (["--retries", "-1"], "--retries must be an integer >= 0"),
        (["--threads", "0"], "--threads"),
        (["--max-tokens", "0"], "--max-tokens"),
        (["--api-base", "http://127.0.0.1:1/v1"], "--api-base needs --api-model"),
        (["--api-model", "m"], "--api-model needs --api-base"),
        (["--labels", "a,b"], "--labels needs --label-column"),
        (["--label-column", "score"], "--label-column needs --labels"),
        (["--label-column", "score", "--labels", ","], "--labels holds no label"),
        (["--label-column", "score", "--labels", "a,a"], "--labels must be distinct"),
        (
            ["--label-column", "score", "--labels", "a,b", "--label-weights", "1"],
            "--label-weights gives 1 weights for 2 --labels",
        ),
        (
            ["--label-column", "score", "--labels", "a,b", "--label-weights", "0,0"],
            "not all 0",
        ),
    ],
)
def test_bad_arguments_get_one_line_before_any_model_loads(data, no_models, capsys, extra, message):
    assert main(["synth-text", str(data), *BASE, *extra]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
    assert "_TextEngine" not in err and "internal error" not in err


@pytest.mark.parametrize(
    "extra,message",
    [
        (["--lookahead", "1000000000"], "--lookahead must be at most 100 "),
        (["--variations", "1000000000"], "--variations must be at most 1000 "),
        (["--iterations", "1000000000"], "--iterations must be at most 10000 "),
        (["--m", "1000000000"], "--m 1000000000 needs about "),
        (["--max-tokens", "1000000000"], "--max-tokens must be at most 100000 "),
        (["--m", "100000", "--max-tokens", "100000"], "--m 100000 needs about "),
        (["--threads", "1000000"], "--threads must be at most "),
    ],
)
def test_sizes_are_refused_before_any_file_is_read_or_model_loaded(
    tmp_path, no_models, capsys, extra, message
):
    missing = tmp_path / "not_there.csv"  # reading it would fail with another message
    assert main(["synth-text", str(missing), *BASE, *extra]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1, err
    assert "internal error" not in err and "not_there" not in err


def test_intrinsic_dim_refuses_variations_beyond_memory_before_reading(tmp_path, no_models, capsys):
    argv = ["intrinsic-dim", str(tmp_path / "not_there.txt"), "--variations", "1000000000", "-q"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "--variations 1000000000 needs about " in err and "GiB of memory" in err


def test_a_txt_output_with_labels_is_refused_before_reading(data, no_models, tmp_path, capsys):
    argv = ["synth-text", str(data), *BASE, "--label-column", "score", "--labels", "great,other"]
    assert main([*argv, "-o", str(tmp_path / "s.txt")]) == 2
    assert "cannot hold the label column" in capsys.readouterr().err
    assert not (tmp_path / "s.txt").exists()


def test_intrinsic_dim_checks_its_temperatures_before_loading(data, no_models, capsys):
    argv = ["intrinsic-dim", str(data), "--column", "review", "--temperatures", "1", "-2"]
    assert main([*argv, "-q"]) == 2
    assert "--temperatures must be a finite number >= 0" in capsys.readouterr().err


def test_quiet_prints_nothing_but_errors(data, fake_models, tmp_path, capsys):
    out = tmp_path / "s.csv"
    assert main(["synth-text", str(data), *BASE, "-q", "--seed", "1", "-o", str(out)]) == 0
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""
    assert out.exists()


def test_summary_line_reports_the_invalid_share_and_regenerations(data, fake_models, capsys):
    assert main(["synth-text", str(data), *BASE, "--seed", "1"]) == 0
    err = capsys.readouterr().err
    summary = next(line for line in err.splitlines() if "epsilon=" in line)
    assert "invalid on first try: S_0 0.0% (0 regenerated); round 1 0.0% (0 regenerated)" in (
        summary
    )


def test_labelled_synth_text_keeps_the_label_column(data, fake_models, tmp_path, capsys):
    out = tmp_path / "s.csv"
    argv = ["synth-text", str(data), *BASE, "--label-column", "score", "--selector", "rank"]
    assert main([*argv, "--labels", "great,other", "--label-weights", "3,1", "-o", str(out)]) == 0
    with open(out, newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 4 and set(rows[0]) == {"review", "score"}
    assert {r["score"] for r in rows} <= {"great", "other"}


def test_labelled_jsonl_round_trip(tmp_path, fake_models):
    data = tmp_path / "r.jsonl"
    data.write_text(
        "".join(
            json.dumps({"t": f"text {i} about tea, fine", "y": i % 2}) + "\n" for i in range(20)
        )
    )
    out = tmp_path / "s.jsonl"
    argv = ["synth-text", str(data), "--column", "t", "--m", "3", "--epsilon", "1"]
    argv += ["--iterations", "1", "--label-column", "y", "--labels", "0,1", "--selector", "rank"]
    argv += ["-q", "-o", str(out)]
    assert main(argv) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 3 and all(set(r) == {"t", "y"} and r["y"] in ("0", "1") for r in rows)


def test_summary_line_names_the_rules_that_fired_most_first():
    from privevo.cli.synth_text import validity_line

    steps = [
        {"generated": 10, "invalid": 3, "regenerated": 4, "fallback": 0, "reasons": {}},
        {
            "generated": 20,
            "invalid": 4,
            "regenerated": 5,
            "fallback": 1,
            "reasons": {"mask": 1, "echo": 2, "length": 1},
        },
    ]
    assert validity_line(steps) == (
        "invalid on first try: S_0 30.0% (4 regenerated); "
        "round 1 20.0% (echo 2, length 1, mask 1, 5 regenerated, 1 fell back)"
    )
