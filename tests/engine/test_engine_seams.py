"""The engine's public seams (docs/architecture.md, "Where to plug in"): the hooks see each
release before anything uses it, keep_selected and name act, and no module outside the engine
subclasses it, overrides or calls an underscored member of it, or replays a log itself."""

import ast
from pathlib import Path

import numpy as np
import pytest

import privevo
from privevo import PrivateEvolution
from privevo.checkpoint import load_checkpoint
from privevo.selection import Rank
from privevo.variation import GaussianVariation

SRC = Path(privevo.__file__).parent
X = np.random.default_rng(0).normal(size=(300, 2))


def pe(**kw):
    params = dict(
        random_api=np.array([[0.0, -2.0], [0.0, 0.0], [0.0, 2.0]]),
        variation_api=GaussianVariation(0.1, 2),
        selector=Rank(),
        n_synthetic=3,
        iterations=3,
        epsilon=2.0,
        delta=1e-5,
        random_state=0,
    )
    return PrivateEvolution(**{**params, **kw})


class _Recording(Rank):
    """Rank that notes when it selects, so the order of hooks and selection is visible."""

    def __init__(self, events):
        self.events = events

    def select(self, candidates, noisy_counts, context):
        self.events.append(("select", context.iteration))
        return super().select(candidates, noisy_counts, context)


def test_hooks_see_each_round_and_each_release_before_the_selection_uses_it():
    events = []
    model = pe(
        selector=_Recording(events),
        on_round_start=[lambda t, total: events.append(("start", t, total))],
        on_release=[lambda e: events.append(("release", e.iteration, e.release, e.replayed))],
    ).fit(X)
    assert [e[0] for e in events] == ["start", "release", "select"] * 3
    assert [e[1] for e in events if e[0] == "start"] == [0, 1, 2]
    released = [e[2] for e in events if e[0] == "release"]
    assert released == model.releases_ and not any(e[3] for e in events if e[0] == "release")


def test_keep_selected_false_makes_the_next_population_the_variations_alone():
    kept, alone = pe(iterations=2).fit(X), pe(iterations=2, keep_selected=False).fit(X)
    variations = 3 * 2  # m parents, per_point 2
    assert len(kept.history_[1].candidates) == 3 + variations
    assert len(alone.history_[1].candidates) == variations


def test_the_name_is_the_one_every_message_uses():
    with pytest.raises(ValueError, match=r"^The 'n_synthetic' parameter of MyModality"):
        pe(n_synthetic=0, name="MyModality").fit(X)


def test_a_release_logged_before_a_crash_is_replayed_on_resume_not_drawn_again(tmp_path):
    path = tmp_path / "run.ckpt"

    _CrashesInRound2.CRASH[:] = [True]
    with pytest.raises(KeyboardInterrupt):
        pe(selector=_CrashesInRound2(), checkpoint=path).fit(X)
    logged = {r.key: r for r in load_checkpoint(path)[1]}
    assert "release/1" in logged and "round/1" not in logged
    seen = []
    _CrashesInRound2.CRASH[:] = [False]
    resumed = pe(
        selector=_CrashesInRound2(),
        checkpoint=path,
        on_release=[seen.append],
    ).fit(X)
    assert [e.replayed for e in seen] == [True, False] and resumed.resumed_from_ == 1
    assert np.array_equal(resumed.history_[1].noisy_counts, logged["release/1"].arrays["0"])


class _CrashesInRound2(Rank):
    """Rank that stops the run in round 2, after its release, while ``CRASH`` holds (a plain
    class attribute: the run's fingerprint is the same with and without it)."""

    CRASH = [True]

    def select(self, candidates, noisy_counts, context):
        if context.iteration == 1 and self.CRASH[0]:
            raise KeyboardInterrupt
        return super().select(candidates, noisy_counts, context)


def _private_engine_members() -> set[str]:
    tree = ast.parse((SRC / "evolution.py").read_text())
    engine = next(
        n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "PrivateEvolution"
    )
    names = {n.name for n in engine.body if isinstance(n, ast.FunctionDef)}
    names |= {
        t.attr
        for n in ast.walk(engine)
        if isinstance(n, ast.Assign)
        for t in n.targets
        if isinstance(t, ast.Attribute)
    }
    return {name for name in names if name.startswith("_") and not name.startswith("__")}


def engine_seam_violations(root: Path = SRC) -> list[str]:
    """Outside evolution.py: a class deriving from PrivateEvolution, or an underscored engine
    member reached on anything but ``self``."""
    members, found = _private_engine_members(), []
    for path in sorted(root.rglob("*.py")):
        if path == root / "evolution.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef) and any(
                getattr(b, "id", getattr(b, "attr", None)) == "PrivateEvolution" for b in node.bases
            ):
                found.append(f"{path.relative_to(root)}: {node.name} subclasses PrivateEvolution")
            if (
                isinstance(node, ast.Attribute)
                and node.attr in members
                and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
            ):
                found.append(f"{path.relative_to(root)}:{node.lineno} reaches .{node.attr}")
    return found


def test_no_module_outside_the_engine_subclasses_it_or_reaches_an_underscored_member():
    assert engine_seam_violations() == []


def test_the_seam_check_catches_a_planted_subclass_and_call(tmp_path):
    (tmp_path / "evolution.py").write_text((SRC / "evolution.py").read_text())
    (tmp_path / "text.py").write_text(
        "from .evolution import PrivateEvolution\n\n"
        "class _Engine(PrivateEvolution):\n    pass\n\n"
        "def fit(engine):\n    engine._validate_release = 1\n    return engine._histogram\n"
    )
    found = engine_seam_violations(tmp_path)
    assert any("subclasses" in f for f in found) and any("._histogram" in f for f in found)


def test_one_replay_or_draw_every_run_calls():
    """Restoring a generator from a log record happens in privevo.checkpoint and in the engine's
    resume of whole rounds only; every step is replayed through checkpoint.replay_or_draw."""
    users = sorted(
        str(path.relative_to(SRC))
        for path in SRC.rglob("*.py")
        if "set_rng_state(" in path.read_text() or "Record(" in path.read_text()
    )
    assert users == ["checkpoint.py", "evolution.py", "rounds.py"]
