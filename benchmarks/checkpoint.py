"""Cost of checkpointing: `privevo synth` with 300 rounds, with and without --checkpoint, one run.

The checkpoint is an append-only log (one record per round, fsynced), so its
cost per round must not grow with the round index. Runs alternate (without,
with, without, ...) so both see the same machine load; the table gives the
median wall time of each and their ratio.

    python benchmarks/checkpoint.py                 # 300 rounds, 3 repeats
    python benchmarks/checkpoint.py --rounds 600 --repeats 5
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def synth(data: Path, out: Path, rounds: int, m: int, checkpoint: Path | None) -> float:
    command = [
        sys.executable,
        "-m",
        "privevo.cli",
        "synth",
        str(data),
        "--m",
        str(m),
        "--selector",
        "rank",
        "--iterations",
        str(rounds),
        "--epsilon",
        "1",
        "--delta",
        "1e-6",
        "--radius",
        "5",
        "-q",
        "-o",
        str(out),
    ]
    if checkpoint is not None:
        command += ["--checkpoint", str(checkpoint)]
    tic = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True)
    return time.perf_counter() - tic


def main() -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--rounds", type=int, default=300)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--m", type=int, default=50, help="synthetic points (population 5·m)")
    p.add_argument("--n", type=int, default=2000, help="private rows")
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        data = tmp / "data.npy"
        np.save(data, np.random.default_rng(0).normal(0, 1, (args.n, 4)))
        times: dict[str, list[float]] = {"without": [], "with": []}
        sizes = []
        for r in range(args.repeats):
            times["without"].append(synth(data, tmp / "a.csv", args.rounds, args.m, None))
            ckpt = tmp / f"run{r}.ckpt"
            times["with"].append(synth(data, tmp / "b.csv", args.rounds, args.m, ckpt))
            sizes.append(ckpt.stat().st_size)
    without, with_ = statistics.median(times["without"]), statistics.median(times["with"])
    print(
        f"privevo synth, {args.rounds} rounds, m = {args.m}, n = {args.n}, d = 4; median of "
        f"{args.repeats}\n"
    )
    print("| run | seconds (median) | per round (ms) | checkpoint size |")
    print("|---|---|---|---|")
    print(f"| without --checkpoint | {without:.2f} | {1000 * without / args.rounds:.1f} | — |")
    print(
        f"| with --checkpoint | {with_:.2f} | {1000 * with_ / args.rounds:.1f} | "
        f"{sizes[0] / 2**20:.1f} MiB |"
    )
    print(f"\nratio with / without: {with_ / without:.2f}")


if __name__ == "__main__":
    main()
