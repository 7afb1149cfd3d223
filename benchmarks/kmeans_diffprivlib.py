"""DPKMeans against diffprivlib's ``KMeans`` with each one's defaults, as a user compares them.

Protocol: each set is mapped from its documented public feature range
(``benchmarks/kmeans.py``'s ``RAW_BOXES``) onto [−1, 1]^d, both methods get the
public box ``bounds=(−1, 1)``, and a cell's score is the normalised loss
(DP k-means loss / non-private k-means++ loss, ``n_init=10``), averaged over
seeds. DPKMeans runs with its defaults (add/remove adjacency, δ default, the
noisy count). diffprivlib is a benchmark dependency only
(``pip install diffprivlib``).

    python benchmarks/kmeans_diffprivlib.py --sets iris digits --seeds 10

``wine`` and ``breast_cancer`` (scikit-learn's copies) have no documented
feature range: for them the box is the data's own min/max per feature, a
leak accepted here because both methods get the same box (the comparison,
not a private release, is the point). ``--methods`` runs one side and
``--save``/``--load`` keep per-seed losses in a JSON file, so the two sides
(or several runs) can be merged into one table.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.cluster import KMeans

sys.path.insert(0, str(Path(__file__).resolve().parent))
from kmeans import RAW_BOXES, datasets  # noqa: E402
from privevo import DPKMeans  # noqa: E402
from privevo.metrics import kmeans_loss  # noqa: E402

EPSILONS = (0.1, 0.5, 1.0, 2.0, 4.0)


def to_box(X_raw: np.ndarray, name: str) -> np.ndarray:
    """x ↦ 2(x − lo)/(hi − lo) − 1 with the set's public range, clipped into [−1, 1]^d."""
    lo, hi = (
        np.broadcast_to(np.asarray(b, float), (X_raw.shape[1],))
        for b in RAW_BOXES["blobs" if name.startswith("blobs") else name]
    )
    return np.clip(2 * (X_raw - lo) / (hi - lo) - 1, -1, 1)


def raw_sets(names: list[str]) -> dict[str, tuple[np.ndarray, int]]:
    """name → (X in [−1, 1]^d, k), raw data from ``benchmarks/kmeans.py``'s loaders."""
    import kmeans

    saved, kmeans.unit_ball = kmeans.unit_ball, lambda X: np.asarray(X, dtype=np.float64)
    try:
        data = datasets(quick=False)
    finally:
        kmeans.unit_ball = saved
    out = {name: (to_box(X, name), k) for name, (X, k) in data.items() if name in names}
    from sklearn.datasets import load_breast_cancer, load_wine

    for name, loader, k in (("wine", load_wine, 3), ("breast_cancer", load_breast_cancer, 2)):
        if name in names:  # no documented range: the data's own (see the module doc)
            X = loader().data
            lo, hi = X.min(axis=0), X.max(axis=0)
            out[name] = (np.clip(2 * (X - lo) / np.maximum(hi - lo, 1e-12) - 1, -1, 1), k)
    return {name: out[name] for name in names if name in out}


def diffprivlib_kmeans():
    """diffprivlib's ``KMeans``. diffprivlib 0.6.6's package import fails on scikit-learn >= 1.8
    in its forest module (``sklearn.tree._tree.DOUBLE`` is gone), which k-means does not use:
    that one module is stubbed out, nothing of the k-means code is touched."""
    import types

    stub = types.ModuleType("diffprivlib.models.forest")
    stub.RandomForestClassifier = stub.DecisionTreeClassifier = None
    sys.modules.setdefault("diffprivlib.models.forest", stub)
    from diffprivlib.models.k_means import KMeans as DiffprivlibKMeans

    return DiffprivlibKMeans


def fit_loss(method: str, X: np.ndarray, k: int, eps: float, seed: int) -> float:
    if method == "privevo":
        model = DPKMeans(k, epsilon=eps, bounds=(-1.0, 1.0), random_state=seed)
    else:
        model = diffprivlib_kmeans()(k, epsilon=eps, bounds=(-1.0, 1.0), random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X)
    return kmeans_loss(X, model.cluster_centers_)


