"""Rewrites of a base model side by side: how close to the parent, how often siblings share an
opening, how many pass the gate.

A base model cannot fill blanks; privevo's rewrite (``privevo.text.apis.CONTINUE_PROMPT``) keeps
the parent's first ``1 − mask_fraction`` of the words and lets Gemma 3 270M write the rest, so
the rewrites of one parent share their opening. This script compares it with designs that keep
less of the parent verbatim, on the same parents (the first ``--n`` texts of the README quick
start's release, ``benchmarks/data/text_quickstart_reading.json``: public), two rewrites each,
one seed, one process:

- ``keep-half``: privevo's rewrite at mask_fraction 0.5;
- ``keep-random``: the kept share drawn per rewrite from [0.2, 0.7];
- ``parent-example``: the parent as the last of three examples, then a fresh ``Food review:``;
- ``same-product``: three public examples, the parent, then "Another food review of the same
  product:".

Per design: the mean cosine between a rewrite and its parent in the MiniLM embedding (PE's
variation must stay near its parent; the table's last line gives two different texts' mean
cosine for scale), the sibling pairs whose first eight words are equal, the share passing the
checker and the gate (SmolLM2 coherence, as every run), distinct 4-grams::

    python benchmarks/text_variations.py --n 60
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

READING = Path(__file__).parent / "data" / "text_quickstart_reading.json"
KIND = "food review"


def kept(parent: str, share: float) -> str:
    words = parent.split()
    return " ".join(words[: min(int(share * len(words)), len(words) - 1)])


def keep_half(parent: str, rng) -> tuple[str, str]:
    from privevo.text.apis import _examples

    start = kept(parent, 0.5)
    return (_examples(KIND, None, rng) + "Food review: " + start).rstrip(), start


def keep_random(parent: str, rng) -> tuple[str, str]:
    from privevo.text.apis import _examples

    start = kept(parent, rng.uniform(0.2, 0.7))
    return (_examples(KIND, None, rng) + "Food review: " + start).rstrip(), start


def parent_example(parent: str, rng) -> tuple[str, str]:
    from privevo.text.apis import _examples

    return _examples(KIND, None, rng, k=2) + f"Food review: {parent}\n\nFood review:", ""


def same_product(parent: str, rng) -> tuple[str, str]:
    from privevo.text.apis import _examples

    prompt = f"Food review: {parent}\n\nAnother food review of the same product:"
    return _examples(KIND, None, rng) + prompt, ""


DESIGNS = {
    "keep-half": keep_half,
    "keep-random": keep_random,
    "parent-example": parent_example,
    "same-product": same_product,
}


def main(argv=None) -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--n", type=int, default=60, help="parents (two rewrites each)")
    p.add_argument("--designs", nargs="+", default=list(DESIGNS), choices=list(DESIGNS))
    args = p.parse_args(argv)

    from privevo.text import SentenceEmbedder, local_generator, smollm2
    from privevo.text.apis import first_line
    from privevo.text.gate import PublishabilityGate
    from privevo.text.validity import TextChecker
    from text import distinct_ngram_ratio

    parents = json.loads(READING.read_text())["texts"][: args.n]
    lm, embedder = local_generator("gemma3-270m", quiet=True), SentenceEmbedder()
    checker = TextChecker(gate=PublishabilityGate(KIND, embedder=embedder, scorer=smollm2()))
    P = embedder.embed(parents, cache=False)
    rows = []
    for name in args.designs:
        rng = np.random.default_rng(0)
        pairs = [DESIGNS[name](parent, rng) for parent in parents for _ in range(2)]
        cpu = time.process_time()
        raw = lm.generate([q for q, _ in pairs], temperature=1.0, max_new_tokens=64, seed=1)
        cpu = time.process_time() - cpu
        texts = [first_line(start, r or "") for (_, start), r in zip(pairs, raw)]
        judged = checker.gated([checker.check(t, max_new_tokens=64) for t in texts])
        E = embedder.embed(texts, cache=False)
        cosine = np.sum(E * np.repeat(P, 2, axis=0), axis=1)
        openings = [" ".join(t.split()[:8]) for t in texts]
        rows.append(
            {
                "design": name,
                "cosine": float(cosine.mean()),
                "siblings": sum(
                    openings[2 * i] == openings[2 * i + 1] for i in range(len(parents))
                ),
                "passed": float(np.mean([reason is None for _, reason in judged])),
                "distinct4": distinct_ngram_ratio(texts),
                "cpu": cpu,
            }
        )
    C = P @ P.T
    unrelated = (C.sum() - np.trace(C)) / (len(P) * (len(P) - 1))
    print(f"\n{len(parents)} parents, two rewrites each (Gemma 3 270M, temperature 1)\n")
    print(
        "| design | cosine to parent | sibling pairs sharing first 8 words | gate pass | "
        "distinct 4-grams | generation CPU-s |"
    )
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['design']} | {r['cosine']:.2f} | {r['siblings']} of {len(parents)} | "
            f"{r['passed']:.0%} | {r['distinct4']:.3f} | {r['cpu']:.0f} |"
        )
    print(f"\ntwo different parents: mean cosine {unrelated:.2f}")


if __name__ == "__main__":
    main()
