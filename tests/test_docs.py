"""The docs describe the software as it is (docs/architecture.md, "The modules").

- docs/architecture.md's module table lists every file of ``src/privevo`` (``.py`` modules and
  the C sources under ``_ext/``), and every file it lists exists;
- the docstrings that list things list them all: ``privevo.cli`` every command of the parser,
  ``privevo.audit`` every ``audit_*`` setting it exports;
- README.md, docs/ and benchmarks/README.md hold no commit hash, no machine-load figure and no
  project history ("target missed", "the revision before ...", worktrees of old revisions):
  history goes to CHANGELOG.md. Each rule is shown to catch a planted line.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from helpers import REPO_ROOT

SRC = REPO_ROOT / "src" / "privevo"
ARCHITECTURE = REPO_ROOT / "docs" / "architecture.md"
MODULE_ROW = re.compile(r"^\|\s*`([^`]+)`\s*\|\s*([^|]+?)\s*\|")
DESCRIBED = [REPO_ROOT / "README.md", *sorted((REPO_ROOT / "docs").rglob("*.md"))]
RESULTS = [*DESCRIBED, REPO_ROOT / "benchmarks" / "README.md"]

# 7 to 40 hex digits with at least one letter and one digit, as a word: a commit hash. Digests
# spelled out in full (sha256: 64) and colours (#1f77b4: 6) do not match.
HASH = re.compile(r"(?<![\w#/.-])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}(?![\w-])")
LOAD = re.compile(
    r"\bload(?:\s+average|\s+avg|avg)?\s*(?:(?:[≈~=]|about|around|of|near)\s*)?\d|\bload average\b",
    re.I,
)
HISTORY = re.compile(
    r"\btarget\b[^\n|;]{0,15}\bmissed\b|\bmiss(?:ed|es)\b[^\n|;]{0,20}\btarget\b|\bthe target was\b"
    r"|\brevision before\b|\bgit worktree add\b|\b(?:at|against|beside) (?:revision|commit) \w",
    re.I,
)


def table_files(doc: Path = ARCHITECTURE) -> dict[str, str]:
    """File (relative to src/privevo) → layer, from the table whose header is
    ``| module | layer | ...``."""
    rows, inside = {}, False
    for line in doc.read_text().splitlines():
        if re.match(r"^\|\s*module\s*\|\s*layer\s*\|", line):
            inside = True
        elif inside and line.startswith("|"):
            match = MODULE_ROW.match(line)
            if match:
                rows[match.group(1)] = match.group(2)
        else:
            inside = False
    return rows


def tree_files(root: Path = SRC) -> set[str]:
    """Every source file of the package: its modules and the C sources of its extensions."""
    return {
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if p.suffix in {".py", ".c", ".h"} and "__pycache__" not in p.parts
    }


def findings(paths: list[Path], pattern: re.Pattern) -> list[str]:
    return [
        f"{path.relative_to(REPO_ROOT)}:{n}: {line.strip()[:100]}"
        for path in paths
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if pattern.search(line)
    ]


# -- docs/architecture.md against the tree --------------------------------------------------


def test_every_module_is_in_the_architecture_table():
    missing = tree_files() - set(table_files())
    assert not missing, f"add these to docs/architecture.md's module table: {sorted(missing)}"


def test_every_module_in_the_architecture_table_exists():
    gone = set(table_files()) - tree_files()
    assert not gone, f"docs/architecture.md lists files that do not exist: {sorted(gone)}"


def test_the_table_parser_reads_the_table(tmp_path):
    doc = tmp_path / "a.md"
    doc.write_text(
        "| module | layer | what |\n|---|---|---|\n| `x.py` | base | one |\n"
        "| `y/z.py` | front ends | two |\n\n| `not/in/a/module/table.py` | base | - |\n"
    )
    assert table_files(doc) == {"x.py": "base", "y/z.py": "front ends"}
    assert len(table_files()) > 90 and table_files()["private/release.py"] == "private"


# -- docstrings that list things ------------------------------------------------------------


def test_the_cli_docstring_names_every_command():
    import privevo.cli

    parser = privevo.cli._parser()
    commands = next(a.choices for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert len(commands) >= 9
    missing = [c for c in commands if f"``{c}``" not in privevo.cli.__doc__]
    assert not missing, f"privevo.cli's docstring does not name {missing}"


def test_the_audit_docstring_names_every_setting():
    import privevo.audit

    settings = [n for n in privevo.audit.__all__ if n.startswith("audit_")]
    assert len(settings) >= 9
    missing = [s for s in settings if f":func:`{s}`" not in privevo.audit.__doc__]
    assert not missing, f"privevo.audit's docstring does not list {missing}"


# -- no hashes, load figures or history in the docs -----------------------------------------


def test_no_commit_hash_in_the_docs():
    assert findings(RESULTS, HASH) == []


def test_no_machine_load_figure_in_the_docs():
    assert findings(RESULTS, LOAD) == []


def test_no_project_history_in_the_docs():
    assert findings(RESULTS, HISTORY) == []


PATTERNS = {"hash": HASH, "load": LOAD, "history": HISTORY}


@pytest.mark.parametrize(
    "rule, line, caught",
    [
        ("hash", "measured at 8581856 against 3a16737", True),
        ("hash", "revision 3a16737.", True),
        ("hash", "`--rev 7bafff5`", True),
        ("hash", "| 77be75fa0c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f | x |", True),
        ("hash", "colour #1f77b4, 1e-10, 2026-12-03, 0.0778, deadbeef, 1234567", False),
        ("load", "2 shared cores, load 5–8;", True),
        ("load", "on 2 cores (load average ≈ 2–3)", True),
        ("load", "the load average of the machine", True),
        ("load", "Load 1–1.9:", True),
        ("load", "under load about 17", True),
        ("load", "a load of 4 on the machine", True),
        ("load", "loads the model once; download 3 files", False),
        ("history", "mean ratio .678, target .65 missed;", True),
        ("history", "(**missed**: the target was two tables of three)", True),
        ("history", "side by side with the revision before the validity checker", True),
        ("history", "git worktree add /tmp/old 3a16737", True),
        ("history", "the mean ratio .678 misses the .65 target", True),
        ("history", "the target row is in the data; a missing value", False),
    ],
)
def test_the_doc_rules_catch_planted_lines(tmp_path, monkeypatch, rule, line, caught):
    monkeypatch.setattr(f"{__name__}.REPO_ROOT", tmp_path)
    doc = tmp_path / "x.md"
    doc.write_text(f"A line.\n{line}\n")
    assert bool(findings([doc], PATTERNS[rule])) == caught