def _mean_se(values) -> tuple[float, float]:
    a = np.asarray(values, dtype=float)
    return a.mean(), (a.std(ddof=1) / np.sqrt(len(a)) if len(a) > 1 else 0.0)


def pivot(cells: dict[str, list[float]]) -> str:
    """One row per set, one column per ε, cells "privevo / diffprivlib" (mean normalised loss),
    then the cells where privevo's mean is above diffprivlib's and privevo's steps ε → next ε
    whose mean rises by more than 2 standard errors of the difference."""
    sets, epsilons = [], []
    for key in cells:
        name, eps = key.split("|")[:2]
        sets += [name] if name not in sets else []
        epsilons += [eps] if eps not in epsilons else []
    epsilons.sort(key=float)
    lines = ["| set | " + " | ".join(f"ε = {e}" for e in epsilons) + " |"]
    lines.append("|---|" + "---|" * len(epsilons))
    worse, compared, rises = [], 0, []
    for name in sets:
        row = []
        for eps in epsilons:
            means = {
                m: _mean_se(cells[f"{name}|{eps}|{m}"])[0]
                for m in ("privevo", "diffprivlib")
                if f"{name}|{eps}|{m}" in cells
            }
            row.append(" / ".join(f"{v:.3f}" for v in means.values()) or "—")
            if len(means) == 2:
                compared += 1
                worse += [f"{name} ε = {eps}"] if means["privevo"] > means["diffprivlib"] else []
        lines.append(f"| {name} | " + " | ".join(row) + " |")
        ours = [cells.get(f"{name}|{eps}|privevo") for eps in epsilons]
        for (a, x), (b, y) in zip(zip(epsilons, ours), zip(epsilons[1:], ours[1:])):
            if x and y:
                (m1, s1), (m2, s2) = _mean_se(x), _mean_se(y)
                rises += [f"{name} {a} → {b}"] if m2 > m1 + 2 * np.hypot(s1, s2) else []
    lines.append(
        f"\ncells where privevo's mean is above diffprivlib's: {len(worse)} of {compared}"
        + (f" ({', '.join(worse)})" if worse else "")
        + "; privevo's steps ε → next ε rising by more than 2 se: "
        + (", ".join(rises) or "none")
    )
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", nargs="+", default=None, help="default: all 18")
    parser.add_argument("--epsilons", nargs="+", type=float, default=list(EPSILONS))
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--methods", nargs="+", default=["privevo", "diffprivlib"])
    parser.add_argument("--save", help="JSON file to add this run's per-seed losses to")
    parser.add_argument("--load", nargs="*", default=[], help="JSON files to merge and print")
    args = parser.parse_args(argv)
    tic = time.perf_counter()
    cells: dict[str, list[float]] = {}
    for path in args.load:
        cells.update(json.loads(Path(path).read_text()))
    if args.methods and not (args.load and args.save is None and not args.sets):
        names = args.sets or list(datasets(quick=False))
        data = raw_sets(names)
        for name, (X, k) in data.items():
            floor = kmeans_loss(X, KMeans(k, n_init=10, random_state=0).fit(X).cluster_centers_)
            for eps in args.epsilons:
                for m in args.methods:
                    losses = [fit_loss(m, X, k, eps, s) / floor for s in range(args.seeds)]
                    cells[f"{name}|{eps:g}|{m}"] = losses
                    print(f"{name} ε={eps:g} {m}: {np.mean(losses):.3f}", file=sys.stderr)
                if args.save:
                    saved = (
                        json.loads(Path(args.save).read_text()) if Path(args.save).exists() else {}
                    )
                    saved.update({key: v for key, v in cells.items() if key.startswith(name + "|")})
                    Path(args.save).write_text(json.dumps(saved))
    print(pivot(cells))
    seeds = "/".join(map(str, sorted({len(v) for v in cells.values()})))
    print(f"\nseeds per cell: {seeds}; wall {(time.perf_counter() - tic) / 60:.1f} min")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
