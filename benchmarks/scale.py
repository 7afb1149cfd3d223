"""The private NN histogram at scale: in-memory vs streaming (Parquet, .npy) vs Dask.

For each n (d = 32, m = 1000) the data are written once to Parquet (row
groups of 100k rows, 1M rows per file) and .npy under ``--out`` (git-ignored
``benchmarks/out/`` by default). Each path runs in a fresh process so its peak
RSS (``ru_maxrss``) is its own:

* ``memory``  — all rows read into one float32 array, then ``nn_histogram``;
* ``parquet`` — ``nn_histogram(ParquetSource(folder))``: one row group at a time;
* ``npy``     — ``nn_histogram(NpySource(file))``: 32 MiB memory-mapped blocks;
* ``dask``    — ``nn_histogram(ParquetSource(folder), backend="dask")`` on a
  ``LocalCluster`` of 2 single-threaded worker processes (row groups read on
  the workers); RSS = driver + both workers.

Counts of every path are checked for exact equality with the in-memory ones.

    python benchmarks/scale.py --sizes 1e5 1e6 1e7
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

PATHS = ("memory", "parquet", "npy", "dask")
ROWS_PER_GROUP = 100_000
ROWS_PER_FILE = 1_000_000


def main() -> None:
    args = _parser().parse_args()
    if args.case:
        print(json.dumps(run_case(args)))
        return
    out = Path(args.out)
    rows = []
    for n in [int(float(s)) for s in args.sizes]:
        data = make_data(out, n, args.d, args.clusters)
        results = {p: _in_subprocess(p, n, data, args) for p in args.paths}
        rows += _rows(n, results)
        print(format_table(rows[-len(results) :]), flush=True)
    print("\n" + format_table(rows))


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument(
        "--sizes", nargs="+", default=["1e5", "1e6"], help="values of n (default 1e5 1e6)"
    )
    p.add_argument("--d", type=int, default=32)
    p.add_argument("--m", type=int, default=1000)
    p.add_argument(
        "--clusters", type=int, default=20, help="Gaussian clusters in the synthetic data"
    )
    p.add_argument("--paths", nargs="+", default=list(PATHS), choices=PATHS)
    p.add_argument("--out", default=str(Path(__file__).parent / "out" / "scale"))
    p.add_argument(
        "--case", choices=PATHS, help=argparse.SUPPRESS
    )  # internal: one path in this process
    p.add_argument("--n", type=int, help=argparse.SUPPRESS)
    p.add_argument("--data", help=argparse.SUPPRESS)
    return p


# ------------------------------------------------------------------ data


def make_data(out: Path, n: int, d: int, clusters: int) -> Path:
    """Parquet folder + .npy of n rows (float32), written block by block; reused if present."""
    folder = out / f"n{n}_d{d}"
    done = folder / "DONE"
    if done.exists():
        return folder
    import pyarrow as pa
    import pyarrow.parquet as pq

    (folder / "parquet").mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    centres = rng.uniform(-1, 1, size=(clusters, d))
    npy = np.lib.format.open_memmap(folder / "x.npy", mode="w+", dtype=np.float32, shape=(n, d))
    names = [f"f{j}" for j in range(d)]
    writer = None
    for start in range(0, n, ROWS_PER_GROUP):
        if start % ROWS_PER_FILE == 0:
            writer and writer.close()
            schema = pa.schema([(c, pa.float32()) for c in names])
            writer = pq.ParquetWriter(
                folder / "parquet" / f"part{start // ROWS_PER_FILE:04d}.parquet", schema
            )
        rows = min(ROWS_PER_GROUP, n - start)
        block = (
            centres[rng.integers(clusters, size=rows)] + 0.3 * rng.standard_normal((rows, d))
        ).astype(np.float32)
        writer.write_table(
            pa.table({c: block[:, j] for j, c in enumerate(names)}), row_group_size=ROWS_PER_GROUP
        )
        npy[start : start + rows] = block
    writer.close()
    npy.flush()
    del npy
    np.save(
        folder / "candidates.npy",
        centres[rng.integers(clusters, size=1000)] + 0.3 * rng.standard_normal((1000, d)),
    )
    done.write_text("ok")
    return folder


# ------------------------------------------------------------------ one path per process


def run_case(args) -> dict:
    from privevo.private import NpySource, ParquetSource, nn_histogram

    data = Path(args.data)
    C = np.load(data / "candidates.npy")[: args.m]
    source = ParquetSource(data / "parquet")
    out = {"path": args.case, "n": args.n, "load_s": 0.0, "start_s": 0.0}
    tic = time.perf_counter()
    if args.case == "memory":
        X = np.empty(source.shape, dtype=np.float32)
        start = 0
        for block in source.iter_blocks():
            X[start : start + len(block)] = block
            start += len(block)
        out["load_s"] = time.perf_counter() - tic
        tic = time.perf_counter()
        counts = nn_histogram(X, C)
    elif args.case == "parquet":
        counts = nn_histogram(source, C)
    elif args.case == "npy":
        counts = nn_histogram(NpySource(data / "x.npy"), C)
    else:
        counts, timings = _dask_case(source, C)
        out.update(timings)
    out.setdefault("count_s", time.perf_counter() - tic)
    out["driver_rss_mib"] = peak_rss_mib()
    out["rss_mib"] = out["driver_rss_mib"] + sum(out.get("worker_rss_mib", []))
    out["sha"] = hashlib.sha256(counts.astype(np.int64).tobytes()).hexdigest()[:16]
    out["total"] = int(counts.sum())
    return out


def peak_rss_mib() -> float:
    """This process's peak resident set (VmHWM). Unlike ru_maxrss it is not inherited
    from the parent through fork + exec."""
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmHWM:")) / 1024


def _dask_case(source, C):
    import logging

    import distributed

    from privevo.private import dask_session, nn_histogram

    tic = time.perf_counter()
    with (
        distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            dashboard_address=":0",
            silence_logs=logging.ERROR,
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        client.wait_for_workers(2)
        timings = {"start_s": time.perf_counter() - tic}
        with dask_session(client):
            for key in ("first_call_s", "count_s"):  # the first call warms the workers up
                tic = time.perf_counter()
                counts = nn_histogram(source, C, backend="dask")
                timings[key] = time.perf_counter() - tic
        rss = client.run(peak_rss_mib)
    return counts, {**timings, "worker_rss_mib": sorted(rss.values())}


def _in_subprocess(path: str, n: int, data: Path, args) -> dict:
    cmd = [
        sys.executable,
        __file__,
        "--case",
        path,
        "--n",
        str(n),
        "--data",
        str(data),
        "--m",
        str(args.m),
    ]
    tic = time.perf_counter()
    res = subprocess.run(
        cmd, capture_output=True, text=True, env={**os.environ, "PYTHONWARNINGS": "ignore"}
    )
    if res.returncode:
        raise RuntimeError(f"{path} n={n} failed:\n{res.stderr[-3000:]}")
    result = json.loads(res.stdout.strip().splitlines()[-1])
    result["process_s"] = time.perf_counter() - tic
    return result


# ------------------------------------------------------------------ table


def _rows(n: int, results: dict) -> list[dict]:
    ref = results.get("memory") or next(iter(results.values()))
    rows = []
    for r in results.values():
        wall = r["load_s"] + r["count_s"]
        rows.append(
            {
                **r,
                "wall_s": wall,
                "mrows_s": n / wall / 1e6,
                "vs_memory": wall / (ref["load_s"] + ref["count_s"]),
                "equal": r["sha"] == ref["sha"] and r["total"] == n,
            }
        )
    return rows


def format_table(rows: list[dict]) -> str:
    head = (
        "| n | path | read s | count s | wall s | vs memory | Mrows/s | peak RSS MiB "
        "| cluster start s | 1st call s | counts identical |"
    )
    lines = [head, "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        rss = f"{r['rss_mib']:.0f}"
        if r.get("worker_rss_mib"):
            rss += (
                " ("
                + " + ".join(f"{v:.0f}" for v in [r["driver_rss_mib"], *r["worker_rss_mib"]])
                + ")"
            )
        lines.append(
            f"| {r['n']:.0e} | {r['path']} | {r['load_s']:.1f} | {r['count_s']:.1f} | "
            f"{r['wall_s']:.1f} | "
            f"{r['vs_memory']:.2f} | {r['mrows_s']:.2f} | {rss} | {r['start_s']:.1f} | "
            f"{r.get('first_call_s', 0):.1f} | {'yes' if r['equal'] else 'NO'} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
