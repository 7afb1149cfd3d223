"""Throughput of the private NN histogram vs faiss, scikit-learn and the GEMM ceiling.

GFLOP/s are counted as 2·n·m·d for every method. The ceiling is the same
float32 matrix products (n×d by d×m) done in chunks into a reused buffer with
all BLAS threads and nothing else: no argmin, no counting. Every method runs
on the same data in the same process, so ratios are comparable even on a
shared machine. **privevo** is ``backend="auto"`` (the fused kernel for
d ≤ 32, the GEMM kernel above); **numpy** is the GEMM kernel alone (the only
kernel before the fused one). The small-call section times whole releases
(``noisy_nn_histogram``); the crossover sections measure the thresholds that
``backend="auto"`` uses.

    python benchmarks/histogram.py            # full table
    python benchmarks/histogram.py --quick    # small shapes
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from privevo.distances import first_of_each_row
from privevo.private import (
    available_backends,
    flat,
    nn_histogram,
    noisy_nn_histogram,
    reference_assign,
)
from privevo.private import lowd as _lowd_kernel

LOW_D = [(200_000, m, d) for d in (2, 4, 16) for m in (100, 2_000, 20_000)]
FULL = LOW_D + [
    (200_000, 1_000, 32),
    (200_000, 2_000, 64),
    (100_000, 2_000, 768),
    (50_000, 20_000, 128),
]
QUICK = [
    (100_000, 100, 2),
    (50_000, 2_000, 4),
    (50_000, 2_000, 16),
    (50_000, 2_000, 64),
    (20_000, 2_000, 768),
]


CLOCK = time.perf_counter  # --one-core: time.process_time (CPU seconds of the one thread)
THREADS: int | None = None  # --one-core: 1 (privevo, faiss and BLAS)


SETTLE_S = 0.2  # pause before each timed call (see best_of)


def best_of(fn, repeats: int) -> float:
    """Best time of ``repeats`` calls, each after a SETTLE_S pause: threads that the method
    timed before left spinning (OpenBLAS after a threaded GEMM, OpenMP after faiss) would
    otherwise share the cores with the next method (:func:`spin_check`)."""
    times = []
    for _ in range(repeats):
        time.sleep(SETTLE_S)
        tic = CLOCK()
        fn()
        times.append(CLOCK() - tic)
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
    if THREADS:
        faiss.omp_set_num_threads(THREADS)
    return np.bincount(index.search(X32, 1)[1][:, 0], minlength=len(C32))


def sklearn_argmin(X: np.ndarray, C: np.ndarray) -> np.ndarray:
    from sklearn.metrics import pairwise_distances_argmin

    return np.bincount(pairwise_distances_argmin(X, C), minlength=len(C))


def reference_counts(X: np.ndarray, C: np.ndarray, sample: int) -> np.ndarray:
    """float64 brute force on the first ``sample`` rows (differences, ties → lowest index)."""
    return np.bincount(reference_assign(X[:sample], C), minlength=len(C))


def data(rng, n: int, m: int, d: int) -> tuple[np.ndarray, np.ndarray]:
    """Clustered data, candidates near the data: the PE regime (many near-ties)."""
    centers = rng.standard_normal((64, d))
    X = centers[rng.integers(64, size=n)] + 0.3 * rng.standard_normal((n, d))
    C = centers[rng.integers(64, size=m)] + 0.3 * rng.standard_normal((m, d))
    return X, C


def run(shapes, repeats: int) -> list[dict]:
    """Each shape: every method timed in turn, ``repeats`` rounds interleaved, best round kept."""
    rng = np.random.default_rng(0)
    rows = []
    for n, m, d in shapes:
        X, C = data(rng, n, m, d)
        X32, C32 = X.astype(np.float32), C.astype(np.float32)
        ours = nn_histogram(X, C)
        check = min(20_000, int(2e8 // m))
        same = [
            np.array_equal(nn_histogram(X[:check], C), reference_counts(X, C, check)),
            int(ours.sum()) == n,
        ]
        same.append(np.array_equal(nn_histogram(X, C, backend="numpy"), ours))
        row = {"n": n, "m": m, "d": d, "auto": "lowd" if _lowd_kernel.uses_lowd(d) else "numpy"}
        methods = {
            "ceiling": lambda: ceiling(X32, C32),
            "privevo": lambda: nn_histogram(X, C, n_threads=THREADS),
            "numpy": lambda: nn_histogram(X, C, backend="numpy", n_threads=THREADS),
            "privevo f32 in": lambda: nn_histogram(X32, C32, n_threads=THREADS),
        }
        once = {}  # slow, or not the point: one round
        if "faiss" in available_backends():
            methods["faiss flat"] = lambda: faiss_flat(X32, C32)
            once["privevo faiss"] = lambda: nn_histogram(X, C, backend="faiss", n_threads=THREADS)
            same.append(np.array_equal(nn_histogram(X, C, backend="faiss"), ours))
        if n * m <= 1e9:
            once["sklearn"] = lambda: sklearn_argmin(X, C)
        best = {name: np.inf for name in [*methods, *once]}
        for r in range(repeats):
            for name, fn in [*methods.items(), *(once.items() if r == 0 else [])]:
                best[name] = min(best[name], best_of(fn, 1))
        row.update({name: 2.0 * n * m * d / t / 1e9 for name, t in best.items()})
        if "faiss flat" in row:
            row["privevo / faiss"] = row["privevo"] / row["faiss flat"]
        row["exact (float64 ref, all backends)"] = all(same)
        rows.append(row)
        print(_table([row], COLUMNS, header=len(rows) == 1), flush=True)
    return rows


COLUMNS = [
    "n",
    "m",
    "d",
    "auto",
    "ceiling",
    "privevo",
    "numpy",
    "privevo f32 in",
    "faiss flat",
    "privevo faiss",
    "sklearn",
    "privevo / faiss",
    "exact (float64 ref, all backends)",
]


def _table(rows: list[dict], keys: list[str], header: bool = True) -> str:
    def fmt(v) -> str:
        if not isinstance(v, float):
            return str(v)
        return f"{v:.2f}" if abs(v) < 10 else f"{v:.1f}"

    lines = ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)] if header else []
    lines += ["| " + " | ".join(fmt(r.get(k, "")) for k in keys) + " |" for r in rows]
    return "\n".join(lines)


def _median_ms(fn, calls: int) -> float:
    times = []
    for _ in range(calls):
        tic = time.perf_counter()
        fn()
        times.append(time.perf_counter() - tic)
    return 1e3 * float(np.median(times))


def spin_check(rounds: int = 9, n: int = 200_000, m: int = 2_000, d: int = 16) -> None:
    """Why table 2 pauses before each call: privevo's median ms with float64 input, alone, right
    after the ``ceiling`` GEMMs (OpenBLAS threads still spinning), and after them plus a
    SETTLE_S pause; float32 input alone. ``python -c "import histogram as h; h.spin_check()"``."""
    X, C = data(np.random.default_rng(0), n, m, d)
    X32, C32 = X.astype(np.float32), C.astype(np.float32)
    cases = {
        "float64 alone": (lambda: time.sleep(SETTLE_S), X, C),
        "float32 alone": (lambda: time.sleep(SETTLE_S), X32, C32),
        "float64 right after ceiling": (lambda: ceiling(X32, C32), X, C),
        "float64 after ceiling + pause": (lambda: (ceiling(X32, C32), time.sleep(SETTLE_S)), X, C),
    }
    times: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(rounds):
        for name, (before, x, c) in cases.items():
            before()
            tic = time.perf_counter()
            nn_histogram(x, c, n_threads=THREADS)
            times[name].append(time.perf_counter() - tic)
    print(f"n = {n}, m = {m}, d = {d}, median ms of {rounds} interleaved rounds")
    for name, ts in times.items():
        print(f"  {name}: {1e3 * float(np.median(ts)):.1f}")


def dedup_timing(m: int = 20_000, d: int = 2, repeats: int = 5) -> None:
    """Candidate deduplication of ``prepare_candidates`` against ``np.unique(axis=0)`` (best ms).
    ``python -c "import histogram as h; h.dedup_timing(); h.dedup_timing(d=16)"``."""
    C = np.random.default_rng(0).standard_normal((m, d))
    for name, fn in (
        ("np.unique(axis=0)", lambda: np.unique(C, axis=0, return_index=True)),
        ("byte strings (privevo)", lambda: first_of_each_row(C)),
    ):
        print(f"  m = {m}, d = {d}, {name}: {1e3 * best_of(fn, repeats):.2f} ms")


def small_calls(calls: int) -> None:
    """One release (noisy_nn_histogram) on n = 200, m = 2, d = 2: median over ``calls``."""
    rng = np.random.default_rng(1)
    X, C = rng.standard_normal((200, 2)), rng.standard_normal((2, 2))
    g = np.random.default_rng(2)
    rows = [
        {
            "path": "auto (small-call path)",
            "median ms": _median_ms(lambda: noisy_nn_histogram(X, C, 1.0, g), calls),
        }
    ]
    rows.append(
        {
            "path": "numpy, small-call path",
            "median ms": _median_ms(
                lambda: noisy_nn_histogram(X, C, 1.0, g, backend="numpy"), calls
            ),
        }
    )
    saved, flat.SMALL_WORK = flat.SMALL_WORK, 0
    try:
        rows.append(
            {
                "path": "numpy, chunked + thread pool (before)",
                "median ms": _median_ms(
                    lambda: noisy_nn_histogram(X, C, 1.0, g, backend="numpy"), calls
                ),
            }
        )
    finally:
        flat.SMALL_WORK = saved
    print(f"\nRelease on n = 200, m = 2, d = 2 (median of {calls} calls)\n")
    print(_table(rows, ["path", "median ms"]))


def small_crossover(calls: int) -> None:
    """Single-threaded vs threaded, per kernel, as n·m·d grows (the SMALL_WORK threshold)."""
    rng = np.random.default_rng(3)
    rows = []
    for n in (500, 2_000, 8_000, 32_000, 128_000):
        X, C = data(rng, n, 32, 4)
        row = {"n·m·d": f"{n * 32 * 4:.0e}"}
        for backend in ("lowd", "numpy") if _lowd_kernel.available() else ("numpy",):
            for label, threshold in (("1 thread", float("inf")), ("threads", 0)):
                saved, flat.SMALL_WORK = flat.SMALL_WORK, threshold
                try:
                    row[f"{backend} {label} ms"] = _median_ms(
                        lambda: nn_histogram(X, C, backend=backend), calls
                    )
                finally:
                    flat.SMALL_WORK = saved
        rows.append(row)
    print(
        f"\nSmall-call crossover (m = 32, d = 4; median ms of {calls} calls; "
        f"threshold in use: n·m·d < {flat.SMALL_WORK:.0e})\n"
    )
    print(_table(rows, list(rows[0])))


def dim_crossover(repeats: int) -> None:
    """Fused vs GEMM kernel as d grows (the AUTO_MAX_DIM threshold)."""
    if not _lowd_kernel.available():
        return
    rng = np.random.default_rng(4)
    rows = []
    for d in (8, 16, 24, 32):
        for m in (200, 5_000):
            n = 100_000
            X, C = data(rng, n, m, d)
            flops = 2.0 * n * m * d
            row = {"d": d, "m": m}
            for backend in ("lowd", "numpy"):
                row[f"{backend} GFLOP/s"] = (
                    flops / best_of(lambda: nn_histogram(X, C, backend=backend), repeats) / 1e9
                )
            row["lowd / numpy"] = row["lowd GFLOP/s"] / row["numpy GFLOP/s"]
            rows.append(row)
    print(
        "\nDimension crossover (n = 100 000; auto uses the fused kernel for "
        f"d <= {_lowd_kernel.AUTO_MAX_DIM})\n"
    )
    print(_table(rows, list(rows[0])))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--calls", type=int, default=2000, help="calls per small-release median")
    parser.add_argument(
        "--one-core",
        action="store_true",
        help="the table only, every method on one thread, timed in CPU seconds (robust to load)",
    )
    args = parser.parse_args()
    from threadpoolctl import threadpool_info

    blas = [(i["internal_api"], i.get("architecture"), i["num_threads"]) for i in threadpool_info()]
    print(
        f"cores: {os.cpu_count()}, BLAS: {blas}, fused kernel: {_lowd_kernel.isa()}, "
        f"load average: {os.getloadavg()}"
    )
    shapes = QUICK if args.quick else FULL
    if args.one_core:
        global CLOCK, THREADS
        from threadpoolctl import threadpool_limits

        CLOCK, THREADS = time.process_time, 1
        print("GFLOP per CPU second, one thread each (2·n·m·d per call, best of repeats)")
        with threadpool_limits(1):
            run([s for s in shapes if s[2] <= 64], args.repeats)
        return
    print("GFLOP/s (2·n·m·d per call, best of repeats)")
    run(shapes, args.repeats)
    small_calls(args.calls)
    small_crossover(max(5, args.calls // 100))
    dim_crossover(args.repeats)


if __name__ == "__main__":
    main()
