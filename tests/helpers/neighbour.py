"""The neighbour replay: every published byte is a function of the releases and public inputs,
and every release's exact statistic moves by at most its declared sensitivity.

Every noisy value privevo publishes is drawn by
:func:`privevo.private.release.release_noise`, and every release shows its exact
statistic to :func:`privevo.private.release.observing_exact_statistics` first
(docs/privacy.md, "How the checks work"). The check

1. runs an entry point on D, recording each value ``release_noise`` returns and
   each release's exact statistic;
2. runs it on a neighbour D' with the same seed, ``release_noise`` patched to
   draw as usual (so the generator advances the same way) but to return D's
   recorded value instead of its own, again recording the exact statistics;
3. compares every published artefact of the two runs byte for byte (the
   *byte replay*), and
4. compares each release's exact statistic on D and D': the change of every
   part, in the release's norm, must be at most its declared sensitivity (the
   *sensitivity replay*). With the releases pinned, both runs ask the same
   questions (same candidates, same public maps), so a leak that travels
   *through* a release (a broken sensitivity, a per-row encoding that depends on
   other rows) shows up here although the bytes after it are pinned equal.

With the releases pinned, an artefact that differs was carried by something
other than a release: a leak. Report timestamps and the version are masked,
nothing else. An entry point that makes a different number of releases, or
releases of another shape or name, on D' is a leak too (the artefact ``releases``).

The privevo modules are looked up when a check runs, not when this file is
imported, so the checks also run against a patched copy of the package
(tests/privacy/test_planted_leaks.py).
"""

from __future__ import annotations

import contextlib
import importlib
import io
import json
import os
import shutil
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

MASKED_KEYS = ("timestamp", "privevo_version")


class _Pinned:
    """``release_noise`` that records (first run) or replays (second run) its outputs."""

    def __init__(self, original: Callable, recorded: list | None):
        self.original, self.recorded, self.values, self.shapes = original, recorded, [], []
        self.inputs: list[np.ndarray] = []  # what was noised, to hold against what was shown

    def __call__(self, values, *args, **kwargs):
        self.inputs.append(np.array(values, dtype=np.float64).ravel())
        noisy = self.original(values, *args, **kwargs)
        self.shapes.append(tuple(np.shape(noisy)))
        if self.recorded is not None and len(self.values) < len(self.recorded):
            pinned = self.recorded[len(self.values)]
            if np.shape(pinned) == np.shape(noisy):
                noisy = pinned.copy()
        self.values.append(np.array(noisy, copy=True))
        return noisy


def _release_module():
    return importlib.import_module("privevo.private.release")


@contextlib.contextmanager
def pinned_releases(recorded: list | None = None):
    """Patch ``release_noise`` in every privevo module that binds it; yield the recorder.

    The recorder's ``exact`` lists every release's :class:`ExactStatistic` in order."""
    release_module = _release_module()
    original = release_module.release_noise
    pinned = _Pinned(original, recorded)
    patched = [
        module
        for name, module in list(sys.modules.items())
        if name.startswith("privevo") and getattr(module, "release_noise", None) is original
    ]
    for module in patched:
        module.release_noise = pinned
    pinned.exact = []
    try:
        with release_module.observing_exact_statistics(pinned.exact.append):
            yield pinned
    finally:
        for module in patched:
            module.release_noise = original


def mask(text: str) -> str:
    """A report (or any JSON text) with its timestamp and version masked; other text unchanged."""
    try:
        doc = json.loads(text)
    except (ValueError, TypeError):
        return text
    return json.dumps(_masked(doc), sort_keys=True)


def _masked(doc):
    if isinstance(doc, dict):
        return {k: "<masked>" if k in MASKED_KEYS else _masked(v) for k, v in doc.items()}
    if isinstance(doc, list):
        return [_masked(v) for v in doc]
    return doc


def published(run: Callable[[], object]) -> dict[str, object]:
    """Run ``run()``; collect what it publishes: its result, stdout, stderr, warnings, error."""
    out, err = io.StringIO(), io.StringIO()
    artefacts: dict[str, object] = {}
    with (
        warnings.catch_warnings(record=True) as caught,
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
    ):
        warnings.simplefilter("always")
        try:
            result = run()
            if isinstance(result, dict):
                artefacts.update({f"result {k}": v for k, v in result.items()})
            else:
                artefacts["result"] = result
        except SystemExit as stop:
            artefacts["exit"] = stop.code
        except Exception as error:  # a refusal is published too: its type and message
            artefacts["error"] = f"{type(error).__name__}: {error}"
    artefacts["stdout"] = mask(out.getvalue())
    artefacts["stderr"] = err.getvalue()
    artefacts["warnings"] = [f"{w.category.__name__}: {w.message}" for w in caught]
    return artefacts


EXACT = "exact statistics (not published)"


