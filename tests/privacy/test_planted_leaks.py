"""Mutation testing of the privacy checks: every planted leak must be caught by the generic checks.

Each plant (tests/helpers/planted_leaks.py) is applied to a copy of ``src/privevo``; the copy is
swapped into ``sys.modules`` in this process (no new interpreter), and the generic checks — the
generated-neighbour byte replay and the sensitivity replay over the plant's entry points — must
fail. The catalogue's score (caught / planted) is printed at the end of the run and must be 100 %.
"""

from __future__ import annotations

import contextlib
import importlib
import shutil
import sys
from pathlib import Path

import pytest

from helpers import REPO_ROOT, slow_unless
from helpers.entry_points import ENTRY_POINTS, check
from helpers.neighbour import LARGEST_RATIOS, PLANT_RESULTS
from helpers.planted_leaks import PLANTS, Plant

PACKAGE = REPO_ROOT / "src" / "privevo"
_SWAPPED = ("privevo", "helpers.text_doubles")  # modules bound to the package under test


def planted_copy(plant: Plant, root: Path) -> Path:
    """A copy of the package under ``root`` with the plant's edits applied."""
    target = root / "privevo"
    shutil.copytree(PACKAGE, target, ignore=shutil.ignore_patterns("__pycache__"))
    source_file = target / plant.file
    text = source_file.read_text()
    for old, new in plant.edits:
        assert text.count(old) == 1, f"plant {plant.name!r} no longer applies to {plant.file}"
        text = text.replace(old, new)
    source_file.write_text(text)
    return root


def _bound(name: str) -> bool:
    return any(name == m or name.startswith(m + ".") for m in _SWAPPED)


@contextlib.contextmanager
def package_from(root: Path):
    """Import ``privevo`` from ``root`` for the duration of the block, then restore the original."""
    saved = {name: module for name, module in sys.modules.items() if _bound(name)}
    for name in saved:
        del sys.modules[name]
    sys.path.insert(0, str(root))
    importlib.invalidate_caches()
    try:
        privevo = importlib.import_module("privevo")
        assert Path(privevo.__file__).is_relative_to(root), privevo.__file__
        yield
    finally:
        for name in [name for name in sys.modules if _bound(name)]:
            del sys.modules[name]
        sys.modules.update(saved)
        sys.path.remove(str(root))


def findings(plant: Plant, tmp_path: Path) -> list[str]:
    """What the generic checks find on the plant's entry points (empty: missed)."""
    found = []
    kept = dict(LARGEST_RATIOS)  # the run's ratio table describes the unplanted package only
    with package_from(planted_copy(plant, tmp_path / "package")):
        for entry in plant.entry_points:
            try:
                found += check(ENTRY_POINTS[entry], tmp_path / "run")
            except AssertionError as failure:  # the run on D itself failed: caught too
                found.append(str(failure))
    LARGEST_RATIOS.clear()
    LARGEST_RATIOS.update(kept)
    return found


@pytest.mark.parametrize(
    "plant",
    slow_unless(lambda p: p is PLANTS[0], PLANTS),
    ids=[p.name for p in PLANTS],
)
def test_the_generic_checks_catch_the_plant(tmp_path, plant):
    PLANT_RESULTS[plant.name] = "missed"  # until caught: a plant that fails to apply counts
    found = findings(plant, tmp_path)
    PLANT_RESULTS[plant.name] = f"caught: {found[0][:90]}" if found else "missed"
    assert found, f"planted leak {plant.name!r} was not caught by the generic checks"


def test_the_catalogue_is_large_and_varied():
    assert len(PLANTS) >= 20
    assert len({p.name for p in PLANTS}) == len(PLANTS)
    assert all(entry in ENTRY_POINTS for p in PLANTS for entry in p.entry_points)


def test_the_unplanted_package_passes_the_same_checks(tmp_path):
    """Without a plant the same entry points pass: a catch is the plant's doing."""
    entries = sorted({entry for p in PLANTS for entry in p.entry_points})
    failures = [f for entry in entries for f in check(ENTRY_POINTS[entry], tmp_path / entry)]
    assert not failures, "\n".join(failures)
