"""What ``privevo synth-text`` and ``privevo intrinsic-dim`` share: the language-model and
embedder options and checks, the public examples file, the models (loaded once per process),
and the texts writer.

The commands themselves are :mod:`.synth_text` and :mod:`.intrinsic_dim`. Models are
loaded once per process (:func:`load_generator`, :func:`load_embedder`), so several
commands in one process share them; the commands load them through this module's
``_models``, the one seam tests replace.
"""

from __future__ import annotations

import csv
import functools
import json
import math
import os
import sys
from pathlib import Path

__all__ = [
    "add_llm_options",
    "write_texts",
    "load_generator",
    "load_embedder",
]

#: the bundled generators (privevo.text.engines.MODELS; named here so the parser imports no
#: numpy), the default first
BUNDLED_GENERATORS = ("gemma3-270m", "smollm2-135m")
#: --threads at most this many per core: each thread of the default engine is a worker that
#: loads its own copy of the model, so more threads than cores only costs memory.
THREADS_PER_CORE = 4
#: --max-tokens at most: above the output limit of any model these commands drive.
MAX_TOKENS_MAX = 100_000


API_WORKERS_MAX = 256  # concurrent chat requests to --api-base (threads of this process)
_API_MODEL_MISSING = "--api-base needs --api-model (the model name the server expects)"


def add_llm_options(p) -> None:
    """The model options of both text commands (engine, model, endpoint, embedder, sampling)."""
    g = p.add_argument_group("models (default: Gemma 3 270M and all-MiniLM-L6-v2, offline)")
    bundled = g.add_mutually_exclusive_group()
    bundled.add_argument(
        "--generator",
        choices=list(BUNDLED_GENERATORS),
        help=f"bundled offline generator (default {BUNDLED_GENERATORS[0]}, a base model given "
        "completion prompts with public examples; smollm2-135m, an instruction-tuned chat model)",
    )
    bundled.add_argument(
        "--fast",
        dest="generator",
        action="store_const",
        const="smollm2-135m",
        help="the smaller SmolLM2-135M-Instruct: about 1.7x the texts per CPU-second, fewer of "
        "them publishable (same as --generator smollm2-135m)",
    )
    g.add_argument(
        "--engine",
        choices=["ctranslate2", "llama_cpp", "transformers"],
        help="engine for the bundled generator (default ctranslate2 int8, the fastest measured)",
    )
    g.add_argument(
        "--model",
        help="local causal LM: a transformers folder or hub name (default: bundled SmolLM2)",
    )
    g.add_argument("--gguf-file", help="GGUF weights file inside --model's folder")
    g.add_argument(
        "--api-base",
        help="OpenAI-compatible endpoint instead of a local model, e.g. http://127.0.0.1:8000/v1",
    )
    g.add_argument("--api-model", help="model name for --api-base")
    g.add_argument(
        "--api",
        choices=["chat", "completions"],
        default="chat",
        help="endpoint kind for --api-base (default chat)",
    )
    g.add_argument(
        "--embedder", help="sentence-transformers model folder (default: bundled all-MiniLM-L6-v2)"
    )
    g.add_argument(
        "--batch-size",
        type=int,
        help="prompts per generation batch (default: the engine's, 64); with --api-base --api "
        f"chat, requests in flight at once (default 4, at most {API_WORKERS_MAX})",
    )
    g.add_argument(
        "--threads",
        type=int,
        help=f"CPU threads of the local model (default: all cores; at most {THREADS_PER_CORE} "
        "per core)",
    )
    g.add_argument(
        "--kind", default="text", help='what one text is, used in the prompts (e.g. "food review")'
    )
    g.add_argument(
        "--max-tokens",
        type=int,
        default=64,
        help=f"length cap of a generated text in tokens (default 64, at most {MAX_TOKENS_MAX})",
    )
    g.add_argument(
        "--mask-fraction",
        type=float,
        default=0.5,
        help="share of words rewritten: blanked for a chat model (0 = paraphrase), the text's "
        "last share for a base model (default 0.5)",
    )


def add_text_io(p) -> None:
    """DATA, --column, --seed, --json and -q of both text commands."""
    p.add_argument(
        "data",
        metavar="DATA",
        help="texts: .csv/.tsv (with --column), .jsonl (objects with --column) or .txt (one per "
        "line)",
    )
    p.add_argument(
        "--column", default="text", help="column / key holding the text (default 'text')"
    )
    p.add_argument("--seed", type=int, help="random seed (default: fresh randomness)")
    p.add_argument("--json", action="store_true", help="machine-readable output on stdout")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bars or messages")


