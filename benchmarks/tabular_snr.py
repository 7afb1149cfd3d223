"""How well ε resolves each declared relation of a table's outcome ("When ε is enough").

    python benchmarks/tabular_snr.py --tables hmda creditcard credit_data --epsilons 1 4

For each rate relation of ``data/<table>.relations`` (its outcome's rate in the real rows'
highest- and lowest-rate group), with the target declared: σ_t, the noise of one cell of
the target's 2-way tables under TabularPE's plan (public: ε, δ, the metadata's ``n_rows``
and columns; :func:`privevo.tabular.plan.make_plan`), and the gap's signal-to-noise

    z = |r_hi − r_lo| / √(se_hi² + se_lo²),   se_g = σ_t·√(r_g² + (1 − r_g)²) / n_g,

the standard error of a rate y/(y + x) whose two cells y and x each carry noise σ_t
(first order; a numeric's quartile sums about 2.5 of its 10 pair cells: σ_t·√2.5).
z ≥ 2 keeps the gap's sign in about 98 % of runs of an unbiased estimate;
z ≈ 1 in about 84 %. The groups' sizes and rates come from the private split (evaluation
only: nothing here reaches a fit).
"""

from __future__ import annotations

import argparse
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import tabular_data  # noqa: E402
import tabular_relations as relations  # noqa: E402
from privevo import TabularPE  # noqa: E402
from privevo._params import constructor_params  # noqa: E402
from privevo.tabular.plan import make_plan  # noqa: E402

PAIR_BINS = 10  # TabularPE's pair_bins: a numeric's quartile sums about 2.5 of its cells


def target_sigma(meta, target: str, epsilon: float, delta: float) -> float:
    """σ_t of the plan's ``target_marginals`` release (public inputs only)."""
    params = constructor_params(TabularPE(epsilon, delta, meta, target=target))
    plan = make_plan(params, meta, delta)
    return plan.sigma(plan.shares["target_pairs"], len(meta.columns) - 1)


def gap_z(train, spec, kind: str, col: str, sigma: float) -> tuple[float, float, int, int]:
    """(real gap, z, rows of the high- and low-rate groups) of one rate relation."""
    cuts = relations.quartile_cuts(train[col]) if kind == "quartiles" else None
    y, g = relations.event(train, spec["outcome"]), relations.groups(train, kind, col, cuts)
    size, rate = y.groupby(g).count(), y.groupby(g).mean()
    rate = rate[size >= relations.MIN_GROUP]
    hi, lo = rate.idxmax(), rate.idxmin()

    spread = math.sqrt(PAIR_BINS / 4) if kind == "quartiles" else 1.0  # cells in a quartile

    def se(k) -> float:
        return spread * sigma * math.hypot(rate[k], 1 - rate[k]) / size[k]

    gap = float(rate[hi] - rate[lo])
    return gap, gap / math.hypot(se(hi), se(lo)), int(size[hi]), int(size[lo])


def main() -> None:
    from tabular import split

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tables", nargs="+", default=["hmda", "creditcard", "credit_data"])
    p.add_argument("--epsilons", nargs="+", type=float, default=[1.0])
    args = p.parse_args()
    print("| table | ε | σ_t | relation | real gap | rows (high, low) | z |")
    print("|---|---|---|---|---|---|---|")
    for table in args.tables:
        df, meta, target = tabular_data.load(table)
        train, _ = split(df)
        delta = 1.0 / (len(train) * math.log(len(train)))
        spec = relations.load(table)
        for eps in args.epsilons:
            sigma = target_sigma(meta, target, eps, delta)
            for kind, col in spec["rates"]:
                gap, z, n_hi, n_lo = gap_z(train, spec, kind, col, sigma)
                name = f"{target} by {col}" + (" quartile" if kind == "quartiles" else "")
                print(
                    f"| {table} | {eps:g} | {sigma:.1f} | {name} | {gap:.3f} |"
                    f" {n_hi}, {n_lo} | {z:.1f} |"
                )


if __name__ == "__main__":
    main()
