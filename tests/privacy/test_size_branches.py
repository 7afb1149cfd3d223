"""Size-dependent branches (tests/helpers/size_branches.py): every module-level numeric constant of
src/privevo is listed as a size branch or as not size-dependent, and every size branch is replayed
on data of t − 1, t and t + 1 rows around its threshold (patched small where it is large) with the
byte and sensitivity replays of tests/helpers/neighbour.py.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import numpy as np
import pytest

from helpers import REPO_ROOT, slow_unless
from helpers.neighbour import neighbour_failures
from helpers.size_branches import (
    NOT_SIZE_BRANCHES,
    SIZE_BRANCHES,
    count_calls,
    crossings,
    entry_names,
    kernel_probe,
    kind_of,
    make_run,
    patch_constant,
    size_neighbours,
    sized,
    value_of,
)

SOURCE = REPO_ROOT / "src" / "privevo"


def _numeric(node: ast.AST) -> bool:
    """Whether an expression holds a number literal (a bool is not one)."""
    return any(
        isinstance(n, ast.Constant)
        and isinstance(n.value, (int, float, complex))
        and not isinstance(n.value, bool)
        for n in ast.walk(node)
    )


def _assigned(body: list[ast.stmt]):
    """(name, line) of every module-level name bound to an expression with a number in it,
    also under a top-level if/try/with."""
    for statement in body:
        if isinstance(statement, (ast.Assign, ast.AnnAssign)) and statement.value is not None:
            if not _numeric(statement.value):
                continue
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            for target in targets:
                for node in ast.walk(target):
                    if isinstance(node, ast.Name):
                        yield node.id, statement.lineno
        for block in ("body", "orelse", "finalbody"):
            if isinstance(statement, (ast.If, ast.Try, ast.With)) and hasattr(statement, block):
                yield from _assigned(getattr(statement, block))
        if isinstance(statement, ast.Try):
            for handler in statement.handlers:
                yield from _assigned(handler.body)


def numeric_constants(root: Path = SOURCE) -> dict[str, str]:
    """``privevo.module.NAME`` → ``file:line`` of every module-level numeric constant."""
    found = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root.parent).with_suffix("").parts
        module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for name, line in _assigned(tree.body):
            found[f"{module}.{name}"] = f"{path.relative_to(root.parent)}:{line}"
    return found


def listed() -> set[str]:
    return {c for b in SIZE_BRANCHES.values() for c in b.constants} | set(NOT_SIZE_BRANCHES)


def test_every_numeric_constant_is_listed():
    """A new module-level numeric constant must be classified: a size branch (with how a test
    crosses it) or not size-dependent (with why) in tests/helpers/size_branches.py."""
    found = numeric_constants()
    missing = sorted(set(found) - listed())
    assert not missing, (
        "module-level numeric constants in neither SIZE_BRANCHES nor NOT_SIZE_BRANCHES of "
        "tests/helpers/size_branches.py: " + ", ".join(f"{c} ({found[c]})" for c in missing)
    )
    stale = sorted(c for c in listed() - set(found) if _module_file(c) is not None)
    assert not stale, f"listed constants that src/privevo no longer has: {stale}"


def _module_file(constant: str) -> Path | None:
    """The source file of a listed constant's module, None if it is not there (a module another
    change adds or removes: its entries are checked once it is there)."""
    parts = constant.split(".")[1:-1]
    for path in (
        SOURCE.joinpath(*parts).with_suffix(".py"),
        SOURCE.joinpath(*parts, "__init__.py"),
    ):
        if path.is_file():
            return path
    return None


def test_the_static_check_can_fail(tmp_path):
    (tmp_path / "privevo").mkdir()
    (tmp_path / "privevo" / "new.py").write_text("import math\nCHUNK = 2**10\nNAME = 'x'\n")
    assert set(numeric_constants(tmp_path / "privevo")) == {"privevo.new.CHUNK"}


def test_the_lists_are_consistent():
    """Each constant imports from privevo and is listed once; each branch names known entry
    points and is replayed unless it says why not."""
    branch_constants = [c for b in SIZE_BRANCHES.values() for c in b.constants]
    assert len(branch_constants) == len(set(branch_constants))
    assert not set(branch_constants) & set(NOT_SIZE_BRANCHES)
    for constant in listed():
        if _module_file(constant) is not None:
            value_of(constant)
    names = entry_names()
    for name, branch in SIZE_BRANCHES.items():
        replayed = {c.entry for c in branch.crossings}
        assert replayed <= set(branch.entry_points), (name, replayed - set(branch.entry_points))
        if branch.crossings:
            assert set(branch.entry_points) <= names, (name, set(branch.entry_points) - names)
        else:
            assert "not replayed" in branch.reach, name
        for crossing in branch.crossings:
            for constant in crossing.patches:
                assert constant in listed() or constant in NOT_SIZE_BRANCHES, constant


# -- the replays ----------------------------------------------------------------------------

CROSSINGS = {f"{name} #{i} {c.entry}": c for name, i, c in crossings()}


def _patch_fixed(monkeypatch, crossing) -> None:
    """The crossing's patches of a fixed value."""
    for constant, value in crossing.patches.items():
        if not callable(value):
            patch_constant(monkeypatch, constant, value)


