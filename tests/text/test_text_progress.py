"""What synth-text shows while it runs: where it is (the heartbeat off a terminal, a rounds bar
on one), never how long it took (durations grow with the number of private texts:
docs/privacy.md), unless --timings asks for them.

Models are stand-ins that sleep in every call, so that a tiny heartbeat interval catches every
phase (helpers/text_doubles.py).
"""

from __future__ import annotations

import csv
import re
import time

import pytest

from helpers.text_doubles import HashEmbedder, TopicLM, text_pe
from privevo.cli import main, publishing
from privevo.cli import text as cli_text

#: A duration as a line could print it: "12 s", "3.5 seconds", "seconds:", a clock "00:03".
DURATION = re.compile(r"\d\s*(s|sec|seconds?)\b|\bseconds?\b|\d:\d\d", re.IGNORECASE)
PAUSE = 0.15  # seconds every stand-in call sleeps: many heartbeat intervals


class SlowLM(TopicLM):
    def generate(self, prompts, **kw):
        time.sleep(PAUSE)
        return super().generate(prompts, **kw)


class SlowEmbedder(HashEmbedder):
    def embed(self, texts, cache=None):
        time.sleep(PAUSE)
        return super().embed(texts, cache)


@pytest.fixture
def slow_models(monkeypatch):
    def load(args):
        time.sleep(PAUSE)
        return SlowLM(), SlowEmbedder(8)

    monkeypatch.setattr(cli_text, "_models", load)
    monkeypatch.setattr(publishing, "_HEARTBEAT_SECONDS", 0.01)


def _reviews(path, n: int):
    with open(path, "w", newline="") as handle:
        w = csv.writer(handle)
        w.writerow(["review"])
        w.writerows([f"review number {i} of some snack, fine"] for i in range(n))
    return path


ARGV = ["--column", "review", "--m", "4", "--epsilon", "1", "--iterations", "2"]
ARGV += ["--selector", "rank", "--seed", "1"]


@pytest.mark.parametrize("n", [20, 2000])
def test_no_duration_on_stderr_unless_timings_asks(tmp_path, capsys, slow_models, n):
    data = _reviews(tmp_path / "r.csv", n)
    argv = ["synth-text", str(data), *ARGV, "-o", str(tmp_path / "s.csv")]
    assert main(argv) == 0
    lines = capsys.readouterr().err.splitlines()
    assert any(line.startswith("privevo synth-text: running (") for line in lines)
    assert not [line for line in lines if DURATION.search(line)]
    assert main([*argv, "--timings"]) == 0
    timed = [line for line in capsys.readouterr().err.splitlines() if DURATION.search(line)]
    assert len(timed) == 1 and timed[0].startswith("seconds: S_0 generation ")


def test_a_piped_run_names_each_phase_in_its_heartbeat(tmp_path, capsys, slow_models):
    data = _reviews(tmp_path / "r.csv", 30)
    assert main(["synth-text", str(data), *ARGV, "-o", str(tmp_path / "s.csv")]) == 0
    beats = {
        line.removeprefix("privevo synth-text: running (").removesuffix(")")
        for line in capsys.readouterr().err.splitlines()
        if line.startswith("privevo synth-text: running")
    }
    for phase in (
        "loading the models",
        "embedding the private texts",  # no count: the number of private texts is private
        "S_0: generating 8 texts",
        "S_0: embedding 8 texts",
        "round 1 of 2: generating 4 texts",
        "round 1 of 2: embedding 4 texts",
    ):
        assert phase in beats, sorted(beats)
    assert beats <= {
        "loading the models",
        "embedding the private texts",
        "S_0: generating 8 texts",
        "S_0: embedding 8 texts",
        *(f"round {t} of 2: counting the private votes" for t in (1, 2)),
        "round 1 of 2: generating 4 texts",
        "round 1 of 2: embedding 4 texts",
    }, sorted(beats)


def test_the_progress_bar_shows_phases_and_rounds_but_no_time(capsys):
    phases = []
    model = text_pe(progress=True)
    model.on_phase = phases.append
    model.fit([f"private text {i}" for i in range(50)])
    shown = capsys.readouterr().err
    assert "/3 rounds" in shown and "round 3 of 3: counting the private votes" in shown
    assert not DURATION.search(shown), shown
    assert phases[:3] == ["embedding the private texts", "S_0: generating 12 texts",
                          "S_0: embedding 12 texts"]  # fmt: skip
    assert phases[-1] == "round 3 of 3: counting the private votes"
    assert not any(re.search(r"\b50\b", phase) for phase in phases)  # never the private count
