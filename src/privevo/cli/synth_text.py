"""``privevo synth-text``: DP synthetic texts by Private Evolution with a language model.

Every flag is checked, sizes included, before a file is read or a model loaded. While the run
lasts, stderr shows where it is (a progress bar on a terminal, the heartbeat line off one),
never how long it took: durations grow with the number of private texts (docs/privacy.md);
``--timings`` prints them, for the user's eyes only.
"""

from __future__ import annotations

import json
import math
import sys

from ..selection import selector_names
from . import text as llm
from .options import add_adjacency_and_noise, check_memory_of, command, run_delta
from .publishing import heartbeat, plan_paths, progress

__all__ = ["add_parser", "timing_line", "validity_line"]

#: --lookahead at most: each candidate writes this many extra texts every round.
LOOKAHEAD_MAX = 100
#: --variations at most: rewrites of each selected text every round.
VARIATIONS_MAX = 1000
#: The default embedder's dimension (all-MiniLM-L6-v2), assumed before any model loads.
DEFAULT_EMBEDDING_DIM = 384


def add_parser(sub) -> None:
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
    llm.add_text_io(p)
    p.add_argument("--m", type=int, required=True, help="number of synthetic texts (>= 1)")
    p.add_argument(
        "--epsilon", type=float, required=True, help="total epsilon (> 0; 'inf' = non-private run)"
    )
    p.add_argument(
        "--delta",
        type=float,
        help="delta in (0, 1); default 1e-6, or 1/(10 n) when the number of texts n is public "
        "(under replace) and above 1e5 (docs/privacy.md)",
    )
    p.add_argument(
        "--iterations", type=int, default=5, help="T, the number of private releases (default 5)"
    )
    _add_selection_flags(p)
    p.add_argument(
        "--checkpoint",
        help="checkpoint file (private: holds the RNG); a killed run resumes from it",
    )
    add_adjacency_and_noise(p)
    _add_generation_flags(p)
    p.add_argument(
        "--timings",
        action="store_true",
        help="print each phase's seconds on stderr at the end; they grow with the number of "
        "private texts, so they are private: never publish them",
    )
    p.add_argument(
        "-o",
        "--output",
        help="output texts (.csv, .tsv, .jsonl, .txt); the privacy report goes beside it",
    )
    llm.add_llm_options(p)
    p.set_defaults(func=_synth_text)


def _add_selection_flags(p) -> None:
    """How candidates are chosen from the votes: the selector and its settings."""
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
        help="Aug-PE lookahead: candidates vote with the mean of this many variations (default 0, "
        f"at most {LOOKAHEAD_MAX})",
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
        "--R",
        type=float,
        dest="R",
        default=1.0,
        help="gape: public cluster separation in embedding units (default 1.0; unit vectors)",
    )


def _add_generation_flags(p) -> None:
    """How the language model writes candidates: variations, prompts, labels, retries, gate."""
    p.add_argument(
        "--variations",
        type=int,
        default=1,
        help=f"rewrites per selected text (default 1, at most {VARIATIONS_MAX})",
    )
    p.add_argument(
        "--temperature", type=float, default=1.0, help="sampling temperature (default 1.0)"
    )
    p.add_argument(
        "--prompt",
        help="random-API prompt template ({kind}, {Kind}, {topic}, {examples}, {label} filled in)",
    )
    p.add_argument(
        "--examples",
        help="public example texts of --kind for a base model's completion prompts: one per "
        "line, or a .csv with a 'text' column and, for a labelled run, a 'label' column (each "
        "label's own examples; default: built-in examples of 'food review'; never the private "
        "data: the DATA file itself is refused)",
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
        "--no-gate",
        dest="gate",
        action="store_false",
        help="no publishability gate (meta-talk, off-topic and incoherent texts are kept; "
        "default: they are regenerated like invalid ones)",
    )


# -- checks (before any file is read or model loaded) -----------------------------------