def _patch_probed(monkeypatch, crossing, run, D) -> None:
    """The crossing's patches computed from the first kernel call on D (its probe)."""
    computed = {c: v for c, v in crossing.patches.items() if callable(v)}
    if computed:
        probe = kernel_probe(crossing.probe, run, D)
        assert probe[0] == len(D), f"the first {crossing.probe} kernel call saw {probe[0]} rows"
        for constant, value in computed.items():
            patch_constant(monkeypatch, constant, value(probe))


def _refused(result) -> bool:
    """Whether a run refused its defaulted δ (a library run's ``refused``; a command's exit)."""
    return isinstance(result, dict) and ("refused" in result or result.get("exit", 0) != 0)


def replay_crossing(crossing, tmp_path, monkeypatch) -> list[str]:
    """The byte and sensitivity replays of D (``crossing.size()`` rows) against n − 1 and n + 1;
    also whether the run on D refused as expected and whether the witness shows a crossing."""
    _patch_fixed(monkeypatch, crossing)
    kind, n = kind_of(crossing.entry), crossing.size()
    D = sized(kind, n)
    run = make_run(crossing, tmp_path)
    _patch_probed(monkeypatch, crossing, run, D)
    calls = count_calls(monkeypatch, crossing.witness) if crossing.witness else [0]
    results, witnessed = {}, {}

    def recorded(data):
        rows = len(data[0] if kind == "users" else data)
        before = calls[0]
        results[rows] = run(data)
        witnessed[rows] = calls[0] - before
        return results[rows]

    failures = neighbour_failures(recorded, D, size_neighbours(kind, D))
    if crossing.refused is not None and _refused(results[n]) != crossing.refused:
        failures.append(f"the run on D {'did not refuse' if crossing.refused else 'refused'}")
    if crossing.witness and witnessed[n - 1] == witnessed[n]:
        failures.append(
            f"{crossing.witness} was called {witnessed[n]} times on n - 1 and on n rows: the "
            "patched threshold is not crossed there"
        )
    return failures


def _cases() -> list:
    """Every crossing; slow unless ``fast``; a known leak as a strict xfail with its reason."""
    cases = []
    for case in slow_unless(lambda case: CROSSINGS[case].fast, sorted(CROSSINGS)):
        leak = CROSSINGS[case.values[0]].leak
        marks = [*case.marks, *([pytest.mark.xfail(strict=True, reason=leak)] if leak else [])]
        cases.append(pytest.param(*case.values, marks=marks))
    return cases


@pytest.mark.parametrize("case", _cases())
def test_size_branch_crossing(tmp_path, monkeypatch, case):
    from privevo.private import lowd

    crossing = CROSSINGS[case]
    fused = crossing.probe == "lowd" or "private.lowd." in (crossing.witness or "")
    if fused and not lowd.uses_lowd(1):
        pytest.skip("the fused kernel is not built (or not used) on this machine")
    failures = replay_crossing(crossing, tmp_path, monkeypatch)
    assert not failures, "\n".join(failures)


def test_a_planted_size_leak_is_caught(tmp_path, monkeypatch):
    """The crossings can fail: a Parquet reader that says on stderr how many blocks it read is
    caught at the (patched) block size."""
    from privevo.private import frames

    original = frames._ParquetFrames.frames

    def counting(self):
        count = 0
        for offset, block in original(self):
            count += 1
            yield offset, block
        print(f"read {count} block(s)", file=sys.stderr)

    monkeypatch.setattr(frames._ParquetFrames, "frames", counting)
    crossing = CROSSINGS["Parquet tables read in blocks #0 tabular parquet"]
    failures = replay_crossing(crossing, tmp_path, monkeypatch)
    assert any("stderr" in f and f.startswith("n - 1 rows") for f in failures), failures
    assert not any(f.startswith("n + 1 rows") for f in failures), failures  # both read in two


def test_the_patched_block_sizes_cross(tmp_path, monkeypatch):
    """At the patched sizes the block layouts really change between t − 1, t and t + 1 rows."""
    pytest.importorskip("pyarrow")
    from privevo.private import NpySource, frame_source

    patch_constant(monkeypatch, "privevo.private.frames.BLOCK_ROWS", 32)
    patch_constant(monkeypatch, "privevo.private.files._DEFAULT_BLOCK_BYTES", 512)
    parquet, npy = [], []
    for n in (32, 33, 34):
        sized("table", n).to_parquet(tmp_path / f"t{n}.parquet", row_group_size=50)
        parquet.append(len(list(frame_source(tmp_path / f"t{n}.parquet").frames())))
        (tmp_path / f"x{n}").mkdir()
        np.save(tmp_path / f"x{n}" / "part-0.npy", sized("points", n))
        npy.append(len(NpySource(tmp_path / f"x{n}").block_refs()))
    assert parquet == [1, 2, 2] and npy == [1, 2, 2]
