"""Text PE options (lookahead, k-neighbour votes, threshold, keep_selected) and checkpoints.

These tests use a deterministic stand-in generator and embedder (no models,
``helpers.text_doubles``), so they check the loop's bookkeeping and the privacy arithmetic
quickly; the real models are exercised in ``test_text_pe_runs.py`` and
``test_local_engines.py``.
"""

from __future__ import annotations

import math
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from helpers.text_doubles import PRIVATE, HashEmbedder, WordLM, text_pe
from privevo.selection import Rank, SelectionContext
from privevo.text import Thresholded

# -- k-neighbour votes (the engine's n_neighbors) -------------------------------------------


def test_n_neighbors_keeps_epsilon_and_gives_each_text_k_votes_of_one_over_sqrt_k():
    one = text_pe(epsilon=math.inf).fit(PRIVATE)
    four = text_pe(n_neighbors=4, epsilon=math.inf).fit(PRIVATE)
    assert one.history_[0].noisy_counts.sum() == pytest.approx(len(PRIVATE))
    assert four.history_[0].noisy_counts.sum() == pytest.approx(
        len(PRIVATE) * 4 / 2.0
    )  # k / √k each
    assert four.privacy_report_["public_parameters"]["n_neighbors"] == 4
    private = text_pe(n_neighbors=4).fit(PRIVATE)
    assert private.privacy_report_["epsilon"] == pytest.approx(2.0, rel=1e-6)
    assert private.engine_.sigma_ == pytest.approx(text_pe().fit(PRIVATE).engine_.sigma_)


# -- lookahead, threshold, keep_selected ---------------------------------------------------


def test_lookahead_candidates_vote_with_the_mean_of_their_variations():
    model = text_pe(lookahead=3).fit(PRIVATE)
    pop, emb = model.population_, HashEmbedder()
    rows = model.history_[-1].candidates
    for i, ahead in enumerate(pop.ahead):
        if ahead:  # rows whose lookahead variations were not consumed as children
            assert len(ahead) == 3
            assert np.allclose(rows[i], emb.embed(ahead).mean(axis=0))
    assert any(pop.ahead)
    # the synthetic embeddings are the texts' own, not the lookahead means
    assert np.allclose(model.synthetic_, emb.embed(model.synthetic_texts_))


def test_lookahead_children_are_the_parents_lookahead_variations():
    model = text_pe(lookahead=2, iterations=2).fit(PRIVATE)
    first = model.history_[0]
    pop = model.population_
    m = len(first.selected)
    children = pop.texts[m:]
    assert len(children) == m * 2  # per_point = 2 <= lookahead: no new generation for them
    assert model.round_seconds_[0]["generation"] >= 0.0


def test_threshold_subtracts_and_clips_before_selection():
    counts = np.array([5.0, 1.0, -2.0, 3.0])
    seen = {}

    class Spy(Rank):
        def select(self, candidates, noisy_counts, context):
            seen["counts"] = noisy_counts.copy()
            return super().select(candidates, noisy_counts, context)

    ctx = SelectionContext(1.0, 0, 1, 2, None, np.random.default_rng(0))
    sel = Thresholded(Spy(), 2.0).select(np.eye(4), counts, ctx)
    assert seen["counts"].tolist() == [3.0, 0.0, 0.0, 1.0]
    assert sel.indices.tolist() == [0, 3] and sel.info["histogram_threshold"] == 2.0
    with pytest.raises(ValueError, match="threshold must be"):
        Thresholded(Rank(), -1).select(np.eye(4), counts, ctx)


def test_keep_selected_false_replaces_parents_by_variations_and_keeps_the_size():
    kept = text_pe().fit(PRIVATE)
    fresh = text_pe(keep_selected=False).fit(PRIVATE)
    h_kept, h_fresh = kept.history_, fresh.history_
    assert len(h_kept[1].candidates) == len(h_fresh[1].candidates) == 12  # m·(1 + per_point)
    parents = h_kept[0].candidates[h_kept[0].selected]
    assert np.array_equal(h_kept[1].candidates[:4], parents)
    parents = h_fresh[0].candidates[h_fresh[0].selected]
    assert not any(np.allclose(p, c) for p in parents for c in h_fresh[1].candidates)
    assert fresh.privacy_report_["epsilon"] == pytest.approx(2.0, rel=1e-6)


@pytest.mark.parametrize(
    "option, message",
    [
        ({"n_neighbors": 0}, "'n_neighbors' parameter of TextPrivateEvolution must be an int"),
        ({"lookahead": -1}, "'lookahead' parameter of TextPrivateEvolution must be an int"),
        ({"threshold": -1.0}, r"'threshold' parameter .* must be a float in the range \[0.0"),
        ({"gape_R": 0.0}, r"'gape_R' parameter .* must be a float in the range \(0.0, inf\)"),
        ({"selector": "weighted_kmeans"}, "'selector' parameter .* among {'gape', 'gape_agg'"),
        ({"keep_selected": "no"}, "'keep_selected' parameter .* must be a bool"),
        ({"epsilon": 0.0}, "'epsilon' parameter of TextPrivateEvolution must be"),
    ],
)
def test_bad_options_get_one_line_errors_before_any_text_is_read(option, message):
    class Unreadable(list):
        def __iter__(self):
            raise AssertionError("a private text was read before the options were checked")

    with pytest.raises(ValueError, match=message) as err:
        text_pe(**option).fit(Unreadable(PRIVATE))
    assert "\n" not in str(err.value)


