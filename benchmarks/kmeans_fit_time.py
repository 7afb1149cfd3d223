"""One-core DPKMeans fit time at ε = 1: today's code beside an older revision's, in one run.

The older revision's whole package is read from git (``--rev``) and imported
beside today's under another name (its compiled kernel is today's build, whose
C source must be unchanged since), so each side runs its own code. Fits
alternate between the two (old, new, old, new, ...) so that load from other
processes falls on both alike; the table gives the median seconds per fit and
their ratio. Sets: blobs(k=16, d=16)
in the unit ball (the paper's preprocessing) and letter on its [−1, 1]^16
box (``benchmarks/kmeans_diffprivlib.py``'s protocol), DPKMeans' defaults.

    OMP_NUM_THREADS=1 python benchmarks/kmeans_fit_time.py --rev 3a16737 --repeats 5
"""

from __future__ import annotations

import argparse
import atexit
import importlib
import io
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
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
    """DPKMeans of the package at git revision ``rev``, imported as ``privevo_<rev>``."""
    git = dict(cwd=ROOT, check=True, capture_output=True)
    if subprocess.run(
        ["git", "diff", "--quiet", rev, "--", "src/privevo/_ext"], cwd=ROOT
    ).returncode:
        raise SystemExit(
            f"the compiled kernel's source changed since {rev}: build it there instead"
        )
    archive = subprocess.run(["git", "archive", rev, "src/privevo"], **git).stdout
    root = Path(tempfile.mkdtemp(prefix="kmeans_fit_time_"))
    atexit.register(shutil.rmtree, root, True)
    tarfile.open(fileobj=io.BytesIO(archive)).extractall(root, filter="data")
    name = "privevo_" + re.sub(r"\W", "_", rev)
    package = (root / "src" / "privevo").rename(root / name)
    for built in Path(privevo.__file__).parent.glob("*.so"):
        shutil.copy(built, package)
    sys.path.insert(0, str(root))
    return importlib.import_module(f"{name}.kmeans").DPKMeans


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