# -- checks (before any file is read or model loaded) -----------------------------------


def check_llm_args(args) -> None:
    """The model options' rules: endpoint and model pairs, --max-tokens, --batch-size,
    --threads, --mask-fraction."""
    from .._validation import check_positive_int

    if args.api_base is not None and not args.api_model:
        raise ValueError(_API_MODEL_MISSING)
    if args.api_base is None and args.api_model:
        raise ValueError("--api-model needs --api-base (the endpoint serving it)")
    if args.generator and (args.model or args.api_base):
        raise ValueError(
            "--generator and --fast pick a bundled model; drop them when --model or --api-base "
            "gives the generator"
        )
    if args.gguf_file and not args.model:
        raise ValueError("--gguf-file needs --model (the folder holding the GGUF file)")
    if check_positive_int(args.max_tokens, "--max-tokens") > MAX_TOKENS_MAX:
        raise ValueError(
            f"--max-tokens must be at most {MAX_TOKENS_MAX} (tokens of one generated text), got "
            f"{args.max_tokens}; pass a smaller one"
        )
    if args.batch_size is not None:
        check_positive_int(args.batch_size, "--batch-size")
    if args.threads is not None:
        check_threads(args.threads)
    if not 0 <= args.mask_fraction < 1:
        raise ValueError(f"--mask-fraction must be in [0, 1), got {args.mask_fraction}")


def check_threads(threads: int) -> int:
    """--threads from 1 to THREADS_PER_CORE × this machine's cores."""
    from .._validation import check_positive_int

    threads = check_positive_int(threads, "--threads")
    cores = os.cpu_count() or 1
    if threads > THREADS_PER_CORE * cores:
        raise ValueError(
            f"--threads must be at most {THREADS_PER_CORE * cores} ({THREADS_PER_CORE} per core "
            f"of this machine's {cores}), got {threads}; omit --threads to use every core"
        )
    return threads


def check_temperature(value: float, flag: str) -> float:
    if not (value >= 0 and math.isfinite(value)):
        raise ValueError(f"{flag} must be a finite number >= 0 (0 = greedy), got {value}")
    return value


# -- files ------------------------------------------------------------------------------


def write_texts(
    path,
    texts,
    column: str = "text",
    suffix: str | None = None,
    labels=None,
    label_column: str | None = None,
) -> None:
    """One text per row: CSV/TSV with a header, JSONL objects, or .txt lines (whitespace collapsed).

    The format follows ``suffix`` (default: the path's own suffix). ``labels``
    (with ``label_column``) add a label column / key (not in .txt).
    """
    path = Path(path)
    suffix = (suffix or path.suffix).lower()
    labelled = labels is not None and label_column is not None
    with open(path, "w", newline="", encoding="utf-8") as handle:
        if suffix == ".jsonl":
            handle.writelines(
                json.dumps(
                    {column: t, **({label_column: lab} if labelled else {})}, ensure_ascii=False
                )
                + "\n"
                for t, lab in zip(texts, labels if labelled else [None] * len(texts))
            )
        elif suffix == ".txt":
            handle.writelines(" ".join(t.split()) + "\n" for t in texts)
        else:
            writer = csv.writer(handle, delimiter="\t" if suffix == ".tsv" else ",")
            if labelled:
                writer.writerow([column, label_column])
                writer.writerows([t, lab] for t, lab in zip(texts, labels))
            else:
                writer.writerow([column])
                writer.writerows([t] for t in texts)


# -- models (loaded once per process) ---------------------------------------------------


def load_generator(
    model: str | None = None,
    gguf_file: str | None = None,
    api_base: str | None = None,
    api_model: str | None = None,
    api: str = "chat",
    batch_size: int | None = None,
    engine: str | None = None,
    threads: int | None = None,
    quiet: bool = False,
    bundled: str = BUNDLED_GENERATORS[0],
):
    """The generator for these settings, loaded once per process (``quiet``: no conversion
    line; ``bundled``: the offline generator when neither ``model`` nor ``api_base`` is
    given)."""
    return _load_generator(
        model, gguf_file, api_base, api_model, api, batch_size, engine, threads, quiet, bundled
    )


