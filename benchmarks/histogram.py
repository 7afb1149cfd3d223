"""Throughput of the private NN histogram vs faiss, scikit-learn and the GEMM ceiling.

GFLOP/s are counted as 2·n·m·d for every method. The ceiling is the same
float32 matrix products (n×d by d×m) done in chunks into a reused buffer with
all BLAS threads and nothing else: no argmin, no counting. Every method runs
on the same data in the same process, so ratios are comparable even on a
shared machine.

    python benchmarks/histogram.py            # full table
    python benchmarks/histogram.py --quick    # small shapes
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from privevo.histogram import available_backends, nn_histogram, reference_assign

FULL = [(1_000_000, 100, 2), (200_000, 2_000, 64), (200_000, 20_000, 16), (100_000, 2_000, 768), (50_000, 20_000, 128), (1_000_000, 1_000, 32)]
QUICK = [(100_000, 100, 2), (50_000, 2_000, 64), (20_000, 2_000, 768)]


def best_of(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        tic = time.perf_counter()
        fn()
        times.append(time.perf_counter() - tic)
    return min(times)


def ceiling(X32: np.ndarray, C32: np.ndarray, rows: int = 2048) -> None:
    ct = np.ascontiguousarray(C32.T)
    buf = np.empty((rows, len(C32)), dtype=np.float32)
    for s in range(0, len(X32), rows):
        e = min(len(X32), s + rows)
        np.matmul(X32[s:e], ct, out=buf[: e - s])


def faiss_flat(X32: np.ndarray, C32: np.ndarray) -> np.ndarray:
    import faiss

    index = faiss.IndexFlatL2(C32.shape[1])
    index.add(C32)
    return np.bincount(index.search(X32, 1)[1][:, 0], minlength=len(C32))


def sklearn_argmin(X: np.ndarray, C: np.ndarray) -> np.ndarray:
    from sklearn.metrics import pairwise_distances_argmin

    return np.bincount(pairwise_distances_argmin(X, C), minlength=len(C))


def reference_counts(X: np.ndarray, C: np.ndarray, sample: int) -> tuple[np.ndarray, np.ndarray]:
    """float64 brute force on the first ``sample`` rows (differences, ties → lowest index)."""
    return np.bincount(reference_assign(X[:sample], C), minlength=len(C))


def run(shapes, repeats: int, check_rows: int) -> list[dict]:
    rng = np.random.default_rng(0)
    rows = []
    for n, m, d in shapes:
        # clustered data, candidates near the data: the PE regime (many near-ties)
        centers = rng.standard_normal((64, d))
        X = centers[rng.integers(64, size=n)] + 0.3 * rng.standard_normal((n, d))
        C = centers[rng.integers(64, size=m)] + 0.3 * rng.standard_normal((m, d))
        X32, C32 = X.astype(np.float32), C.astype(np.float32)
        flops = 2.0 * n * m * d
        ours = nn_histogram(X, C)
        exact = bool(np.array_equal(nn_histogram(X[:check_rows], C), reference_counts(X, C, check_rows)))
        row = {"n": n, "m": m, "d": d, "ceiling": flops / best_of(lambda: ceiling(X32, C32), repeats) / 1e9}
        row["privevo"] = flops / best_of(lambda: nn_histogram(X, C), repeats) / 1e9
        row["privevo f32 in"] = flops / best_of(lambda: nn_histogram(X32, C32), repeats) / 1e9
        if "faiss" in available_backends():
            row["faiss flat"] = flops / best_of(lambda: faiss_flat(X32, C32), repeats) / 1e9
            row["privevo faiss"] = flops / best_of(lambda: nn_histogram(X, C, backend="faiss"), 1) / 1e9
        if n * m <= 5e9:
            row["sklearn"] = flops / best_of(lambda: sklearn_argmin(X, C), 1) / 1e9
        row["% of ceiling"] = 100 * row["privevo"] / row["ceiling"]
        row["exact (float64 ref)"] = exact and int(ours.sum()) == n
        rows.append(row)
        print(_table([row], header=len(rows) == 1), flush=True)
    return rows


COLUMNS = ["n", "m", "d", "ceiling", "privevo", "privevo f32 in", "faiss flat", "privevo faiss", "sklearn", "% of ceiling", "exact (float64 ref)"]


def _table(rows: list[dict], header: bool = True) -> str:
    keys = COLUMNS
    fmt = lambda v: f"{v:.1f}" if isinstance(v, float) else str(v)
    lines = ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)] if header else []
    lines += ["| " + " | ".join(fmt(r.get(k, "")) for k in keys) + " |" for r in rows]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    from threadpoolctl import threadpool_info

    blas = [(i["internal_api"], i.get("architecture"), i["num_threads"]) for i in threadpool_info()]
    print(f"cores: {os.cpu_count()}, BLAS: {blas}, OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE')}")
    print("GFLOP/s (2·n·m·d per call, best of repeats)")
    run(QUICK if args.quick else FULL, args.repeats, check_rows=20_000)


if __name__ == "__main__":
    main()
