"""``privevo synth-text`` and ``privevo intrinsic-dim``: text PE from the command line.

:func:`add_text_commands` registers both on the main parser's subparsers.
Models are loaded once per process (:func:`load_generator`,
:func:`load_embedder`), so several commands in one process share them.
"""

from __future__ import annotations

import csv
import functools
import json
import math
import sys
from pathlib import Path

from ..selection import selector_names
from .options import add_adjacency_and_noise, command, run_delta

__all__ = [
    "add_text_commands",
    "write_texts",
    "load_generator",
    "load_embedder",
]


def add_text_commands(subparsers) -> None:
    """Add ``synth-text`` and ``intrinsic-dim`` to ``subparsers`` (from ``add_subparsers``)."""
    _synth_text_parser(subparsers)
    _intrinsic_parser(subparsers)


def _add_model_options(p) -> None:
    g = p.add_argument_group(
        "models (default: SmolLM2-135M-Instruct and all-MiniLM-L6-v2, offline)"
    )
    g.add_argument(
        "--engine",
        choices=["ctranslate2", "llama_cpp", "transformers"],
        help="engine for the bundled SmolLM2 (default ctranslate2 int8, the fastest measured)",
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
        "--batch-size", type=int, help="prompts per generation batch (default: the engine's, 64)"
    )
    g.add_argument(
        "--threads", type=int, help="CPU threads of the local model (default: all cores)"
    )
    g.add_argument(
        "--kind", default="text", help='what one text is, used in the prompts (e.g. "food review")'
    )
    g.add_argument(
        "--max-tokens",
        type=int,
        default=64,
        help="length cap of a generated text in tokens (default 64)",
    )
    g.add_argument(
        "--mask-fraction",
        type=float,
        default=0.5,
        help="share of words blanked per rewrite (0 = paraphrase)",
    )


def _add_io(p) -> None:
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