def _check_synth_args(args):
    """Every flag's rule; returns (topics, public label list or None, label weights or None,
    --examples' texts or None)."""
    from .._validation import check_delta, check_epsilon, check_positive_int, check_positive_real

    if args.epsilon != math.inf:
        check_epsilon(args.epsilon, "--epsilon")
    if args.delta is not None:
        check_delta(args.delta, "--delta")
    for name in ("m", "iterations", "variations", "max_tokens", "n_neighbors"):
        check_positive_int(getattr(args, name), "--" + name.replace("_", "-"))
    check_sizes(args)
    if args.threshold is not None and not (args.threshold >= 0 and math.isfinite(args.threshold)):
        raise ValueError(f"--threshold must be a finite number >= 0, got {args.threshold}")
    check_positive_real(args.R, "--R")
    llm.check_temperature(args.temperature, "--temperature")
    if args.retries < 0:
        raise ValueError(f"--retries must be an integer >= 0, got {args.retries}")
    llm.check_llm_args(args)
    check_text_memory(args)
    topics = parse_topics(args.topics)
    labels, weights = parse_labels(args)
    if args.prompt is not None:
        check_prompt(args.prompt, labelled=labels is not None)
    examples = llm.read_examples(args.examples, args.data, labels)  # before any model loads
    return topics, labels, weights, examples


def check_sizes(args) -> None:
    """--iterations at most MAX_ROUNDS, --lookahead at most LOOKAHEAD_MAX, --variations at most
    VARIATIONS_MAX: each multiplies the texts written every round."""
    from .._validation import check_rounds

    check_rounds(args.iterations, "--iterations")
    if args.lookahead < 0:
        raise ValueError(f"--lookahead must be an integer >= 0, got {args.lookahead}")
    if args.lookahead > LOOKAHEAD_MAX:
        raise ValueError(
            f"--lookahead must be at most {LOOKAHEAD_MAX} (variations written per candidate "
            f"every round), got {args.lookahead}; pass a smaller one"
        )
    if args.variations > VARIATIONS_MAX:
        raise ValueError(
            f"--variations must be at most {VARIATIONS_MAX} (rewrites per selected text every "
            f"round), got {args.variations}; pass a smaller one"
        )


def check_text_memory(args, dim: int = DEFAULT_EMBEDDING_DIM) -> None:
    """Refuse a run whose candidate texts would not fit in memory: about
    m (variations + 1) (lookahead + 1) (T + 1) texts (every round's candidates are kept, and the
    embedder caches every public text's embedding), each 8 dim + 4 max_tokens + 100 bytes."""
    texts = args.m * (args.variations + 1) * (args.lookahead + 1) * (args.iterations + 1)
    per_text = 8 * dim + 4 * args.max_tokens + 100
    check_memory_of(
        {
            "--m": (args.m, args.m),
            "--variations": (args.variations, args.variations + 1),
            "--lookahead": (args.lookahead, args.lookahead + 1),
            "--iterations": (args.iterations, args.iterations + 1),
        },
        float(texts) * per_text,
        f"{texts:.3g} candidate texts with --variations {args.variations}, --lookahead "
        f"{args.lookahead} and --iterations {args.iterations}, each up to {args.max_tokens} "
        f"tokens with a {dim}-d embedding",
    )


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
    return labels, parse_label_weights(args.label_weights, len(labels))


def parse_label_weights(value: str, n_labels: int) -> list[float]:
    """--label-weights as floats: one per label, finite, >= 0, with a finite positive sum
    (they are relative: only their ratios count)."""
    weights = []
    for w in value.split(","):
        try:
            weights.append(float(w))
        except ValueError:
            raise ValueError(
                f"--label-weights must be comma-separated numbers, got {w.strip()!r}"
            ) from None
    if len(weights) != n_labels:
        raise ValueError(f"--label-weights gives {len(weights)} weights for {n_labels} --labels")
    if not all(w >= 0 and math.isfinite(w) for w in weights) or sum(weights) <= 0:
        raise ValueError("--label-weights must be finite numbers >= 0, not all 0")
    if not math.isfinite(sum(weights)):
        raise ValueError(
            "--label-weights add up to more than the largest float; they are relative "
            "(1,3 is the same as 1e300,3e300): give smaller ones"
        )
    return weights


def check_prompt(template: str, labelled: bool) -> str:
    """A --prompt whose placeholders are among {kind}, {Kind}, {topic}, {examples} (and {label}
    with labels)."""
    import string

    allowed = {"kind", "Kind", "topic", "examples"} | ({"label"} if labelled else set())
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


def _plan_paths(args, label_names) -> dict:
    """:func:`~privevo.cli.publishing.plan_paths` for texts; a labelled run cannot write .txt."""
    from ..private import TEXT_FORMATS

    paths = plan_paths(args, TEXT_FORMATS)
    if label_names is not None and paths and paths["output"].suffix.lower() == ".txt":
        raise ValueError(
            "-o .txt cannot hold the label column; write .csv, .tsv or .jsonl with --label-column"
        )
    return paths


# -- the run ----------------------------------------------------------------------------