# -- checkpoints: SIGKILL mid-round, resume, same texts and ε -------------------------------


_CHILD = textwrap.dedent("""
    import sys
    sys.path.insert(0, {tests!r})
    from helpers.text_doubles import PRIVATE, WordLM, text_pe
    text_pe(lm=WordLM(delay=1.5), iterations=4, checkpoint={path!r}).fit(PRIVATE)
""")


@pytest.mark.slow  # a real process, killed (in-process resume: the cut-off release test below)
def test_text_run_killed_mid_round_resumes_with_the_same_texts_and_epsilon(tmp_path):
    path = str(tmp_path / "run.ckpt")
    want = text_pe(iterations=4).fit(PRIVATE)
    script = _CHILD.format(tests=os.path.dirname(os.path.dirname(__file__)), path=path)
    child = subprocess.Popen([sys.executable, "-c", script], stderr=subprocess.PIPE)
    deadline = time.time() + 60
    from privevo.checkpoint import load_checkpoint

    while time.time() < deadline:  # wait until round 2 is logged, then kill during round 3
        time.sleep(0.2)
        if os.path.exists(path) and child.poll() is None:
            try:
                keys = [r.key for r in load_checkpoint(path)[1]]
            except Exception:  # noqa: BLE001 - a record being written
                continue
            if "round/1" in keys:
                break
    assert child.poll() is None, child.stderr.read().decode()[-2000:]
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    resumed = text_pe(iterations=4, checkpoint=path).fit(PRIVATE)
    assert 2 <= resumed.engine_.resumed_from_ < 4
    assert resumed.synthetic_texts_ == want.synthetic_texts_
    assert resumed.privacy_report_["epsilon"] == want.privacy_report_["epsilon"]
    assert len(resumed.engine_.releases_) == 4
    for a, b in zip(resumed.history_, want.history_):
        assert np.array_equal(a.noisy_counts, b.noisy_counts)


def test_round_seconds_split_every_phase_and_the_cli_prints_them():
    from privevo.cli.synth_text import timing_line

    model = text_pe().fit(PRIVATE)
    rows = model.round_seconds_
    assert [r["round"] for r in rows] == [0, 1, 2]
    assert all(
        set(r) == {"round", "histogram", "selection", "generation", "embedding"} for r in rows
    )
    assert rows[-1]["generation"] == 0.0  # no variation after the last round
    line = timing_line(rows, model.population_.initial_seconds)
    assert line.startswith("seconds: S_0 generation") and "per round gen/emb/hist/sel: 1: " in line


def test_gape_fill_completes_the_selection_to_m():
    few = text_pe(selector="gape", gape_R=0.5, epsilon=0.2, iterations=2).fit(PRIVATE)
    full = text_pe(selector="gape", gape_R=0.5, epsilon=0.2, iterations=2, fill=True).fit(PRIVATE)
    assert len(full.synthetic_texts_) == 4 and len(few.synthetic_texts_) <= 4
    assert full.privacy_report_["epsilon"] == few.privacy_report_["epsilon"]


class _CutOffLM(WordLM):
    """WordLM that records every prompt list and raises on call ``fail_on`` (an endpoint error)."""

    def __init__(self, fail_on: int | None = None):
        super().__init__()
        self.fail_on, self.seen = fail_on, []

    def generate(self, prompts, **kw):
        self.seen.append(list(prompts))
        if self.fail_on is not None and len(self.seen) == self.fail_on:
            raise ConnectionError("endpoint went away")
        return super().generate(prompts, **kw)


def test_a_release_cut_off_during_generation_is_replayed_from_the_log_not_drawn_again(tmp_path):
    path = str(tmp_path / "run.ckpt")
    kw = dict(noise="discrete_gaussian_secure", epsilon=0.5, iterations=3, checkpoint=path)
    cut = _CutOffLM(fail_on=2)  # call 1: S_0; call 2: round 0's rewrites of its selection
    with pytest.raises(ConnectionError):
        text_pe(lm=cut, **kw).fit(PRIVATE)
    from privevo.checkpoint import load_checkpoint

    keys = [r.key for r in load_checkpoint(path)[1]]
    assert "release/0" in keys and "round/0" not in keys  # logged before any prompt was built
    again = _CutOffLM()
    resumed = text_pe(lm=again, **kw).fit(PRIVATE)
    assert again.seen[0] == cut.seen[1]  # the same selection, not a fresh draw of round 0
    logged = {r.key: r for r in load_checkpoint(path)[1]}
    assert np.array_equal(resumed.history_[0].noisy_counts, logged["release/0"].arrays["0"])
    assert len(resumed.engine_.releases_) == 3 and resumed.engine_.resumed_from_ == 0