def _synth_text_parser(sub) -> None:
    p = command(
        sub,
        "synth-text",
        "DP synthetic texts by Private Evolution with a language model",
        "Differentially private synthetic texts: an LLM writes and rewrites candidates, private "
        "texts vote\n"
        "in sentence-embedding space. Writes the texts (one per row) and a JSON privacy report "
        "beside them.\n"
        "--epsilon inf runs without noise (not private; the report says so).",
        "  privevo synth-text reviews.csv --column review --m 100 --epsilon 4 --kind 'food review' "
        "-o syn.csv\n"
        "  privevo synth-text notes.jsonl --m 50 --epsilon 1 --selector rank --iterations 3 -o "
        "syn.jsonl\n"
        "  privevo synth-text t.csv --m 20 --epsilon 1 --api-base http://127.0.0.1:8000/v1 "
        "--api-model m -o s.csv",
    )
    _add_io(p)
    p.add_argument("--m", type=int, required=True, help="number of synthetic texts (>= 1)")
    p.add_argument(
        "--epsilon", type=float, required=True, help="total epsilon (> 0; 'inf' = non-private run)"
    )
    p.add_argument(
        "--delta",
        type=float,
        help="delta in (0, 1); default 1e-6 under add_remove (n is "
        "private), n^-1.1 under replace (n = number of texts, public there)",
    )
    p.add_argument(
        "--iterations", type=int, default=5, help="T, the number of private releases (default 5)"
    )
    p.add_argument(
        "--selector",
        choices=sorted(selector_names(keeps_candidates=True)),
        default="gape",
        help="selection step (default gape; gape_agg: with neighbourhood aggregation)",
    )
    p.add_argument(
        "--fill",
        action="store_true",
        help="gape: complete the selection to --m with the largest noisy counts (default: only "
        "candidates above the threshold, possibly fewer than --m)",
    )
    p.add_argument(
        "--lookahead",
        type=int,
        default=0,
        help="Aug-PE lookahead: candidates vote with the mean of this many variations (default 0)",
    )
    p.add_argument(
        "--n-neighbors",
        type=int,
        default=1,
        help="votes per private text, to its k nearest candidates, sqrt(k)-normalised (default 1)",
    )
    p.add_argument(
        "--threshold",
        type=float,
        help="subtract this from the noisy counts and clip at 0 before selection (DPSDA)",
    )
    p.add_argument(
        "--no-keep-selected",
        dest="keep_selected",
        action="store_false",
        help="next population = variations only (default: selected texts + variations)",
    )
    p.add_argument(
        "--checkpoint",
        help="checkpoint file (private: holds the RNG); a killed run resumes from it",
    )
    p.add_argument(
        "--R",
        type=float,
        dest="R",
        default=1.0,
        help="gape: public cluster separation in embedding units (default 1.0; unit vectors)",
    )
    add_adjacency_and_noise(
        p,
        "noise of every release (default gaussian; "
        "discrete_gaussian_secure for production: exact sampler, zCDP accounting)",
    )
    p.add_argument(
        "--variations", type=int, default=1, help="rewrites per selected text (default 1)"
    )
    p.add_argument(
        "--temperature", type=float, default=1.0, help="sampling temperature (default 1.0)"
    )
    p.add_argument(
        "--prompt", help="random-API prompt template ({kind}, {topic}, {label} filled in)"
    )
    p.add_argument("--topics", help="comma-separated public topics filling {topic}")
    p.add_argument(
        "--label-column",
        help="column / key holding each text's label (private): candidates are written per "
        "public label (--labels) and each text votes only among its label's candidates; the "
        "output keeps the column",
    )
    p.add_argument(
        "--labels",
        help="comma-separated PUBLIC label list (required with --label-column; never read from "
        "the data)",
    )
    p.add_argument(
        "--label-weights",
        help="comma-separated public weights of --labels for the initial texts (default equal)",
    )
    p.add_argument(
        "--retries",
        type=int,
        default=3,
        help="regenerations of a text that fails the validity check (leftover blanks, echoed "
        "instruction, empty, truncated, length; default 3)",
    )
    p.add_argument(
        "-o",
        "--output",
        help="output texts (.csv, .tsv, .jsonl, .txt); the privacy report goes beside it",
    )
    _add_model_options(p)
    p.set_defaults(func=_synth_text)


def _intrinsic_parser(sub) -> None:
    p = command(
        sub,
        "intrinsic-dim",
        "intrinsic dimension of an LLM's variations (GAPE appendix check)",
        "Rewrite each of --n-texts texts --variations times at each temperature, embed, centre per "
        "text,\n"
        "and count the singular values explaining --variance of the variance. DATA MUST BE PUBLIC "
        "TEXT:\n"
        "the texts are sent to the language model and the result is not differentially private. A\n"
        "--api-base that is not on this machine is refused unless --public-input confirms it.",
        "  privevo intrinsic-dim reviews.csv --column review --n-texts 8 --variations 16\n"
        "  privevo intrinsic-dim texts.txt --temperatures 0.6 1.0 1.4 --json\n"
        "  privevo intrinsic-dim public.txt --public-input --api-base https://host/v1 "
        "--api-model m",
    )
    _add_io(p)
    p.add_argument(
        "--n-texts", type=int, default=8, help="how many texts (the first ones) to vary (default 8)"
    )
    p.add_argument(
        "--variations", type=int, default=16, help="rewrites per text and temperature (default 16)"
    )
    p.add_argument("--temperatures", type=float, nargs="+", default=[0.6, 0.8, 1.0, 1.2, 1.4])
    p.add_argument(
        "--variance", type=float, default=0.8, help="share of variance to explain (default 0.8)"
    )
    p.add_argument(
        "--public-input",
        action="store_true",
        help="confirm that DATA is public text (required with a non-local --api-base)",
    )
    _add_model_options(p)
    p.set_defaults(func=_intrinsic_dim)


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
):
    """The generator for these settings, loaded once per process (``quiet``: no conversion
    line)."""
    return _load_generator(
        model, gguf_file, api_base, api_model, api, batch_size, engine, threads, quiet
    )


