"""Every command refuses an output that is one of its inputs, before reading any row."""

from __future__ import annotations

import hashlib
import os

import pytest

from privevo.cli import main
from privevo.cli import text as cli_text


def _digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def files(tmp_path, monkeypatch):
    monkeypatch.setattr(cli_text, "_models", lambda args: pytest.fail("model loaded"))
    (tmp_path / "t.csv").write_text("a,b\n1,x\n2,y\n")
    (tmp_path / "t.tsv").write_text("a\tb\n1\tx\n2\ty\n")
    (tmp_path / "r.csv").write_text("review\ngood\nbad\n")
    (tmp_path / "s.privacy.json").write_text("{}")
    (tmp_path / "d.json").write_text("a: numeric 0 10\nb: categorical x y\n")
    os.symlink(tmp_path / "t.csv", tmp_path / "link.csv")
    os.link(tmp_path / "t.csv", tmp_path / "hard.csv")
    return tmp_path


CASES = [
    ("synth-table {d}/t.csv --epsilon 1 -o {d}/t.csv", "input data file"),
    ("synth-table {d}/t.tsv --epsilon 1 -o {d}/t.tsv", "input data file"),
    ("synth-table {d}/t.csv --epsilon 1 -o {d}/link.csv", "input data file"),
    ("synth-table {d}/t.csv --epsilon 1 -o {d}/hard.csv", "input data file"),
    (
        "synth-table {d}/t.csv --epsilon 1 --metadata {d}/s.privacy.json -o {d}/s.csv",
        "--metadata file",
    ),
    ("metadata {d}/t.csv --public-description {d}/d.json -o {d}/d.json", "--public-description"),
    ("metadata {d}/t.csv -o {d}/hard.json", None),
    (
        "synth-text {d}/r.csv --column review --epsilon 1 --m 4 --iterations 1 -o {d}/r.csv",
        "input data file",
    ),
    (
        "synth-text {d}/r.csv --column review --epsilon 1 --m 4 --iterations 1"
        " --checkpoint {d}/r.csv",
        "input data",
    ),
    ("kmeans {d}/hard.csv --k 2 --epsilon 1 --bounds 0 9 -o {d}/t.csv", "input data file"),
    ("synth {d}/t.csv --epsilon 1 --m 8 --bounds 0 9 --checkpoint {d}/link.csv", "input data file"),
]


@pytest.mark.parametrize("command,message", [c for c in CASES if c[1]])
def test_output_on_an_input_is_refused(files, capsys, command, message):
    before = {p.name: _digest(p) for p in files.iterdir()}
    code = main(command.format(d=files).split())
    err = capsys.readouterr().err
    assert code == 2
    assert message in err and len(err.strip().splitlines()) == 1
    assert {p.name: _digest(p) for p in files.iterdir()} == before
