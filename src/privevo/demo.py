"""The built-in demo: a PE run on bundled data, printed as a small table."""

from __future__ import annotations

import time

import numpy as np


def mixture_2d(n: int = 2000, rng: np.random.Generator | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The GAPE paper's 2-D check: 0.9·N([−1,0], 0.1²I) + 0.1·N([1,0], 0.1²I); returns (X, centres)."""
    rng = rng or np.random.default_rng(0)
    centers = np.array([[-1.0, 0.0], [1.0, 0.0]])
    label = (rng.random(n) < 0.1).astype(int)
    return centers[label] + 0.1 * rng.standard_normal((n, 2)), centers


def run_demo(seed: int = 0, epsilon: float = 4.0) -> list[dict]:
    """Rank vs subsample selection on the 2-D mixture: is the small cluster kept?"""
    from . import PrivateEvolution, metrics
    from .selection import Rank, Subsample
    from .variation import GaussianVariation

    X, centers = mixture_2d(rng=np.random.default_rng(seed))
    rows = []
    for selector in (Rank(), Subsample()):
        start = np.array([[0.0, -2.0], [0.0, 0.0], [0.0, 2.0]])
        tic = time.perf_counter()
        pe = PrivateEvolution(start, GaussianVariation(0.1, 2), selector, 3, 20, epsilon, 1e-5, random_state=seed).fit(X)
        rows.append(
            {
                "data": "2-D mixture 90/10",
                "method": f"PE, {selector!r}",
                "epsilon": pe.privacy_report_["epsilon"],
                "clusters covered": metrics.cluster_coverage(centers, pe.synthetic_, 0.3),
                "W1": metrics.exact_w1(X, pe.synthetic_),
                "seconds": time.perf_counter() - tic,
            }
        )
    return rows


def format_table(rows: list[dict]) -> str:
    """Rows of dicts as an aligned text table."""
    if not rows:
        return ""
    keys = list(rows[0])
    cells = [[_fmt(r.get(k, "")) for k in keys] for r in rows]
    widths = [max(len(k), *(len(c[i]) for c in cells)) for i, k in enumerate(keys)]
    line = lambda vals: "  ".join(v.ljust(w) for v, w in zip(vals, widths))
    return "\n".join([line(keys), line(["-" * w for w in widths]), *map(line, cells)])


def _fmt(value) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)