def _run_on(run, data, recorded):
    with pinned_releases(recorded) as pinned:
        artefacts = published(lambda: run(data))
    artefacts["releases"] = [
        *pinned.shapes,
        *((s.name, tuple(np.shape(p) for p in s.parts)) for s in pinned.exact),
    ]
    artefacts[EXACT] = pinned.exact
    artefacts[UNSHOWN] = unshown_noise(pinned)
    return pinned, artefacts


def exact_pairs(run: Callable[[object], object], data, neighbour) -> list[tuple]:
    """Each release's exact statistic on D and on D' (D's noisy values pinned), in order; both
    runs must succeed and make the same releases."""
    first, on_d = _run_on(run, data, None)
    _, on_d2 = _run_on(run, neighbour, first.values)
    for artefacts in (on_d, on_d2):
        assert "error" not in artefacts, artefacts["error"]
    assert [s.name for s in on_d[EXACT]] == [s.name for s in on_d2[EXACT]]
    return list(zip(on_d[EXACT], on_d2[EXACT]))


UNSHOWN = "noise on values not shown to the sensitivity seam (not published)"


def unshown_noise(pinned) -> str:
    """Whether every value noised is a value some release showed the sensitivity seam, in order
    ('' if so): a release that noises something else escapes the sensitivity replay."""
    noised = np.concatenate(pinned.inputs) if pinned.inputs else np.zeros(0)
    shown = [np.ravel(p) for s in pinned.exact for p in s.parts]
    shown = np.concatenate(shown) if shown else np.zeros(0)
    if noised.shape == shown.shape and np.array_equal(noised, shown, equal_nan=True):
        return ""
    return (
        f"{noised.size} values were noised, {shown.size} shown to the sensitivity seam, "
        "and they differ"
    )


def published_keys(*artefacts: dict) -> list[str]:
    """The names of the published artefacts (not the replay's own records), sorted."""
    return sorted(set().union(*artefacts) - {EXACT, UNSHOWN})


def differences(a: dict, b: dict) -> list[str]:
    """The artefacts that differ, by name (arrays compared by dtype, shape and bytes)."""
    return [key for key in published_keys(a, b) if _bytes(a.get(key)) != _bytes(b.get(key))]


# -- the sensitivity replay ------------------------------------------------------------------


@dataclass(frozen=True)
class Movement:
    """How far one release's exact statistic moved between D and D' against its sensitivity."""

    release: str
    index: int  # the release's position in the run
    part: int
    change: float  # the largest part's change, in the release's norm
    sensitivity: float
    slack: float = 0.0  # float round-off forgiven: 1e-12 of the part's magnitude

    @property
    def exceeds(self) -> bool:
        return not self.change <= self.sensitivity * (1.0 + RATIO_TOLERANCE) + self.slack

    @property
    def ratio(self) -> float:
        return self.change / self.sensitivity if self.sensitivity > 0 else float("inf")


def movements(exact_d: list, exact_d2: list) -> list[Movement]:
    """The largest movement of each release, paired by position (same name and part shapes)."""
    moved = []
    for index, (a, b) in enumerate(zip(exact_d, exact_d2)):
        if a.name != b.name or len(a.parts) != len(b.parts) or not a.parts:
            continue  # a different sequence of releases: the byte replay's ``releases`` says so
        changes = [
            _norm(np.asarray(pa) - np.asarray(pb), a.norm) if np.shape(pa) == np.shape(pb) else 0.0
            for pa, pb in zip(a.parts, b.parts)
        ]
        worst = int(np.argmax(changes))  # float sums of many rows round: forgive 1e-12 of them
        slack = 1e-12 * float(np.abs(a.parts[worst]).sum() + np.abs(b.parts[worst]).sum())
        moved.append(Movement(a.name, index, worst, changes[worst], a.sensitivity, slack))
    return moved


def _norm(diff: np.ndarray, norm: str) -> float:
    diff = np.ravel(diff).astype(np.float64)
    if not np.all(np.isfinite(diff)):
        return float("inf")
    return float(np.abs(diff).sum() if norm == "l1" else np.sqrt((diff * diff).sum()))


RATIO_TOLERANCE = 1e-9
LARGEST_RATIOS: dict[str, tuple[float, str]] = {}  # release family → (largest ratio, where)
PLANT_RESULTS: dict[str, str] = {}  # planted leak → "caught by ..." or "missed" (the catalogue)


def record_ratios(moved: list[Movement], where: str) -> None:
    """Keep each release family's largest observed/declared ratio (the session's table)."""
    for m in moved:
        if m.ratio > LARGEST_RATIOS.get(m.release, (-1.0, ""))[0]:
            LARGEST_RATIOS[m.release] = (m.ratio, where)


