"""Texts per second through a real OpenAI-compatible server against the local engine.

Starts ``python -m privevo.text.serving`` (``transformers serve`` with SmolLM2, continuous
batching; or ``--no-batching`` for its one-request-at-a-time mode), sends the same public
S_0 prompts ("Write a short food review about {topic}. ...", 48 new tokens) through
:class:`~privevo.text.OpenAICompatibleLM` with 1, 8 and 32 requests in flight, and generates
them with the local default engine (CTranslate2 int8) in the same process, alternating, so both
see the same load. Wall seconds and CPU seconds (this process and the server's processes)::

    python benchmarks/text_server.py --n 32
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import numpy as np

KIND = "food review"
MAX_TOKENS = 48


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _tree_cpu(pid: int) -> float:
    """CPU seconds of a process and its children (Linux /proc)."""
    tick = os.sysconf("SC_CLK_TCK")
    total, todo = 0.0, [pid]
    while todo:
        p = todo.pop()
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
            for task in Path(f"/proc/{p}/task").iterdir():
                todo += [int(k) for k in (task / "children").read_text().split()]
        except OSError:
            continue
    return total


def start_server(batching: bool) -> tuple[subprocess.Popen, str, float]:
    """The server process, its API root and its start-up seconds (to /health answering)."""
    port = _free_port()
    cmd = [sys.executable, "-m", "privevo.text.serving", "--port", str(port)]
    if not batching:
        cmd.append("--no-batching")
    tic = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while True:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=5)
            return proc, f"http://127.0.0.1:{port}/v1", time.monotonic() - tic
        except OSError:
            if proc.poll() is not None:
                raise SystemExit("the server exited; is privevo[serve] installed?") from None
            time.sleep(0.5)


def prompts(n: int) -> list[str]:
    from privevo.text.apis import FOOD_TOPICS, RANDOM_PROMPT

    topics = np.random.default_rng(0).choice(FOOD_TOPICS, n)
    return [RANDOM_PROMPT.format(kind=KIND, topic=t) for t in topics]


def timed(generator, texts: list[str], server_pid: int | None) -> tuple[float, float]:
    """Wall and CPU seconds (this process plus the server's) of one generate call."""
    cpu0 = time.process_time() + (_tree_cpu(server_pid) if server_pid else 0.0)
    tic = time.monotonic()
    out = generator.generate(texts, temperature=1.0, max_new_tokens=MAX_TOKENS, seed=1)
    wall = time.monotonic() - tic
    cpu = time.process_time() + (_tree_cpu(server_pid) if server_pid else 0.0) - cpu0
    assert len(out) == len(texts) and all(isinstance(t, str) for t in out)
    return wall, cpu


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=32, help="prompts per measurement")
    p.add_argument("--workers", default="1,8,32", help="requests in flight, comma-separated")
    p.add_argument("--no-batching", action="store_true", help="server without continuous batching")
    args = p.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from privevo.text.engines import smollm2
    from privevo.text.llm import OpenAICompatibleLM
    from privevo.text.serving import SERVED_NAME

    proc, base, started = start_server(not args.no_batching)
    print(f"server up in {started:.0f} s ({'no ' * args.no_batching}continuous batching)")
    local = smollm2(quiet=True)
    texts = prompts(args.n)
    timed(local, texts[:2], None)  # warm-up
    print(f"{'backend':<34} {'texts':>5} {'wall s':>7} {'texts/s':>8} {'CPU s/text':>10}")
    try:
        for workers in [int(w) for w in args.workers.split(",")]:
            remote = OpenAICompatibleLM(base, SERVED_NAME, max_workers=workers, timeout=600)
            for name, gen, pid in (
                (f"server, {workers} in flight", remote, proc.pid),
                ("local ctranslate2 int8", local, None),
            ):
                wall, cpu = timed(gen, texts, pid)
                print(
                    f"{name:<34} {len(texts):>5} {wall:>7.1f} {len(texts) / wall:>8.2f} "
                    f"{cpu / len(texts):>10.2f}"
                )
    finally:
        proc.terminate()
        proc.wait(30)


if __name__ == "__main__":
    main()
