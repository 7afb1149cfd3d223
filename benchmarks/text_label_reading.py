"""Do a labelled run's texts read as their labels? A blind reading of two designs side by side.

``--make``: from ``text.py --save`` files of two runs (e.g. ``--rewrites labelled plain``), draw
``--n`` texts of each at random, shuffle them together and write a reader's sheet: one
``id<TAB>text`` line per text, with neither the run nor the label shown. The key (run and label
of each id) goes into the reading file beside the texts.

``--score``: the reader's answers (``{id: label}``) against the key: per run, the share of texts
whose label the reader gives (Wilson 95 % interval), and per label how many read as it.

    python benchmarks/text_label_reading.py --make texts/seed0-gape_agg-labelled-eps4.csv \\
        texts/seed0-gape_agg-plain-eps4.csv --n 60 --seed 7 --out reading.json --sheet sheet.txt
    python benchmarks/text_label_reading.py --score reading.json
"""

from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path

import numpy as np

RUBRIC = (
    "great: the writer is clearly delighted, it reads as a five-star review (enthusiastic, no "
    "real complaint); other: anything else (disappointed, mixed, lukewarm, a complaint, or only "
    "partly satisfied; mostly praise with a real reservation is other). An incoherent text is "
    "judged by the sentiment it mostly conveys."
)


def make(paths: list[str], n: int, seed: int) -> dict:
    """The blinded sheet and its key: ``n`` random texts of each run, shuffled together."""
    rng = np.random.default_rng(seed)
    items = []
    for path in paths:
        with open(path, newline="", encoding="utf-8") as handle:
            rows = list(csv.DictReader(handle))
        for i in rng.choice(len(rows), size=min(n, len(rows)), replace=False):
            items.append(
                {"run": Path(path).stem, "label": rows[i]["label"], "text": rows[i]["review"]}
            )
    order = rng.permutation(len(items))
    return {
        "rubric": RUBRIC,
        "runs": [Path(path).stem for path in paths],
        "texts": [{"id": k + 1, **items[j]} for k, j in enumerate(order)],
        "readers": {},
    }


def score(reading: dict) -> str:
    """Per reader and run: texts read as their label; per label: how many read as it."""
    from text_gate import wilson

    lines = [
        "| reader | run | texts | read as their label (95 % CI) | per label: read as it |",
        "|---|---|---|---|---|",
    ]
    for reader, answers in reading["readers"].items():
        for run in reading["runs"]:
            texts = [t for t in reading["texts"] if t["run"] == run]
            agree = sum(answers[str(t["id"])] == t["label"] for t in texts)
            low, high = wilson(agree, len(texts))
            per_label = ", ".join(
                f"{label} {sum(answers[str(t['id'])] == label for t in own)} of {len(own)}"
                for label in sorted({t["label"] for t in texts})
                for own in [[t for t in texts if t["label"] == label]]
            )
            lines.append(
                f"| {reader} | {run} | {len(texts)} | {agree} ({100 * agree / len(texts):.0f} %; "
                f"{100 * low:.0f}–{100 * high:.0f} %) | {per_label} |"
            )
    return "\n".join(lines)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--make", nargs="+", metavar="CSV", help="text.py --save files, one per run")
    p.add_argument("--n", type=int, default=60, help="texts drawn per run")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--out", help="reading file to write (--make)")
    p.add_argument("--sheet", help="reader's sheet to write (--make): id<TAB>text lines")
    p.add_argument("--score", metavar="JSON", help="reading file with its readers' answers")
    args = p.parse_args(argv)
    if args.make and not (args.out and args.sheet):
        p.error("--make needs --out (the reading file) and --sheet (the reader's sheet)")
    if args.make:
        reading = make(args.make, args.n, args.seed)
        Path(args.out).write_text(json.dumps(reading, indent=1, ensure_ascii=False) + "\n")
        sheet = "".join(f"{t['id']}\t{t['text']}\n" for t in reading["texts"])
        Path(args.sheet).write_text(sheet, encoding="utf-8")
    if args.score:
        print(score(json.loads(Path(args.score).read_text(encoding="utf-8"))))


if __name__ == "__main__":
    main()