@functools.lru_cache(maxsize=4)
def _load_generator(
    model,
    gguf_file,
    api_base,
    api_model,
    api,
    batch_size,
    engine,
    threads,
    quiet=False,
    bundled=BUNDLED_GENERATORS[0],
):
    from ..text.engines import local_generator
    from ..text.llm import OpenAICompatibleLM, TransformersLM

    batch = {} if batch_size is None else {"batch_size": batch_size}
    if api_base is not None:
        if not api_model:
            raise ValueError(_API_MODEL_MISSING)
        workers = {} if batch_size is None else {"max_workers": min(batch_size, API_WORKERS_MAX)}
        return OpenAICompatibleLM(api_base, api_model, api=api, **batch, **workers)
    if model is None:
        kw = {} if engine == "llama_cpp" else batch  # llama.cpp runs one prompt at a time
        if threads is not None and engine != "transformers":  # torch threads are set globally
            kw["threads"] = threads
        return local_generator(bundled, engine, quiet=quiet, **kw)
    return TransformersLM(model, gguf_file=gguf_file, **batch)


def load_embedder(path: str | None = None):
    """The embedder at ``path`` (default all-MiniLM-L6-v2), loaded once per process."""
    return _load_embedder(path)


@functools.lru_cache(maxsize=2)
def _load_embedder(path):
    from ..text.embed import SentenceEmbedder

    return SentenceEmbedder(path)


def _models(args):
    """(generator, embedder) for the command's flags; the one place a text command loads
    models."""
    if args.threads is not None and args.api_base is None:
        import torch

        torch.set_num_threads(check_threads(args.threads))
    if args.quiet or getattr(args, "json", False) or not sys.stderr.isatty():
        _no_loading_bars()
    return (
        load_generator(
            args.model,
            args.gguf_file,
            args.api_base,
            args.api_model,
            args.api,
            args.batch_size,
            args.engine,
            args.threads,
            bool(args.quiet or getattr(args, "json", False)),
            args.generator or BUNDLED_GENERATORS[0],
        ),
        load_embedder(args.embedder),
    )


def load_models(args):
    """The command's models through :func:`_models`, looked up when called (tests replace it)."""
    return _models(args)


def _no_loading_bars() -> None:
    """No "Loading weights" bars from transformers / huggingface_hub (-q, --json, or no
    terminal)."""
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    try:
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
    except ImportError:
        pass
    try:
        from huggingface_hub.utils import disable_progress_bars

        disable_progress_bars()
    except ImportError:
        pass


def read_examples(
    path: str | None, data: str | None = None, labels: list[str] | None = None
) -> list[str] | dict[str, list[str]] | None:
    """--examples: public example texts, None without the flag. A text file gives one example a
    line; a .csv file its ``text`` column, and with a ``label`` column each public label its own
    examples (``{label: texts}``; they sit under the label's heading in the prompts). The
    private DATA file itself is refused: its texts would reach every prompt."""
    if path is None:
        return None
    if data is not None and _same_file(path, data):
        raise ValueError(
            f"--examples {path} is the private data file; give public examples written or "
            "collected apart from the data (one per line)"
        )
    try:
        with open(path, encoding="utf-8", newline="") as handle:
            if path.lower().endswith(".csv"):
                return _csv_examples(path, csv.DictReader(handle), labels)
            lines = [" ".join(line.split()) for line in handle]
    except (OSError, UnicodeDecodeError, csv.Error) as err:
        raise ValueError(
            f"--examples {path}: cannot read it ({type(err).__name__}); give a UTF-8 text file "
            "with one public example per line"
        ) from None
    examples = [line for line in lines if line]
    if not examples:
        raise ValueError(f"--examples {path} holds no text; give one public example per line")
    return examples


def _csv_examples(
    path: str, reader: csv.DictReader, labels: list[str] | None
) -> list[str] | dict[str, list[str]]:
    """--examples' CSV rows: the ``text`` column, per ``label`` if the file has one."""
    fields = reader.fieldnames or []
    if "text" not in fields:
        raise ValueError(
            f"--examples {path}: a .csv file needs a 'text' column (and may have 'label')"
        )
    rows = list(reader)
    pairs = [(" ".join((r.get("text") or "").split()), r.get("label")) for r in rows]
    pairs = [(text, label) for text, label in pairs if text]
    if not pairs:
        raise ValueError(f"--examples {path} holds no text; give one public example per row")
    if "label" not in fields or labels is None:  # an unlabelled run pools every example
        return [text for text, _ in pairs]
    by_label: dict[str, list[str]] = {}
    for text, label in pairs:
        by_label.setdefault((label or "").strip(), []).append(text)
    unknown = sorted(set(by_label) - set(labels))
    if unknown:
        raise ValueError(
            f"--examples {path}: label {unknown[0]!r} is not in --labels; label each example "
            "with one of the public labels"
        )
    return by_label


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them is missing: read_examples or the data reader says so
        return False
