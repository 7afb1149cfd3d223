"""The publishability gate on public generations, and against a hand reading (docs/text.md,
"Publishable candidates").

benchmarks/data/text_gate_public.json holds 597 texts SmolLM2-135M-Instruct wrote from the
public food-review prompts (no private data) and a hand reading of a random 100 of them
(docs/text_rubric.md's labels). This script runs the gate (meta-talk, off-topic in the MiniLM
embedding, incoherent by SmolLM2's word-order gain) on every text and prints its verdicts, its
CPU seconds, and how its verdicts on the hand-read texts compare with the reading.

The hand-read texts are split once, by a seeded random permutation fixed before any threshold
was tuned (:func:`split`), into a tuning half and a held-out half; the gate's rules were tuned
on the tuning half only, and the figures quoted in docs/text.md are the held-out half's::

    python benchmarks/text_gate.py             # all 597 texts (about 5 CPU minutes)
    python benchmarks/text_gate.py --hand-only # the hand-read texts only
    python benchmarks/text_gate.py --order-gains  # the coherence score of each bundled model
"""

from __future__ import annotations

import argparse
import json
import math
import time
from collections import Counter
from pathlib import Path

DATA = Path(__file__).parent / "data" / "text_gate_public.json"
SPLIT_SEED = 20261204  # fixed before tuning; never changed to suit a result


def split(hand: dict[int, str]) -> tuple[list[int], list[int]]:
    """The tuning half and the held-out half of the hand-read texts (seeded permutation)."""
    import numpy as np

    order = np.random.default_rng(SPLIT_SEED).permutation(sorted(hand)).tolist()
    half = len(order) // 2
    return sorted(order[:half]), sorted(order[half:])


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson 95 % interval of a share k/n."""
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def compare(verdicts: dict[int, str | None], hand: dict[int, str]) -> None:
    """The gate's verdicts on the hand-read texts against the reading."""
    bad = {i for i, label in hand.items() if label != "publishable"}
    passed = [i for i in hand if verdicts[i] is None]
    missed = [i for i in passed if i in bad]
    over = [i for i in hand if verdicts[i] is not None and i not in bad]
    low, high = wilson(len(missed), len(passed))
    print(f"hand-read {len(hand)}: {len(bad)} unpublishable {dict(Counter(hand.values()))}")
    print(
        f"gate passed {len(passed)}, of them unpublishable {len(missed)} "
        f"({len(missed) / len(passed):.0%}, 95 % interval {low:.0%}-{high:.0%}): "
        f"{dict(Counter(hand[i] for i in missed))}"
    )
    print(f"gate rejected {len(hand) - len(passed)}, of them publishable {len(over)}")


def order_gains() -> None:
    """Each bundled model's word-order gain (the ``incoherent`` rule's score) on the hand-read
    texts: median and 10th / 90th percentiles per label, and the share of each label under
    the threshold (``docs/text.md``: why a base generator's texts are scored by SmolLM2)."""
    import numpy as np

    from privevo.text.engines import MODELS, local_generator
    from privevo.text.gate import PublishabilityGate

    data = json.loads(DATA.read_text())
    hand = {int(i): label for i, label in data["hand"].items()}
    ids = sorted(hand)
    for name in MODELS:
        gate = PublishabilityGate("food review", scorer=local_generator(name, threads=1))
        gains = gate.order_gains([data["texts"][i] for i in ids])
        print(f"{name} (threshold {gate.min_order_gain}):")
        for label in sorted(set(hand.values())):
            g = np.array([x for i, x in zip(ids, gains) if hand[i] == label])
            print(
                f"  {label:12s} n={len(g):3d} median {np.median(g):.2f} "
                f"(10-90 %: {np.percentile(g, 10):.2f}-{np.percentile(g, 90):.2f}), "
                f"under the threshold {np.mean(g < gate.min_order_gain):.0%}"
            )


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--hand-only", action="store_true", help="judge the hand-read texts only")
    p.add_argument(
        "--tuning", action="store_true", help="compare on the tuning half (default: held-out half)"
    )
    p.add_argument(
        "--order-gains",
        action="store_true",
        help="print each bundled model's word-order gains on the hand-read texts by label, "
        "and exit",
    )
    args = p.parse_args(argv)
    from privevo.text import SentenceEmbedder
    from privevo.text.engines import smollm2
    from privevo.text.gate import PublishabilityGate

    if args.order_gains:
        return order_gains()
    data = json.loads(DATA.read_text())
    texts, hand = data["texts"], {int(i): label for i, label in data["hand"].items()}
    chosen = sorted(hand) if args.hand_only else range(len(texts))
    gate = PublishabilityGate("food review", embedder=SentenceEmbedder(), scorer=smollm2(threads=1))
    tic = time.process_time()
    judged = gate.judge([texts[i] for i in chosen])
    seconds = time.process_time() - tic
    verdicts = dict(zip(chosen, judged))
    counts = Counter(v or "publishable" for v in judged)
    print(
        f"{len(judged)} texts, {seconds:.0f} CPU s ({seconds / len(judged):.2f} a text): "
        f"{dict(counts)}"
    )
    tune, held = split(hand)
    chosen_half = tune if args.tuning else held
    print("tuning half:" if args.tuning else "held-out half:")
    compare(verdicts, {i: hand[i] for i in chosen_half})
    fresh = {int(i): label for i, label in data.get("hand_fresh", {}).items()}
    if fresh and not args.tuning:
        judged = dict(zip(sorted(fresh), gate.judge([texts[i] for i in sorted(fresh)])))
        print("second held-out set (hand_fresh):")
        compare(judged, fresh)


if __name__ == "__main__":
    main()