@functools.lru_cache(maxsize=4)
def _load_generator(
    model, gguf_file, api_base, api_model, api, batch_size, engine, threads, quiet=False
):
    from ..text.engines import smollm2
    from ..text.llm import OpenAICompatibleLM, TransformersLM

    batch = {} if batch_size is None else {"batch_size": batch_size}
    if api_base is not None:
        if not api_model:
            raise ValueError("--api-base needs --api-model (the model name the server expects)")
        return OpenAICompatibleLM(api_base, api_model, api=api, **batch)
    if model is None:
        kw = {} if engine == "llama_cpp" else batch  # llama.cpp runs one prompt at a time
        if threads is not None and engine != "transformers":  # torch threads are set globally
            kw["threads"] = threads
        return smollm2(engine=engine, quiet=quiet, **kw)
    return TransformersLM(model, gguf_file=gguf_file, **batch)


def load_embedder(path: str | None = None):
    """The embedder at ``path`` (default all-MiniLM-L6-v2), loaded once per process."""
    return _load_embedder(path)


@functools.lru_cache(maxsize=2)
def _load_embedder(path):
    from ..text.embed import SentenceEmbedder

    return SentenceEmbedder(path)


def _models(args):
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
        ),
        load_embedder(args.embedder),
    )


def _no_loading_bars() -> None:
    """No "Loading weights" bars from transformers / huggingface_hub (-q, --json, or no
    terminal)."""
    import os

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


def check_threads(threads: int) -> int:
    from .._validation import check_positive_int

    return check_positive_int(threads, "--threads")


# -- commands ---------------------------------------------------------------------------


def _check_synth_args(args) -> None:
    from .._validation import check_delta, check_epsilon, check_positive_int, check_positive_real

    if args.epsilon != math.inf:
        check_epsilon(args.epsilon)
    if args.delta is not None:
        check_delta(args.delta)
    for name in ("m", "iterations", "variations", "max_tokens", "n_neighbors"):
        check_positive_int(getattr(args, name), "--" + name.replace("_", "-"))
    if args.batch_size is not None:
        check_positive_int(args.batch_size, "--batch-size")
    if args.lookahead < 0:
        raise ValueError(f"--lookahead must be an integer >= 0, got {args.lookahead}")
    if args.threshold is not None and not (args.threshold >= 0 and math.isfinite(args.threshold)):
        raise ValueError(f"--threshold must be a finite number >= 0, got {args.threshold}")
    check_positive_real(args.R, "--R")
    if not 0 <= args.mask_fraction < 1:
        raise ValueError(f"--mask-fraction must be in [0, 1), got {args.mask_fraction}")
    check_temperature(args.temperature, "--temperature")
    if args.threads is not None:
        check_threads(args.threads)
    if args.retries < 0:
        raise ValueError(f"--retries must be an integer >= 0, got {args.retries}")
    _check_model_args(args)
    topics = parse_topics(args.topics)
    labels, weights = parse_labels(args)
    if args.prompt is not None:
        check_prompt(args.prompt, labelled=labels is not None)
    return topics, labels, weights


def check_temperature(value: float, flag: str) -> float:
    if not (value >= 0 and math.isfinite(value)):
        raise ValueError(f"{flag} must be a finite number >= 0 (0 = greedy), got {value}")
    return value


def _check_model_args(args) -> None:
    if args.api_base is not None and not args.api_model:
        raise ValueError("--api-base needs --api-model (the model name the server expects)")
    if args.api_base is None and args.api_model:
        raise ValueError("--api-model needs --api-base (the endpoint serving it)")
    if args.gguf_file and not args.model:
        raise ValueError("--gguf-file needs --model (the folder holding the GGUF file)")
    from .._validation import check_positive_int

    check_positive_int(args.max_tokens, "--max-tokens")


