"""One-core DPKMeans fit time at ε = 1: today's code beside an older revision's, in one run.

The older ``src/privevo/kmeans.py`` is read from git (``--rev``) and loaded
as a module of today's package (everything else is today's), so only
DPKMeans' own code differs. Fits alternate between the two (old, new, old,
new, ...) so that load from other processes falls on both alike; the table
gives the median seconds per fit and their ratio. Sets: blobs(k=16, d=16)
in the unit ball (the paper's preprocessing) and letter on its [−1, 1]^16
box (``benchmarks/kmeans_diffprivlib.py``'s protocol), DPKMeans' defaults.

    OMP_NUM_THREADS=1 python benchmarks/kmeans_fit_time.py --rev 3a16737 --repeats 5
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.datasets import make_blobs

sys.path.insert(0, str(Path(__file__).resolve().parent))
import privevo  # noqa: E402
from kmeans import unit_ball  # noqa: E402
from kmeans_diffprivlib import raw_sets  # noqa: E402
from privevo import DPKMeans  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def old_dpkmeans(rev: str):
    """DPKMeans from ``src/privevo/kmeans.py`` at git revision ``rev``."""
    source = subprocess.run(
        ["git", "show", f"{rev}:src/privevo/kmeans.py"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    path = Path(privevo.__file__).with_name("kmeans.py")
    spec = importlib.util.spec_from_loader("privevo._kmeans_rev", loader=None, origin=str(path))
    module = importlib.util.module_from_spec(spec)
    module.__package__ = "privevo"
    sys.modules[spec.name] = module
    exec(compile(source, f"{rev}:src/privevo/kmeans.py", "exec"), module.__dict__)
    return module.DPKMeans


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rev", default="HEAD", help="git revision of the old kmeans.py")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    blobs = make_blobs(n_samples=20000, n_features=16, centers=16, random_state=1)[0]
    sets = {
        "blobs k=16 d=16": (unit_ball(blobs), 16, {"radius": 1.0}),
        "letter": (*raw_sets(["letter"])["letter"], {"bounds": (-1.0, 1.0)}),
    }
    classes = {"old": old_dpkmeans(args.rev), "new": DPKMeans}
    print(f"| set | {args.rev} (s) | today (s) | ratio |\n|---|---|---|---|")
    for name, (X, k, domain) in sets.items():
        seconds = {"old": [], "new": []}
        for r in range(args.repeats):
            for which, cls in classes.items():
                model = cls(k, epsilon=1.0, random_state=r, **domain)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    tic = time.perf_counter()
                    model.fit(X)
                    seconds[which].append(time.perf_counter() - tic)
        old, new = np.median(seconds["old"]), np.median(seconds["new"])
        print(f"| {name} | {old:.2f} | {new:.2f} | {new / old:.2f} |", flush=True)
    print(f"\nmedian of {args.repeats} alternating fits each, one thread")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
