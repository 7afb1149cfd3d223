"""DPKMeans wall time per fit at ε = 1 with the previous kernel and the fused low-d kernel.

Both kernels in one process, fits interleaved (old, new, old, new, …) on the
same seeds, so a shared machine slows both alike. **old** = ``backend="numpy"``
with the small-call path switched off (the kernel as it was: float32 GEMM into
a chunk buffer + argmin, thread pool and threadpoolctl on every call);
**new** = ``backend="auto"`` (the fused kernel for d ≤ 32, small calls on the
calling thread). Counts are exact on both, so each pair of fits must return
identical centres: the script checks it. Pin it to one core:

    taskset -c 0 python benchmarks/kernel_kmeans.py --repeats 5
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from kmeans import datasets  # noqa: E402  (the benchmark's data sets and preprocessing)
from privevo import DPKMeans  # noqa: E402
from privevo.private import flat, lowd  # noqa: E402

SETS = ("blobs k=16 d=16", "letter")


def fit(X: np.ndarray, k: int, seed: int, kernel: str) -> tuple[float, float, float, np.ndarray]:
    """(wall s, CPU s, histogram share, centres) of one fit at ε = 1."""
    saved = flat.SMALL_WORK
    if kernel == "old":
        flat.SMALL_WORK = 0
    try:
        est = DPKMeans(
            k,
            epsilon=1.0,
            delta=len(X) ** -1.1,
            radius=1.0,
            random_state=seed,
            backend="numpy" if kernel == "old" else "auto",
        )
        tic, cpu = time.perf_counter(), time.process_time()
        est.fit(X)
        wall, cpu = time.perf_counter() - tic, time.process_time() - cpu
    finally:
        flat.SMALL_WORK = saved
    return wall, cpu, est.timings_["histogram"] / est.timings_["total"], est.cluster_centers_


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="seeds per kernel and data set")
    args = parser.parse_args()
    data = datasets(quick=True)
    cores = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else "?"
    print(f"cores allowed: {cores}; fused kernel: {lowd.isa()}; load average: {os.getloadavg()}")
    head = [
        "data set",
        "n",
        "d",
        "k",
        "kernel",
        "median wall s / fit",
        "median CPU s / fit",
        "histogram share",
        "speed-up (wall)",
        "speed-up (CPU)",
        "identical centres",
    ]
    print("| " + " | ".join(head) + " |\n|" + "---|" * len(head))
    for name in SETS:
        if name not in data:
            print(f"| {name} | (not available) |")
            continue
        X, k = data[name]
        fit(X, k, 10_000, "new")  # warm-up
        runs: dict[str, list] = {"old": [], "new": []}
        same = True
        for seed in range(args.repeats):
            for kernel in ("old", "new"):
                runs[kernel].append(fit(X, k, seed, kernel))
            same &= bool(np.array_equal(runs["old"][-1][3], runs["new"][-1][3]))
        med = {kn: np.median(np.array([r[:3] for r in rs]), axis=0) for kn, rs in runs.items()}
        for kernel in ("old", "new"):
            wall, cpu, share = med[kernel]
            ratio = (
                (f"{med['old'][0] / wall:.2f}×", f"{med['old'][1] / cpu:.2f}×")
                if kernel == "new"
                else ("", "")
            )
            print(
                f"| {name} | {len(X)} | {X.shape[1]} | {k} | {kernel} | {wall:.3f} | {cpu:.3f} "
                f"| {share:.0%} "
                f"| {ratio[0]} | {ratio[1]} | {same if kernel == 'new' else ''} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
