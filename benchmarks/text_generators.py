"""The bundled generators side by side: speed, the gate's first-try pass rate, precision / recall.

Each generator writes ``--n`` food reviews from the public prompts (its own kind of prompt:
an instruction for SmolLM2-135M-Instruct, a completion prompt with public examples for the
base model Gemma 3 270M; ``privevo.text.apis``), first try only, in one process one after
the other. Every text is then judged by privevo's validity checker and by one publishability
gate for all (MiniLM off-topic rule, SmolLM2 word-order coherence: the scale its threshold was
set on), and the set is scored against the 1000 private food reviews of ``training_data``
(kNN precision and recall, k = 3: evaluation only, never a published figure of a run).

    python benchmarks/text_generators.py --n 200 --save texts.json

``texts per CPU-second`` counts the generation alone (CPU time of every thread of the process);
``publishable per CPU-second`` multiplies it by the pass rate. The downstream accuracy of each
generator comes from ``benchmarks/text.py --generator NAME``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter

import numpy as np

GENERATORS = ("smollm2-135m", "gemma3-270m")
KIND = "food review"


def write(name: str, n: int, seed: int, max_tokens: int) -> tuple[list[str], float, object]:
    """``n`` first-try texts of generator ``name``, the CPU seconds they took, and its API."""
    from privevo.text import FOOD_TOPICS, LLMRandomAPI, local_generator

    lm = local_generator(name, quiet=True)
    api = LLMRandomAPI(lm, topics=FOOD_TOPICS, kind=KIND, max_new_tokens=max_tokens, checker=None)
    api.sample_texts(2, np.random.default_rng(seed + 1))  # warm-up: engines start, caches fill
    cpu = time.process_time()
    texts, _ = api.sample_texts(n, np.random.default_rng(seed))
    return texts, time.process_time() - cpu, api


def verdicts(texts: list[str], api, gate, max_tokens: int) -> tuple[list[str], list[str | None]]:
    """Each text as the checker repairs it (a truncated tail cut at its last sentence) and its
    verdict: the checker's reason, else the gate's, else None (publishable)."""
    from privevo.text.apis import instruction_of
    from privevo.text.validity import TextChecker

    checker = TextChecker(gate=gate)  # judged as the APIs judge a first try
    echo = instruction_of(api.prompt, KIND)
    tokenizer = getattr(api.generator, "tokenizer", None)
    judged = checker.gated(
        [
            checker.check(t, max_new_tokens=max_tokens, tokenizer=tokenizer, instruction=echo)
            for t in texts
        ]
    )
    return [text for text, _ in judged], [reason for _, reason in judged]


def main(argv=None) -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--n", type=int, default=200, help="texts per generator")
    p.add_argument("--generators", nargs="+", default=list(GENERATORS), choices=GENERATORS)
    p.add_argument("--max-tokens", type=int, default=64)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--save", help="JSON file for every generator's texts and verdicts")
    args = p.parse_args(argv)

    from privevo.evaluation import text_precision_recall
    from privevo.text import SentenceEmbedder, smollm2
    from privevo.text.gate import PublishabilityGate
    from text import load_reviews

    private, _ = load_reviews("training_data", 1000)
    embedder = SentenceEmbedder()
    gate = PublishabilityGate(KIND, embedder=embedder, scorer=smollm2(quiet=True))
    rows, saved = [], {}
    for name in args.generators:
        texts, cpu, api = write(name, args.n, args.seed, args.max_tokens)
        texts, judged = verdicts(texts, api, gate, args.max_tokens)
        pr = text_precision_recall(private, texts, embedder, k=3)
        passed = float(np.mean([v is None for v in judged]))
        rows.append(
            {
                "generator": name,
                "texts_per_cpu_s": args.n / cpu,
                "pass_rate": passed,
                "publishable_per_cpu_s": passed * args.n / cpu,
                "reasons": dict(Counter(v for v in judged if v)),
                "precision": pr["precision"],
                "recall": pr["recall"],
                "words": float(np.mean([len(t.split()) for t in texts])),
            }
        )
        saved[name] = [{"text": t, "verdict": v} for t, v in zip(texts, judged)]
        print(f"{name}: {rows[-1]}", file=sys.stderr, flush=True)
    if args.save:
        with open(args.save, "w", encoding="utf-8") as handle:
            json.dump(saved, handle, indent=1, ensure_ascii=False)
    print(table(rows, args.n))


def table(rows: list[dict], n: int) -> str:
    lines = [
        f"{n} texts per generator, first try (the checker and one gate for all)",
        "",
        "| generator | texts per CPU-s | gate pass rate | publishable per CPU-s | words / text | "
        "kNN precision | kNN recall | rejected (reason: count) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        reasons = ", ".join(f"{k} {v}" for k, v in sorted(r["reasons"].items()))
        lines.append(
            f"| {r['generator']} | {r['texts_per_cpu_s']:.2f} | {r['pass_rate']:.0%} | "
            f"{r['publishable_per_cpu_s']:.2f} | {r['words']:.0f} | {r['precision']:.2f} | "
            f"{r['recall']:.2f} | {reasons} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
