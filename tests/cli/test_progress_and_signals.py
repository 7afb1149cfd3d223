"""What a command shows while it runs: a progress bar on a terminal only, a heartbeat line off
one that says where the run is but never for how long, no bars from the audit; SIGTERM stops it
cleanly and a rerun resumes."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time

import pytest

from helpers.cli import SMALL_AUDIT, SYNTH, fill, swap
from privevo.cli import main

#: A duration as a line could print it: "12 s", "3.5 seconds", a clock "00:03".
DURATION = re.compile(r"\d\s*(s|sec|seconds?)\b|\bseconds?\b|\d:\d\d", re.IGNORECASE)


@pytest.mark.slow  # two real processes on a pseudo-terminal
def test_progress_bar_only_on_a_terminal(files, tmp_path):
    import fcntl
    import pty
    import struct
    import termios

    argv = [sys.executable, "-m", "privevo.cli", *fill(swap(SYNTH, iterations=30), files)]
    shown = {}
    for quiet in (False, True):
        leader, follower = pty.openpty()
        winsize = struct.pack("HHHH", 24, 100, 0, 0)  # a 100-column terminal
        fcntl.ioctl(follower, termios.TIOCSWINSZ, winsize)
        done = subprocess.run(
            argv + ["-o", str(tmp_path / f"s{quiet}.csv")] + (["-q"] if quiet else []),
            stderr=follower,
            stdout=subprocess.PIPE,
            timeout=120,
        )
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:
                break
            if not chunk:
                break
            chunks.append(chunk)
        os.close(leader)
        assert done.returncode == 0
        shown[quiet] = b"".join(chunks).decode(errors="replace")
    assert "PE rounds:" in shown[False] and "/30 [" in shown[False]
    assert shown[True] == ""


def test_a_long_run_off_a_terminal_is_never_silent(files, tmp_path, cli, monkeypatch):
    # no progress bar off a terminal, but a line every _HEARTBEAT_SECONDS
    import privevo.cli.publishing
    import privevo.cli.synth

    monkeypatch.setattr(privevo.cli.publishing, "_HEARTBEAT_SECONDS", 0.05)
    real = privevo.cli.synth._synth_model

    def slow_model(*args, **kwargs):  # every round takes at least 20 ms: the run lasts >= 0.4 s
        pe = real(*args, **kwargs)
        pe.callbacks = [lambda record: time.sleep(0.02)]
        return pe

    monkeypatch.setattr(privevo.cli.synth, "_synth_model", slow_model)
    argv = fill(swap(SYNTH, iterations=20), files) + ["-o", tmp_path / "beat.csv"]
    code, _, err = cli(argv)
    assert code == 0
    lines = err.strip().splitlines()
    assert lines and all(line.startswith("privevo synth: running (") for line in lines)
    assert any(line.endswith(" of 20 rounds done)") for line in lines)
    assert not [line for line in lines if DURATION.search(line)]
    code, _, err = cli(argv + ["-q"])
    assert code == 0 and err == ""


@pytest.mark.parametrize(
    "command,total,where,line",
    [
        ("kmeans", None, {}, "privevo kmeans: running"),
        ("demo", None, {}, "privevo demo: running"),
        ("synth", 500, {}, "privevo synth: running (0 of 500 rounds done)"),
        ("synth", 500, {"done": 120}, "privevo synth: running (120 of 500 rounds done)"),
        (
            "synth-text",
            None,
            {"phase": "round 2 of 3: generating 40 texts"},
            "privevo synth-text: running (round 2 of 3: generating 40 texts)",
        ),
    ],
)
def test_every_heartbeat_says_where_a_run_is_never_how_long(
    capsys, monkeypatch, command, total, where, line
):
    from types import SimpleNamespace

    import privevo.cli.publishing as publishing

    monkeypatch.setattr(publishing, "_HEARTBEAT_SECONDS", 0.01)
    with publishing.heartbeat(SimpleNamespace(command=command, quiet=False), total) as beat:
        beat.update(where)
        time.sleep(0.2)
    lines = capsys.readouterr().err.splitlines()
    assert lines and lines[-1] == line
    assert not [shown for shown in lines if DURATION.search(shown)]


def test_audit_no_progress_bars_off_a_terminal(cli):
    code, out, err = cli(SMALL_AUDIT)
    assert code == 0 and err == "" and "claimed ε" in out


@pytest.mark.slow  # three runs, two of them real processes
def test_sigterm_stops_cleanly_and_the_rerun_resumes(files, tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    command = fill(swap(SYNTH, iterations=150), files) + ["-q"]
    argv = [sys.executable, "-m", "privevo.cli", *command]
    resumable = argv + ["--checkpoint", str(out / "c.ckpt"), "-o", str(out / "s.csv")]
    proc = subprocess.Popen(resumable, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not (out / "c.ckpt").exists() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.02)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    if proc.returncode == 0:
        pytest.skip("the run finished before SIGTERM arrived (a very fast machine)")
    assert proc.returncode == 143, err
    assert err.strip().splitlines() == [
        "privevo synth: terminated (SIGTERM); rerun the same command to resume from the checkpoint"
    ]
    assert sorted(p.name for p in out.iterdir()) == ["c.ckpt"]  # no hidden temporary, no output
    done = subprocess.run(resumable, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert main(command + ["-o", str(tmp_path / "whole.csv")]) == 0  # uninterrupted
    assert (out / "s.csv").read_bytes() == (tmp_path / "whole.csv").read_bytes()
