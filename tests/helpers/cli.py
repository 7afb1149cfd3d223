"""Helpers of the command-line tests: argv templates, the report's keys, file digests."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

# argv templates: "{d}" is the folder of the shared input files (tests/cli/conftest.py, files)
SYNTH = ["synth", "{d}/mix.csv", "--m", "3", "--selector", "rank", "--epsilon", "1"]
SYNTH += ["--radius", "2", "--iterations", "3", "--seed", "0"]
KMEANS = ["kmeans", "{d}/mix.csv", "--k", "2", "--epsilon", "1", "--radius", "2", "--seed", "0"]
# a small audit: one ε, one noise, one adjacency, 2000 releases and 4 runs of 2 rounds
SMALL_AUDIT = ["audit", "--epsilon", "1", "--noise", "gaussian", "--adjacency", "add_remove"]
SMALL_AUDIT += ["--releases", "2000", "--runs", "4", "--iterations", "2"]

REPORT_KEYS = {
    *("epsilon", "delta", "mu", "sigma", "steps", "adjacency", "sensitivity", "noise"),
    *("mechanism", "dp_event", "releases", "public_parameters", "warnings", "guarantee_holds"),
    *("privevo_version", "timestamp"),
}


def swap(argv: list, **changes) -> list:
    """argv with ``--flag value`` pairs replaced: a value None drops the flag, ``[]`` adds it
    bare, a list gives several values; ``data`` replaces the input file."""
    out = list(argv)
    for name, value in changes.items():
        if name == "data":
            out[1] = value
            continue
        flag = "--" + name.replace("_", "-")
        if flag in out:
            i = out.index(flag)
            del out[i : i + 2]
        if value is not None:
            out += [flag, *(value if isinstance(value, list) else [str(value)])]
    return out


def fill(argv: list, d: Path, o: Path | None = None) -> list[str]:
    """The template with ``{d}`` (the input folder) and ``{o}`` (an output folder) filled in."""
    return [str(a).format(d=d, o=o) for a in argv]


def read_report(path: Path) -> dict:
    """A privacy report written beside an output, checked to hold every key."""
    report = json.loads(Path(path).read_text())
    assert REPORT_KEYS <= set(report)
    return report


def digests(folder: Path) -> dict[str, str]:
    """SHA-256 of every file under ``folder``, by relative name."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(Path(folder).rglob("*"))
        if p.is_file() and not p.is_symlink()
    }