def parse_topics(value: str | None) -> tuple[str, ...]:
    """--topics as a tuple (default: one generic topic); refuses a list with no topic."""
    if value is None:
        return ("any subject",)
    topics = tuple(t.strip() for t in value.split(",") if t.strip())
    if not topics:
        raise ValueError(
            "--topics holds no topic; give comma-separated topics, e.g. --topics 'tea,coffee'"
        )
    return topics


def parse_labels(args):
    """(public label list, weights) from --labels / --label-weights, or (None, None)."""
    if args.label_column is None:
        for flag, value in (("--labels", args.labels), ("--label-weights", args.label_weights)):
            if value is not None:
                raise ValueError(f"{flag} needs --label-column (the column holding the labels)")
        return None, None
    if args.labels is None:
        raise ValueError(
            "--label-column needs --labels, the public comma-separated label list "
            "(it is never read from the private data)"
        )
    labels = [t.strip() for t in args.labels.split(",") if t.strip()]
    if not labels:
        raise ValueError("--labels holds no label; e.g. --labels 'great,other'")
    if len(set(labels)) != len(labels):
        raise ValueError("--labels must be distinct")
    if args.label_column == args.column:
        raise ValueError("--label-column must differ from --column")
    if args.label_weights is None:
        return labels, None
    try:
        weights = [float(w) for w in args.label_weights.split(",")]
    except ValueError:
        raise ValueError("--label-weights must be comma-separated numbers") from None
    if len(weights) != len(labels):
        raise ValueError(f"--label-weights gives {len(weights)} weights for {len(labels)} --labels")
    if not all(w >= 0 and math.isfinite(w) for w in weights) or sum(weights) <= 0:
        raise ValueError("--label-weights must be finite numbers >= 0, not all 0")
    return labels, weights


def check_prompt(template: str, labelled: bool) -> str:
    """A --prompt whose placeholders are among {kind}, {topic} (and {label} with labels)."""
    import string

    allowed = {"kind", "topic", "label"} if labelled else {"kind", "topic"}
    try:
        fields = {name for _, name, _, _ in string.Formatter().parse(template) if name is not None}
    except ValueError as err:
        raise ValueError(
            f"--prompt is not a valid template ({err}); write a literal brace as {{{{ or }}}}"
        ) from None
    bad = sorted(f for f in fields if f not in allowed)
    if bad:
        raise ValueError(
            f"--prompt has an unknown placeholder {{{bad[0]}}}; use "
            + ", ".join("{" + a + "}" for a in sorted(allowed))
        )
    return template