def _synth_text(args) -> int:
    from ..private import read_labelled_texts

    prompts = _check_synth_args(args)  # (topics, label list, label weights, examples)
    label_names = prompts[1]
    paths = _plan_paths(args, label_names)
    texts, labels = read_labelled_texts(args.data, args.column, args.label_column)
    delta = run_delta(args, library_default=False, n=len(texts))
    with heartbeat(args) as beat:
        beat["phase"] = "loading the models"
        generator, embedder = llm.load_models(args)
        dim = getattr(embedder, "dim", None)
        check_text_memory(args, dim if isinstance(dim, int) else DEFAULT_EMBEDDING_DIM)
        model = _text_model(args, generator, embedder, delta, prompts)
        model.on_phase = lambda phase: beat.update(phase=phase)
        model.fit(texts, labels=labels)
    _write(args, paths, model, label_names)
    validity = validity_line(model.validity_)
    _print_synth(args, model.synthetic_texts_, model.privacy_report_, paths, validity)
    if args.timings:
        print(timing_line(model.round_seconds_, model.population_.initial_seconds), file=sys.stderr)
    return 0


def _text_model(args, generator, embedder, delta, prompts):
    """The estimator from the flags; ``prompts``: (topics, public labels, label weights,
    public examples)."""
    from ..text.apis import LLMRandomAPI, LLMVariationAPI, default_prompt
    from ..text.evolution import TextPrivateEvolution
    from ..text.validity import TextChecker

    topics, label_names, label_weights, examples = prompts
    checker = TextChecker(retries=args.retries, gate=_gate(args, generator, embedder))
    prompt = args.prompt or default_prompt(generator, labelled=label_names is not None)
    if label_names is not None:
        prompt = {name: prompt for name in label_names}
    return TextPrivateEvolution(
        generator,
        embedder,
        n_synthetic=args.m,
        iterations=args.iterations,
        epsilon=args.epsilon,
        delta=delta,
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
        progress=progress(args),
        label_names=label_names,
        random_api=LLMRandomAPI(
            generator,
            prompt,
            label_weights=label_weights,
            topics=topics,
            kind=args.kind,
            examples=examples,
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
            examples=examples,
            label_prompts=prompt if label_names is not None else None,
            max_new_tokens=args.max_tokens,
            checker=checker,
        ),
        public_parameters={
            "command": "synth-text",
            "column": args.column,
            **({"label_column": args.label_column} if label_names is not None else {}),
            "retries": args.retries,
            "gate": bool(args.gate),
        },  # never the seed's value
    )


def _gate(args, generator, embedder):
    """The publishability gate of ``--kind``: meta-talk always; off-topic on the run's sentence
    embedder (a :class:`~privevo.text.SentenceEmbedder`); coherence by the generator's own
    log-likelihood where it has one (a local chat model, not a remote server). A base model's
    scores are not on the scale the threshold was set on (docs/text.md, "Generators"): the
    bundled SmolLM2 scores its texts instead."""
    from ..text.apis import completes_documents
    from ..text.embed import SentenceEmbedder
    from ..text.gate import PublishabilityGate

    if not args.gate:
        return None
    scorer = generator if callable(getattr(generator, "mean_log_prob", None)) else None
    if scorer is not None and completes_documents(generator):
        try:
            scorer = llm.load_generator(
                quiet=True, threads=getattr(args, "threads", None), bundled="smollm2-135m"
            )
        except ImportError as err:
            print(f"privevo synth-text: no coherence rule in the gate ({err})", file=sys.stderr)
            scorer = None
    semantic = embedder if isinstance(embedder, SentenceEmbedder) else None
    return PublishabilityGate(args.kind, embedder=semantic, scorer=scorer)


def _write(args, paths: dict, model, label_names) -> None:
    """The texts and the report beside them, written atomically (all or nothing)."""
    from ..io import write_json, write_outputs

    if not paths:
        return
    write_outputs(
        {
            paths["output"]: lambda tmp: llm.write_texts(
                tmp,
                model.synthetic_texts_,
                args.column,
                paths["output"].suffix,
                labels=model.synthetic_labels_ if label_names is not None else None,
                label_column=args.label_column,
            ),
            paths["report"]: lambda tmp: write_json(tmp, model.privacy_report_),
        }
    )


# -- what is printed --------------------------------------------------------------------


def timing_line(rounds: list[dict], initial: dict) -> str:
    """Seconds per phase over the run: S_0, then every round's generation / embedding / histogram /
    selection (``--timings`` only: they grow with the number of private texts)."""
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
