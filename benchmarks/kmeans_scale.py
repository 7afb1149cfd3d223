"""DPKMeans on data larger than memory: a Parquet folder of 10⁶ and 10⁷ rows × 16 columns.

For each n, a blob mixture (as in the PE-means paper: k centres uniform in [−1, 1]^d, each row
a centre plus N(0, 0.1²) noise, seeded) is written once to a Parquet folder under ``--out``
(10⁶ rows per file, row groups of 10⁵). Each fit (ε = 1, δ = 10⁻⁸, the public box
[−1.5, 1.5]^d, seed 0) runs in a fresh process, so its peak RSS (``ru_maxrss``, interpreter
and imports included) is its own:

* ``parquet`` — ``DPKMeans.fit(folder)``: every release counted block by block, the mapped
  row groups kept in memory up to ``cache_mib`` (256 MiB by default), the others read again on
  every pass (docs/kmeans.md, "Data larger than memory");
* ``parquet, no cache`` (at ``--check-rows`` only) — the same with ``cache_mib=0``: one row
  group in memory at a time, every pass reads and maps the folder again;
* ``memory`` (at ``--check-rows`` only) — the folder read into one array, then fitted;
* ``dask`` (at ``--check-rows`` only) — ``dask.dataframe.read_parquet(folder)`` on a local
  cluster of 2 worker processes (the histograms on the workers, the sums read partition by
  partition on the driver; the RSS column is the driver's).

The centres and the privacy reports (without the timestamp) are compared byte for byte (by
their SHA-256) with the parquet fit's. With ``--repeats R`` the fits at ``--check-rows`` run R
times (the Dask fit once), the modes interleaved (so a change in the machine's load touches
every mode alike); the table shows the fastest of the R wall times and the largest peak RSS,
and every repeat must give the same centres and report.

    python benchmarks/kmeans_scale.py --sizes 1e6 1e7 --check-rows 1e6 --repeats 3
"""

from __future__ import annotations

import argparse
import hashlib
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROWS_PER_GROUP = 100_000
ROWS_PER_FILE = 1_000_000
BOX = 1.5  # the public box [−BOX, BOX]^d holds every centre ± 5 σ
DELTA = 1e-8  # below n^−1.1 at 10⁷ rows (the default 1e-6 is refused there)
NO_CACHE = "parquet, no cache"


def write_folder(n: int, d: int, k: int, out: Path) -> Path:
    """The blob mixture of n rows as a Parquet folder (written once, then reused)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = out / f"blobs_n{n}_d{d}_k{k}"
    if (folder / ".done").exists():
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(12345)
    centres = rng.uniform(-1, 1, (k, d))
    names = [f"x{j}" for j in range(d)]
    for i, start in enumerate(range(0, n, ROWS_PER_FILE)):
        rows = min(ROWS_PER_FILE, n - start)
        X = centres[rng.integers(0, k, rows)] + rng.normal(0, 0.1, (rows, d))
        table = pa.table({name: X[:, j] for j, name in enumerate(names)})
        pq.write_table(table, folder / f"part-{i:04d}.parquet", row_group_size=ROWS_PER_GROUP)
    (folder / ".done").write_text("")
    return folder


def fit_once(mode: str, folder: str, d: int, k: int) -> dict:
    """One fit in this process: wall seconds, peak RSS, digests of the centres and report."""
    import warnings

    from privevo import DPKMeans

    warnings.simplefilter("ignore")
    names = [f"x{j}" for j in range(d)]
    model = DPKMeans(k, epsilon=1.0, delta=DELTA, bounds=(-BOX, BOX), random_state=0)
    if mode == NO_CACHE:
        model.set_params(cache_mib=0)
    if mode == "memory":
        from privevo.private import ParquetSource

        X = np.asarray(ParquetSource(folder, columns=names), dtype=np.float64)
        tic = time.perf_counter()
        model.fit(X)
    elif mode == "dask":
        import dask.dataframe as dd

        from privevo.private import dask_session

        with dask_session(n_workers=2, threads_per_worker=1):
            frame = dd.read_parquet(folder, columns=names)
            tic = time.perf_counter()
            model.set_params(backend="dask").fit(frame)
    else:
        tic = time.perf_counter()
        model.fit(folder, columns=names)
    seconds = time.perf_counter() - tic
    report = {k: v for k, v in model.privacy_report_.items() if k != "timestamp"}
    return {
        "seconds": seconds,
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "centres": hashlib.sha256(model.cluster_centers_.tobytes()).hexdigest()[:16],
        "report": hashlib.sha256(
            json.dumps(report, sort_keys=True, default=str).encode()
        ).hexdigest()[:16],
    }


def run_fit(mode: str, folder: Path, d: int, k: int) -> dict:
    """``fit_once`` in a fresh interpreter (its own peak RSS)."""
    cmd = [sys.executable, __file__, "--fit", mode, str(folder), "--d", str(d), "--k", str(k)]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{mode} fit failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sizes", type=float, nargs="+", default=[1e6, 1e7])
    p.add_argument("--check-rows", type=float, default=1e6, help="n of the memory/Dask checks")
    p.add_argument("--repeats", type=int, default=1, help="interleaved runs at --check-rows")
    p.add_argument("--d", type=int, default=16)
    p.add_argument("--k", type=int, default=4)
    p.add_argument("--out", type=Path, default=Path("/tmp/privevo_kmeans_scale"))
    p.add_argument("--fit", nargs=2, metavar=("MODE", "FOLDER"), help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.fit:
        print(json.dumps(fit_once(args.fit[0], args.fit[1], args.d, args.k)))
        return
    print("| n | d | k | fit | seconds | peak RSS (MiB) | centres and report |")
    print("|---|---|---|---|---|---|---|")
    for n in map(int, args.sizes):
        folder = write_folder(n, args.d, args.k, args.out)
        check = n == int(args.check_rows)
        modes = ["parquet"] + ([NO_CACHE, "memory", "dask"] if check else [])
        runs = {mode: [] for mode in modes}
        for repeat in range(args.repeats if check else 1):
            for mode in modes if repeat == 0 else modes[:-1]:  # the slow Dask fit once
                runs[mode].append(run_fit(mode, folder, args.d, args.k))
        first = (runs["parquet"][0]["centres"], runs["parquet"][0]["report"])
        for mode in modes:
            same = all((r["centres"], r["report"]) == first for r in runs[mode])
            label = "the reference" if mode == modes[0] else "identical"
            seconds = min(r["seconds"] for r in runs[mode])
            rss = max(r["peak_rss_mib"] for r in runs[mode])
            print(
                f"| {n:.0e} | {args.d} | {args.k} | {mode} | {seconds:.1f} | {rss:.0f} | "
                f"{label if same else 'DIFFERENT'} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
