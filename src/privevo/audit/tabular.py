"""TabularPE's releases: one-way marginals and PE rounds on neighbouring tables."""

from __future__ import annotations

from typing import Callable

import numpy as np

from .._validation import (
    check_delta,
    check_epsilon,
    check_positive_int,
    check_random_state,
)
from ..adjacency import vote_sensitivity
from .statistics import AuditResult, audit_result, llr_statistics


def _tabular_scenario(adjacency: str):
    """A small public table D (3 columns, 40 rows), its metadata, the canary row, and D′."""
    import pandas as pd

    from ..tabular import ColumnSpec, TableMetadata

    meta = TableMetadata(
        (
            ColumnSpec("kind", "categorical", categories=("a", "b", "c")),
            ColumnSpec("size", "numeric", lower=0.0, upper=10.0, integer=True, nullable=True),
            ColumnSpec("flag", "boolean"),
        )
    )
    rng = np.random.default_rng(2026)
    D = pd.DataFrame(
        {
            "kind": rng.choice(["a", "b"], 40),
            "size": rng.integers(0, 5, 40).astype(float),
            "flag": rng.random(40) < 0.3,
        }
    )
    canary = pd.DataFrame({"kind": ["c"], "size": [np.nan], "flag": [True]})  # a rare row
    if adjacency == "add_remove":
        return meta, D, pd.concat([D, canary], ignore_index=True)
    return meta, D, pd.concat([canary, D.iloc[1:]], ignore_index=True)


def _tabular_model(epsilon: float, delta: float, adjacency: str, metadata, rng):
    """The audited TabularPE configuration: 2 rounds, 4 rows selected, 2 children each (no output
    pool: it is post-processing and does not change the releases)."""
    from ..tabular import TabularPE

    return TabularPE(
        epsilon,
        delta,
        metadata,
        iterations=2,
        n_synthetic=4,
        variations=2,
        pool=0,
        adjacency=adjacency,
        random_state=rng,
    )


def _tabular_llrs(model, D, D_prime) -> np.ndarray:
    """LLR of every release of one fit: each PE round, then the C column marginals together
    (the exact counts of D and D′ over each column's public cells, :func:`cells_of`)."""
    from ..private import reference_assign
    from ..tabular import encode_table
    from ..tabular.marginals import cells_of

    emb = model.embedding_
    C0, C1 = encode_table(D, emb.metadata), encode_table(D_prime, emb.metadata)
    pe = getattr(model, "pe_embedding_", emb)  # the rounds' space (target-weighted if set)

    def llr(y, h0, h1, sigma):
        v = h1 - h0
        return ((y - h0) @ v - 0.5 * (v @ v)) / sigma**2

    def votes(codes, candidates):
        assigned = reference_assign(pe.embed(codes), candidates)
        return np.bincount(assigned, minlength=len(candidates))

    history = model.engine_.history_
    out = [
        llr(r.noisy_counts, votes(C0, r.candidates), votes(C1, r.candidates), r.sigma)
        for r in history
    ]
    sigma_m = next(
        r["sigma"] for r in model.privacy_report_["releases"] if r["name"] == "column_marginals"
    )
    cells = cells_of(C0, emb, model.bins), cells_of(C1, emb, model.bins)

    def counts(j, size):
        return [np.bincount(c[:, j], minlength=size)[:size] for c in cells]

    out.append(
        sum(llr(y, *counts(j, len(y)), sigma_m) for j, y in enumerate(model.marginal_counts_))
    )
    return np.asarray(out)


def audit_tabular(
    epsilon: float,
    delta: float = 1e-5,
    *,
    adjacency: str = "add_remove",
    n_runs: int = 500,
    alpha: float = 0.05,
    random_state=None,
    make_model: Callable | None = None,
) -> AuditResult:
    """Audit whole :class:`~privevo.TabularPE` fits: every PE round and the 1-way marginals.

    D is a fixed 40-row, 3-column public table; D′ adds a canary row (or
    replaces D's first row by it). The auditor knows D, D′ and each round's
    public candidates, so it computes every release's log-likelihood ratio
    (as in :func:`audit_runs`); statistics: their sum (the optimal test for
    the claimed mechanism) and each release alone. ``make_model(epsilon,
    delta, adjacency, metadata, rng)`` builds an unfitted model (default: 2
    rounds, 4 rows selected); tests pass broken ones.
    """
    epsilon, delta = check_epsilon(epsilon), check_delta(delta)
    n_runs = check_positive_int(n_runs, "n_runs", minimum=4)
    vote_sensitivity(adjacency)
    metadata, D, D_prime = _tabular_scenario(adjacency)
    seeds = np.random.SeedSequence(check_random_state(random_state).integers(2**63)).spawn(
        2 * n_runs
    )
    make_model = make_model or _tabular_model
    llrs, model = [], None
    for i, data in enumerate([D] * n_runs + [D_prime] * n_runs):
        model = make_model(
            epsilon, delta, adjacency, metadata, np.random.default_rng(seeds[i])
        ).fit(data)
        llrs.append(_tabular_llrs(model, D, D_prime))
    rounds = len(llrs[0]) - 1
    releases = [f"round {t + 1}" for t in range(rounds)] + ["the marginals"]
    scores, names = llr_statistics(llrs, n_runs, releases)
    return audit_result(
        scores,
        names,
        delta=delta,
        alpha=alpha,
        steps=rounds + 1,
        setting=f"TabularPE fit ({rounds} rounds + 1-way marginals)",
        noise="gaussian",
        adjacency=adjacency,
        claimed_epsilon=float(model.privacy_report_["epsilon"]),
        sigma=float(model.engine_.sigma_),
    )
