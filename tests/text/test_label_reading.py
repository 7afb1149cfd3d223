"""benchmarks/text_label_reading.py: the reader's sheet shows neither run nor label, and the score
counts the texts read as their label per run."""

from __future__ import annotations

import csv
import json
import sys

import pytest

from helpers import REPO_ROOT

BENCHMARKS = REPO_ROOT / "benchmarks"


@pytest.fixture
def reading_tool(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))  # the tool imports its sibling text_gate
    import text_label_reading

    yield text_label_reading
    sys.modules.pop("text_label_reading", None)


def _saved(path, rows):
    with open(path, "w", newline="", encoding="utf-8") as handle:
        out = csv.writer(handle)
        out.writerow(["label", "review", "audit"])
        out.writerows([label, text, ""] for label, text in rows)
    return str(path)


def test_the_sheet_is_blind_and_the_score_counts_each_run(tmp_path, reading_tool):
    a = _saved(tmp_path / "run_a.csv", [("great", f"lovely tea {i}") for i in range(4)])
    b = _saved(tmp_path / "run_b.csv", [("other", f"stale bread {i}") for i in range(4)])
    out, sheet = tmp_path / "reading.json", tmp_path / "sheet.txt"
    reading_tool.main(["--make", a, b, "--n", "3", "--out", str(out), "--sheet", str(sheet)])
    lines = sheet.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 6
    assert not any(word in line for line in lines for word in ("run_", "great", "other"))
    reading = json.loads(out.read_text(encoding="utf-8"))
    assert reading["runs"] == ["run_a", "run_b"]
    by_id = {str(t["id"]): t for t in reading["texts"]}
    # the reader calls every text "great": run a agrees 3 of 3, run b 0 of 3
    reading["readers"]["r"] = dict.fromkeys(by_id, "great")
    table = reading_tool.score(reading)
    assert "| r | run_a | 3 | 3 (100 %;" in table and "great 3 of 3 |" in table
    assert "| r | run_b | 3 | 0 (0 %;" in table and "other 0 of 3 |" in table
