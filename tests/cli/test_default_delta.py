"""One default-δ rule for every command (privevo.accounting.default_delta): min(1e-6, 1/(10 N))
for a public size N, the fixed 1e-6 where N is private; the summary line shows the δ used."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest

from helpers.cli import KMEANS, SYNTH, swap
from privevo import accounting

N = 400  # rows of the shared mixture (tests/cli/conftest.py, files)
TEXTS = 30


def _texts(path) -> None:
    with open(path, "w", newline="") as handle:
        w = csv.writer(handle)
        w.writerow(["review"])
        w.writerows([f"review number {i} of a snack"] for i in range(TEXTS))


@pytest.fixture
def fake_text_models(monkeypatch):
    from helpers.text_doubles import HashEmbedder, WordLM
    from privevo.cli import text as cli_text

    monkeypatch.setattr(cli_text, "_models", lambda args: (WordLM(), HashEmbedder()))


def _point_argv(command: str, files, adjacency: str) -> list:
    template = KMEANS if command == "kmeans" else swap(SYNTH, iterations=2)
    argv = [a.replace("{d}", str(files)) for a in template]
    return swap(argv, adjacency=adjacency)


def _text_argv(tmp_path, adjacency: str) -> list:
    _texts(tmp_path / "reviews.csv")
    argv = ["synth-text", tmp_path / "reviews.csv", "--column", "review", "--m", "3"]
    return (
        argv
        + ["--epsilon", "1", "--iterations", "1", "--selector", "rank", "--seed", "1"]
        + [
            "--adjacency",
            adjacency,
        ]
    )


def _table_argv(tmp_path, n_rows: int | None) -> list:
    from privevo.tabular import metadata_from_description

    rng = np.random.default_rng(0)
    rows = zip(rng.integers(0, 10, 60), rng.choice(["x", "y"], 60))
    with open(tmp_path / "t.csv", "w", newline="") as handle:
        csv.writer(handle).writerows([("a", "b"), *rows])
    description = "a: integer 0..9\nb: categorical x, y\n"
    if n_rows is not None:
        description += f"n_rows: {n_rows}\n"
    metadata_from_description(description).to_json(tmp_path / "meta.json")
    argv = ["synth-table", tmp_path / "t.csv", "--metadata", tmp_path / "meta.json"]
    return argv + ["--epsilon", "1", "--iterations", "1", "--population", "20", "--seed", "1"]


def _run(cli, argv, tmp_path) -> tuple[float, str]:
    """(the report's δ, the command's output: its summary line) of a run writing -o OUT."""
    code, out, err = cli([*argv, "-o", tmp_path / "out.csv"])
    assert code == 0, err
    report = json.loads((tmp_path / "out.privacy.json").read_text())
    return report["delta"], out + err


def _shown(delta: float) -> str:
    return f"delta={delta:.3g}"


@pytest.mark.parametrize("command", ["kmeans", "synth"])
def test_point_commands_default_delta_from_the_public_n(files, tmp_path, cli, command, monkeypatch):
    delta, line = _run(cli, _point_argv(command, files, "replace"), tmp_path)
    assert delta == accounting.default_delta(N) <= 1 / (10 * N) and _shown(delta) in line
    # without the 1e-6 cap the rule's other term shows: exactly 1/(10 N) of the public N
    monkeypatch.setattr(accounting, "DEFAULT_DELTA_ADD_REMOVE", 1.0)
    delta, line = _run(cli, _point_argv(command, files, "replace"), tmp_path)
    assert delta == 1 / (10 * N) and _shown(delta) in line


@pytest.mark.parametrize("command", ["kmeans", "synth"])
def test_point_commands_fixed_default_where_n_is_private(files, tmp_path, cli, command):
    delta, line = _run(cli, _point_argv(command, files, "add_remove"), tmp_path)
    assert delta == 1e-6 and "delta=1e-06 " in line


def test_synth_text_default_delta_from_the_public_number_of_texts(
    tmp_path, cli, fake_text_models, monkeypatch
):
    delta, line = _run(cli, _text_argv(tmp_path, "replace"), tmp_path)
    assert delta == accounting.default_delta(TEXTS) <= 1 / (10 * TEXTS)
    assert f"delta={delta:.3g}" in line
    monkeypatch.setattr(accounting, "DEFAULT_DELTA_ADD_REMOVE", 1.0)
    delta, line = _run(cli, _text_argv(tmp_path, "replace"), tmp_path)
    assert delta == 1 / (10 * TEXTS) and f"delta={delta:.3g}" in line
    monkeypatch.undo()
    delta, line = _run(cli, _text_argv(tmp_path, "add_remove"), tmp_path)
    assert delta == 1e-6 and "delta=1e-06 " in line


@pytest.mark.parametrize("n_rows", [3000, 200_000])
def test_synth_table_default_delta_from_the_metadata_n_rows(tmp_path, cli, n_rows):
    """The public N is the metadata's n_rows (a declared size, not the table's length): the
    old default N^-1.1 was 1.5e-4 ≈ 0.45/N at N = 3000."""
    pytest.importorskip("pandas")
    delta, line = _run(cli, _table_argv(tmp_path, n_rows), tmp_path)
    assert delta == accounting.default_delta(n_rows) <= 1 / (10 * n_rows)
    assert delta == min(1e-6, 1 / (10 * n_rows)) and f"delta={delta:.3g}" in line


def test_synth_table_fixed_default_without_n_rows(tmp_path, cli):
    pytest.importorskip("pandas")
    delta, line = _run(cli, _table_argv(tmp_path, None), tmp_path)
    assert delta == 1e-6 and "delta=1e-06" in line


@pytest.mark.parametrize("n", [2, 10, 1000, 10**5, 10**5 + 1, 3 * 10**6, 10**9, 10**12])
def test_the_rule_never_looser_than_one_over_10_n(n):
    delta = accounting.default_delta(n)
    assert delta <= 1 / (10 * n) and delta <= 1e-6 and delta <= n**-1.1
    assert delta == min(1e-6, 1 / (10 * n), n**-1.1)
    assert not isinstance(delta, accounting.DefaultDelta)  # a public N: never refused


def test_the_fixed_default_is_refused_from_a_noisy_count_above_1e5():
    default = accounting.default_delta(None)
    assert isinstance(default, accounting.DefaultDelta) and default == 1e-6
    accounting.check_default_delta(default, 10**5)
    with pytest.raises(ValueError, match="too large for data of this size"):
        accounting.check_default_delta(default, 1.5 * 10**5)