def _synth_text(args) -> int:
    from ..io import (
        check_distinct_paths,
        check_output_path,
        report_path_for,
        write_json,
        write_outputs,
    )
    from ..private import TEXT_FORMATS, read_labelled_texts
    from ..text.apis import LABEL_PROMPT, RANDOM_PROMPT, LLMRandomAPI, LLMVariationAPI
    from ..text.evolution import TextPrivateEvolution
    from ..text.validity import TextChecker

    topics, label_names, label_weights = _check_synth_args(args)
    paths = {}
    if args.output:
        out = check_output_path(args.output, TEXT_FORMATS)
        if label_names is not None and out.suffix.lower() == ".txt":
            raise ValueError(
                "-o .txt cannot hold the label column; write .csv, .tsv or .jsonl with "
                "--label-column"
            )
        paths = {"output": out, "report": report_path_for(out)}
    planned = {"-o": paths.get("output"), "the privacy report": paths.get("report")}
    if args.checkpoint is not None:
        planned["--checkpoint"] = check_output_path(args.checkpoint, None, "checkpoint")
    check_distinct_paths(args.data, {k: v for k, v in planned.items() if v is not None})
    texts, labels = read_labelled_texts(args.data, args.column, args.label_column)
    generator, embedder = _models(args)
    checker = TextChecker(retries=args.retries)
    prompt = args.prompt or (RANDOM_PROMPT if label_names is None else LABEL_PROMPT)
    if label_names is not None:
        prompt = {name: prompt for name in label_names}
    model = TextPrivateEvolution(
        generator,
        embedder,
        n_synthetic=args.m,
        iterations=args.iterations,
        epsilon=args.epsilon,
        delta=run_delta(args, library_default=False, n=len(texts)),
        selector=args.selector,
        gape_R=args.R,
        fill=args.fill,
        kind=args.kind,
        adjacency=args.adjacency,
        noise=args.noise,
        random_state=args.seed,
        lookahead=args.lookahead,
        n_neighbors=args.n_neighbors,
        threshold=args.threshold,
        keep_selected=args.keep_selected,
        checkpoint=args.checkpoint,
        progress=not args.quiet and not args.json and sys.stderr.isatty(),
        label_names=label_names,
        random_api=LLMRandomAPI(
            generator,
            prompt,
            label_weights=label_weights,
            topics=topics,
            kind=args.kind,
            temperature=args.temperature,
            max_new_tokens=args.max_tokens,
            checker=checker,
        ),
        variation_api=LLMVariationAPI(
            generator,
            mask_fraction=args.mask_fraction,
            temperature=args.temperature,
            per_point=args.variations,
            kind=args.kind,
            max_new_tokens=args.max_tokens,
            checker=checker,
        ),
        public_parameters={
            "command": "synth-text",
            "column": args.column,
            **({"label_column": args.label_column} if label_names is not None else {}),
            "retries": args.retries,
        },  # never the seed's value
    ).fit(texts, labels=labels)
    report = model.privacy_report_
    if paths:
        write_outputs(
            {
                paths["output"]: lambda tmp: write_texts(
                    tmp,
                    model.synthetic_texts_,
                    args.column,
                    paths["output"].suffix,
                    labels=model.synthetic_labels_ if label_names is not None else None,
                    label_column=args.label_column,
                ),
                paths["report"]: lambda tmp: write_json(tmp, report),
            }
        )
    _print_synth(args, model.synthetic_texts_, report, paths, validity_line(model.validity_))
    if not args.quiet and not args.json:
        print(timing_line(model.round_seconds_, model.population_.initial_seconds), file=sys.stderr)
    return 0


def timing_line(rounds: list[dict], initial: dict) -> str:
    """Seconds per phase over the run: S_0, then every round's generation / embedding / histogram /
    selection."""
    total = {
        k: sum(r[k] for r in rounds) for k in ("generation", "embedding", "histogram", "selection")
    }
    per_round = "; ".join(
        f"{r['round'] + 1}: " + "/".join(f"{r[k]:.0f}" for k in total) for r in rounds
    )
    return (
        f"seconds: S_0 generation {initial['generation']:.0f}, embedding "
        f"{initial['embedding']:.0f}; "
        f"rounds generation {total['generation']:.0f}, embedding {total['embedding']:.0f}, "
        f"histogram {total['histogram']:.0f}, selection {total['selection']:.0f} "
        f"(per round gen/emb/hist/sel: {per_round})"
    )


LOCAL_HOSTS = ("localhost", "::1")


def is_local_endpoint(url: str) -> bool:
    """Whether an API base URL points at this machine (localhost, 127.0.0.0/8, ::1)."""
    import ipaddress
    from urllib.parse import urlsplit

    host = (urlsplit(url if "://" in url else "http://" + url).hostname or "").lower()
    if host in LOCAL_HOSTS:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_public_endpoint(api_base: str | None, public_input: bool) -> None:
    """Refuse to send intrinsic-dim's input to a server elsewhere unless it is declared public."""
    if api_base is not None and not public_input and not is_local_endpoint(api_base):
        raise ValueError(
            f"--api-base {api_base} is not on this machine and intrinsic-dim sends it every "
            "input text; pass --public-input if DATA is public text"
        )