def sensitivity_violations(on_d: dict, on_d2: dict, where: str = "") -> list[str]:
    """The releases whose exact statistic moved by more than its sensitivity between D and D'."""
    moved = movements(on_d.get(EXACT, []), on_d2.get(EXACT, []))
    test = os.environ.get("PYTEST_CURRENT_TEST", "").rsplit(" ", 1)[0]
    record_ratios(moved, f"{test} [{where}]")
    return [
        f"release {m.index} ({m.release}) moved {m.change:.6g} against a declared sensitivity "
        f"{m.sensitivity:.6g} (ratio {m.ratio:.3g})"
        for m in moved
        if m.exceeds
    ]


def _bytes(value) -> bytes:
    if isinstance(value, np.ndarray):
        return repr((value.dtype.str, value.shape)).encode() + np.ascontiguousarray(value).tobytes()
    if isinstance(value, dict):
        return b"{" + b",".join(repr(k).encode() + b":" + _bytes(value[k]) for k in value) + b"}"
    if isinstance(value, (list, tuple)):
        return b"[" + b",".join(_bytes(v) for v in value) + b"]"
    if isinstance(value, bytes):
        return value
    return repr(value).encode()


def assert_neighbour_safe(
    run: Callable[[object], object], data, neighbour, releases: bool = True
) -> None:
    """Fail, naming the artefacts, if any published artefact differs between D and D', or if a
    release's exact statistic moved by more than its declared sensitivity.

    The run on D must succeed and (unless ``releases=False``) make at least one release.
    """
    assert_neighbours_safe(run, data, {"the neighbour": neighbour}, releases)


def assert_neighbours_safe(
    run: Callable[[object], object], data, neighbours: dict, releases: bool = True
) -> None:
    """:func:`assert_neighbour_safe` for several neighbours of D (D runs once); every failing
    neighbour is named."""
    failures = neighbour_failures(run, data, neighbours, releases)
    assert not failures, "\n".join(failures)


def neighbour_failures(
    run: Callable[[object], object],
    data,
    neighbours: dict,
    releases: bool = True,
    secrets: tuple[str, ...] = (),
) -> list[str]:
    """What the byte and sensitivity replays find for each neighbour (empty: all safe); with
    ``secrets`` (e.g. the seed's digits), any published artefact on D that contains one."""
    first, on_d = _run_on(run, data, None)
    assert "error" not in on_d and on_d.get("exit", 0) in (0, None), (
        f"the run on D itself failed: {on_d.get('error', on_d.get('exit'))} {on_d['stderr']}"
    )
    assert on_d["releases"] or not releases, "the run on D made no release: nothing was checked"
    failures = [f"on D: {on_d[UNSHOWN]}"] if on_d[UNSHOWN] else []
    failures += [
        f"on D: artefact {key} holds the secret {secret!r}"
        for key in published_keys(on_d)
        for secret in secrets
        if secret.encode() in _bytes(on_d[key])
    ]
    for name, neighbour in neighbours.items():
        _, on_d2 = _run_on(run, neighbour, first.values)
        diff = differences(on_d, on_d2)
        found = [
            f"{key}: {_show(on_d.get(key))} vs {_show(on_d2.get(key))}" for key in diff
        ] + sensitivity_violations(on_d, on_d2, name)
        if found:
            failures.append(
                f"{name}: published artefacts differ between neighbours or a "
                "release exceeds its sensitivity: " + "; ".join(found)
            )
    return failures


def _show(value) -> str:
    text = repr(value)
    return text if len(text) < 300 else text[:300] + "..."


def files_in(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` by relative name, reports masked (the CLI's output files)."""
    files = {}
    for path in sorted(p for p in Path(folder).rglob("*") if p.is_file()):
        data = path.read_bytes()
        if path.suffix == ".json":
            data = mask(data.decode()).encode()
        files[str(path.relative_to(folder))] = data
    return files


def estimator_artefacts(est, *names: str) -> dict[str, object]:
    """An estimator's published attributes: the named arrays and its privacy report, masked."""
    artefacts = {name: np.asarray(getattr(est, name)) for name in names if hasattr(est, name)}
    if hasattr(est, "privacy_report_"):
        report = json.dumps(est.privacy_report_, sort_keys=True, default=repr)
        artefacts["privacy_report_"] = mask(report)
    return artefacts


def cli_run(tmp_path: Path, argv: list[str], write: Callable[[Path, object], None]):
    """``run(data)`` for :func:`assert_neighbour_safe` over a command: write the data with
    ``write(folder, data)`` into a fresh folder ``{w}``, call ``privevo ARGV`` in process, and
    publish its exit status and every file it left there (the data file removed)."""
    from privevo.cli import main

    def run(data):
        shutil.rmtree(tmp_path / "w", ignore_errors=True)
        (tmp_path / "w").mkdir()
        write(tmp_path / "w", data)
        code = main([a.replace("{w}", str(tmp_path / "w")) for a in argv])
        (tmp_path / "w" / "data.csv").unlink()
        return {"exit": code, "files": files_in(tmp_path / "w")}

    return run
