"""The neighbour-replay check: every published byte is a function of the releases and public inputs.

Every noisy value privevo publishes is drawn by
:func:`privevo.private.release.release_noise` (docs/privacy.md, "The private
boundary"). The check

1. runs an entry point on D, recording each value ``release_noise`` returns;
2. runs it on a neighbour D' with the same seed, ``release_noise`` patched to
   draw as usual (so the generator advances the same way) but to return D's
   recorded value instead of its own;
3. compares every published artefact of the two runs byte for byte.

With the releases pinned, an artefact that differs was carried by something
other than a release: a leak. Report timestamps and the version are masked,
nothing else. An entry point that makes a different number of releases, or
releases of another shape, on D' is a leak too (the artefact ``releases``).
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import sys
import warnings
from pathlib import Path
from typing import Callable

import numpy as np

import privevo.private.release as _release

MASKED_KEYS = ("timestamp", "privevo_version")


class _Pinned:
    """``release_noise`` that records (first run) or replays (second run) its outputs."""

    def __init__(self, original: Callable, recorded: list | None):
        self.original, self.recorded, self.values, self.shapes = original, recorded, [], []

    def __call__(self, values, *args, **kwargs):
        noisy = self.original(values, *args, **kwargs)
        self.shapes.append(tuple(np.shape(noisy)))
        if self.recorded is not None and len(self.values) < len(self.recorded):
            pinned = self.recorded[len(self.values)]
            if np.shape(pinned) == np.shape(noisy):
                noisy = pinned.copy()
        self.values.append(np.array(noisy, copy=True))
        return noisy


@contextlib.contextmanager
def pinned_releases(recorded: list | None = None):
    """Patch ``release_noise`` in every privevo module that binds it; yield the recorder."""
    original = _release.release_noise
    pinned = _Pinned(original, recorded)
    patched = [
        module
        for name, module in list(sys.modules.items())
        if name.startswith("privevo") and getattr(module, "release_noise", None) is original
    ]
    for module in patched:
        module.release_noise = pinned
    try:
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


def replay(run: Callable[[object], object], data, neighbour) -> tuple[dict, dict]:
    """(artefacts on D, artefacts on D' with D's releases pinned); ``run(data)`` publishes."""
    with pinned_releases() as first:
        on_d = published(lambda: run(data))
    on_d["releases"] = first.shapes
    with pinned_releases(first.values) as second:
        on_d2 = published(lambda: run(neighbour))
    on_d2["releases"] = second.shapes
    return on_d, on_d2


def differences(a: dict, b: dict) -> list[str]:
    """The artefacts that differ, by name (arrays compared by dtype, shape and bytes)."""
    return [key for key in sorted(set(a) | set(b)) if _bytes(a.get(key)) != _bytes(b.get(key))]


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
    """Fail, naming the artefacts, if any published artefact differs between D and D'.

    The run on D must succeed and (unless ``releases=False``) make at least one release.
    """
    on_d, on_d2 = replay(run, data, neighbour)
    assert "error" not in on_d and on_d.get("exit", 0) in (0, None), (
        f"the run on D itself failed: {on_d.get('error', on_d.get('exit'))} {on_d['stderr']}"
    )
    assert on_d["releases"] or not releases, "the run on D made no release: nothing was checked"
    diff = differences(on_d, on_d2)
    assert not diff, "published artefacts differ between neighbours: " + ", ".join(
        f"{key}: {_show(on_d.get(key))} vs {_show(on_d2.get(key))}" for key in diff
    )


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
    for name in ("privacy_report_", "privacy_"):
        if hasattr(est, name):
            artefacts[name] = mask(json.dumps(getattr(est, name), sort_keys=True, default=repr))
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