def validity_line(steps: list[dict]) -> str:
    """Invalid share on the first try, its reasons, and regenerations per step (S_0, then each
    round)."""
    parts = []
    for t, counts in enumerate(steps):
        if not counts or not counts.get("generated"):
            continue
        name = "S_0" if t == 0 else f"round {t}"
        share = 100.0 * counts["invalid"] / counts["generated"]
        reasons = sorted(counts.get("reasons", {}).items(), key=lambda kv: (-kv[1], kv[0]))
        parts.append(
            f"{name} {share:.1f}% ("
            + "".join(f"{reason} {n}, " for reason, n in reasons)
            + f"{counts['regenerated']} regenerated"
            + (f", {counts['fallback']} fell back" if counts.get("fallback") else "")
            + ")"
        )
    return "invalid on first try: " + ("; ".join(parts) if parts else "not checked")


def _print_synth(args, texts, report: dict, paths: dict, validity: str = "") -> None:
    if args.json:
        result = {"outputs": {k: str(v) for k, v in paths.items()}, "privacy_report": report}
        if not paths:
            result["texts"] = list(texts)
        print(json.dumps(result, indent=2))
        return
    if not paths:
        for text in texts:
            print(" ".join(text.split()))
    if not args.quiet:
        eps = "inf (NOT private)" if report["epsilon"] is None else f"{report['epsilon']:.4g}"
        where = f"; wrote {', '.join(str(p) for p in paths.values())}" if paths else ""
        short = (
            (
                f" (--m {args.m} requested: {args.selector} kept only the candidates above its "
                "threshold; "
                "--fill completes the selection)"
            )
            if len(texts) < args.m
            else ""
        )
        print(
            f"{len(texts)} texts{short}, epsilon={eps} delta={report['delta']:.3g} "
            f"T={report['steps']}{where}" + (f"; {validity}" if validity else ""),
            file=sys.stdout if paths else sys.stderr,
        )


def _intrinsic_dim(args) -> int:
    from .._validation import check_positive_int
    from ..private import read_texts
    from ..text.intrinsic import variation_intrinsic_dimension

    check_positive_int(args.n_texts, "--n-texts")
    check_positive_int(args.variations, "--variations", minimum=2)
    if not 0 < args.variance <= 1:
        raise ValueError(f"--variance must be in (0, 1], got {args.variance}")
    for temperature in args.temperatures:
        check_temperature(temperature, "--temperatures")
    if not 0 <= args.mask_fraction < 1:
        raise ValueError(f"--mask-fraction must be in [0, 1), got {args.mask_fraction}")
    if args.threads is not None:
        check_threads(args.threads)
    if args.batch_size is not None:
        check_positive_int(args.batch_size, "--batch-size")
    _check_model_args(args)
    check_public_endpoint(args.api_base, args.public_input)
    if not args.quiet:
        print(
            "privevo intrinsic-dim: its input must be PUBLIC text: the texts are sent to the "
            "language "
            "model and the result is not differentially private",
            file=sys.stderr,
        )
    texts = read_texts(args.data, args.column)[: args.n_texts]
    generator, embedder = _models(args)
    rows = variation_intrinsic_dimension(
        texts,
        generator,
        embedder,
        temperatures=args.temperatures,
        n_variations=args.variations,
        variance=args.variance,
        mask_fraction=args.mask_fraction,
        kind=args.kind,
        max_new_tokens=args.max_tokens,
        random_state=args.seed,
    )
    if args.json:
        print(
            json.dumps({"variance": args.variance, "n_texts": len(texts), "rows": rows}, indent=2)
        )
        return 0
    print(f"{'temperature':>11} {'intrinsic dim':>13} {'of ambient':>10} {'max possible':>12}")
    for r in rows:
        print(
            f"{r['temperature']:>11.2f} {r['intrinsic_dim']:>13d} {r['ambient_dim']:>10d} "
            f"{r['max_rank']:>12d}"
        )
    return 0
