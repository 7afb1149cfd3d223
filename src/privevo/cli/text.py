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

from ._common import ADJACENCIES, NOISES, _command, _delta  # one set of helpers for every command

__all__ = ["add_text_commands", "read_texts", "write_texts", "load_generator", "load_embedder"]

TEXT_FORMATS = (".csv", ".tsv", ".jsonl", ".txt")


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
    p = _command(
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
        choices=["gape", "gape_agg", "rank", "subsample"],
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
    p.add_argument("--adjacency", choices=ADJACENCIES, default="add_remove")
    p.add_argument(
        "--noise",
        choices=NOISES,
        default="gaussian",
        help="noise of every release (default gaussian; "
        "discrete_gaussian_secure for production: exact sampler, zCDP accounting)",
    )
    p.add_argument(
        "--variations", type=int, default=1, help="rewrites per selected text (default 1)"
    )
    p.add_argument(
        "--temperature", type=float, default=1.0, help="sampling temperature (default 1.0)"
    )
    p.add_argument("--prompt", help="random-API prompt template ({kind}, {topic} filled in)")
    p.add_argument("--topics", help="comma-separated public topics filling {topic}")
    p.add_argument(
        "-o",
        "--output",
        help="output texts (.csv, .tsv, .jsonl, .txt); the privacy report goes beside it",
    )
    _add_model_options(p)
    p.set_defaults(func=_synth_text)


def _intrinsic_parser(sub) -> None:
    p = _command(
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


def read_texts(path, column: str = "text") -> list[str]:
    """Texts from .csv/.tsv (``column``), .jsonl (key ``column``) or .txt (one per line)."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in TEXT_FORMATS:
        raise ValueError(
            f"{path}: unsupported text file type {suffix or '(none)'!r}; use one of "
            f"{', '.join(TEXT_FORMATS)}"
        )
    if not path.is_file():
        raise ValueError(f"{path} does not exist or is not a file")
    with open(path, newline="", encoding="utf-8") as handle:
        if suffix == ".txt":
            texts = [line.rstrip("\n") for line in handle if line.strip()]
        elif suffix == ".jsonl":
            texts = [
                _json_text(path, i, line, column)
                for i, line in enumerate(handle, 1)
                if line.strip()
            ]
        else:
            reader = csv.DictReader(handle, delimiter="\t" if suffix == ".tsv" else ",")
            if column not in (reader.fieldnames or []):
                raise ValueError(
                    f"{path} has no column {column!r}; columns: "
                    f"{', '.join(reader.fieldnames or [])}; pass --column"
                )
            texts = [row[column] or "" for row in reader]
    texts = [t for t in texts if t.strip()]
    if not texts:
        raise ValueError(f"{path} holds no non-empty texts")
    return texts


def _json_text(path: Path, line_no: int, line: str, column: str) -> str:
    try:
        value = json.loads(line)[column]
    except (json.JSONDecodeError, KeyError, TypeError):
        raise ValueError(f"{path} line {line_no}: not a JSON object with key {column!r}") from None
    if not isinstance(value, str):
        raise ValueError(f"{path} line {line_no}: {column!r} is not a string")
    return value


def write_texts(path, texts, column: str = "text", suffix: str | None = None) -> None:
    """One text per row: CSV/TSV with a header, JSONL objects, or .txt lines (whitespace collapsed).

    The format follows ``suffix`` (default: the path's own suffix).
    """
    path = Path(path)
    suffix = (suffix or path.suffix).lower()
    with open(path, "w", newline="", encoding="utf-8") as handle:
        if suffix == ".jsonl":
            handle.writelines(json.dumps({column: t}, ensure_ascii=False) + "\n" for t in texts)
        elif suffix == ".txt":
            handle.writelines(" ".join(t.split()) + "\n" for t in texts)
        else:
            writer = csv.writer(handle, delimiter="\t" if suffix == ".tsv" else ",")
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
):
    """The generator for these settings, loaded once per process."""
    return _load_generator(model, gguf_file, api_base, api_model, api, batch_size, engine, threads)


@functools.lru_cache(maxsize=4)
def _load_generator(model, gguf_file, api_base, api_model, api, batch_size, engine, threads):
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
        return smollm2(engine=engine, **kw)
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
        ),
        load_embedder(args.embedder),
    )


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


def _synth_text(args) -> int:
    from ..io import (
        check_distinct_paths,
        check_output_path,
        report_path_for,
        write_json,
        write_outputs,
    )
    from ..text.apis import RANDOM_PROMPT, LLMRandomAPI, LLMVariationAPI
    from ..text.evolution import TextPrivateEvolution

    _check_synth_args(args)
    paths = {}
    if args.output:
        out = check_output_path(args.output, TEXT_FORMATS)
        paths = {"output": out, "report": report_path_for(out)}
    planned = {"-o": paths.get("output"), "the privacy report": paths.get("report")}
    if args.checkpoint is not None:
        planned["--checkpoint"] = check_output_path(args.checkpoint, None, "checkpoint")
    check_distinct_paths(args.data, {k: v for k, v in planned.items() if v is not None})
    texts = read_texts(args.data, args.column)
    generator, embedder = _models(args)
    topics = (
        tuple(t.strip() for t in args.topics.split(",") if t.strip())
        if args.topics
        else ("any subject",)
    )
    model = TextPrivateEvolution(
        generator,
        embedder,
        n_synthetic=args.m,
        iterations=args.iterations,
        epsilon=args.epsilon,
        delta=_delta(args, library_default=False, n=len(texts)),
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
        random_api=LLMRandomAPI(
            generator,
            args.prompt or RANDOM_PROMPT,
            topics=topics,
            kind=args.kind,
            temperature=args.temperature,
            max_new_tokens=args.max_tokens,
        ),
        variation_api=LLMVariationAPI(
            generator,
            mask_fraction=args.mask_fraction,
            temperature=args.temperature,
            per_point=args.variations,
            kind=args.kind,
            max_new_tokens=args.max_tokens,
        ),
        public_parameters={
            "command": "synth-text",
            "column": args.column,
        },  # never the seed's value
    ).fit(texts)
    report = model.privacy_report_
    if paths:
        write_outputs(
            {
                paths["output"]: lambda tmp: write_texts(
                    tmp, model.synthetic_texts_, args.column, paths["output"].suffix
                ),
                paths["report"]: lambda tmp: write_json(tmp, report),
            }
        )
    _print_synth(args, model.synthetic_texts_, report, paths)
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


def _print_synth(args, texts, report: dict, paths: dict) -> None:
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
            f"T={report['steps']}{where}",
            file=sys.stdout if paths else sys.stderr,
        )


def _intrinsic_dim(args) -> int:
    from .._validation import check_positive_int
    from ..text.intrinsic import variation_intrinsic_dimension

    check_positive_int(args.n_texts, "--n-texts")
    check_positive_int(args.variations, "--variations", minimum=2)
    if not 0 < args.variance <= 1:
        raise ValueError(f"--variance must be in (0, 1], got {args.variance}")
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
