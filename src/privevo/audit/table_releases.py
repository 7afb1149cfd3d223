"""TabularPE's release families, one release at a time, on a public table D and its neighbour D′.

Each family is one call of the real release function of :mod:`privevo.private` on the
cells TabularPE's public maps give the rows (:mod:`privevo.tabular.marginals`,
:mod:`~privevo.tabular.fine`, :mod:`~privevo.tabular.pairs`):

* ``"marginals"`` — the C 1-way marginals (:func:`~privevo.private.noisy_cell_counts`);
* ``"tree levels"`` — every refinement level of every numeric column (the same function);
* ``"pair scores"`` — the dependence score of every pair
  (:func:`~privevo.private.noisy_dependence_scores`, sensitivity 1, or 2 under replace);
* ``"pair tables"`` — the 2-way tables of a spanning tree of pairs (``noisy_cell_counts``);
* ``"target tables"`` — a declared target's (here the first column's) 2-way table with every
  other column (``noisy_cell_counts``, as ``"target_marginals"``);
* ``"votes"`` — one PE round's vote histogram of the embedded rows
  (:func:`~privevo.private.noisy_nn_histogram`).

σ is calibrated as TabularPE calibrates it (:func:`privevo.accounting.share_sigma`, the
whole budget on this one release); the claim is the ε of the release's own ledger entry
(σ, sensitivity, count: what the report composes). The auditor counts D's and D′'s cells
itself (h, h′), so it knows the canary's effect v = h′ − h of every part (a histogram or
a score); statistics: the sum of the parts' log-likelihood ratios
((y − h)·v − ‖v‖²/2)/σ² (the optimal test of the claimed mechanism) and each part's
alone (it catches one part released with too little noise).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from .. import accounting
from ..adjacency import vote_sensitivity
from .scenarios import _claimed_epsilon, _single_release_arguments
from .statistics import AuditResult, audit_result, llr_statistics

TABLE_FAMILIES = (
    "marginals",
    "tree levels",
    "pair scores",
    "pair tables",
    "target tables",
    "votes",
)
BINS, LEVELS, PAIR_BINS = 10, 2, 3  # 1-way bins, refinement levels, bins of a numeric in pairs
_N_PUBLIC = 40  # the public row count of the pair scores' expected tables


@dataclass(frozen=True)
class TableScenario:
    """Public metadata and the codes of D and D′ (the canary added, or replacing D's first row)."""

    metadata: object
    codes: np.ndarray
    codes_prime: np.ndarray
    candidates: np.ndarray  # codes of the public candidate rows of the "votes" family


def table_scenario(adjacency: str = "add_remove") -> TableScenario:
    """A fixed public table: 40 rows, a categorical, a real and a nullable integer numeric, a
    boolean; the canary is a row of none of D's cells (kind "c", amount 97.3, size 9, flag
    True), and D's first row (a, 10, 1, False) sits in dense cells, so that every part moves by
    its full sensitivity (replace included: it leaves an over-filled pair cell, the canary
    enters an empty one)."""
    import pandas as pd

    from ..tabular import ColumnSpec, TableMetadata, encode_table

    vote_sensitivity(adjacency)
    meta = TableMetadata(
        (
            ColumnSpec("kind", "categorical", categories=("a", "b", "c")),
            ColumnSpec("amount", "numeric", lower=0.0, upper=100.0),
            ColumnSpec("size", "numeric", lower=0.0, upper=10.0, integer=True, nullable=True),
            ColumnSpec("flag", "boolean"),
        )
    )
    rng = np.random.default_rng(2026)
    b = np.arange(40) >= 30  # 30 rows of kind "a", then 10 of kind "b"
    D = pd.DataFrame(
        {
            "kind": np.where(b, "b", "a"),
            "amount": np.where(b, rng.uniform(35, 60, 40), rng.uniform(5, 30, 40)).round(1),
            "size": np.where(b, rng.integers(1, 5, 40), rng.integers(0, 4, 40)).astype(float),
            "flag": rng.random(40) < np.where(b, 0.5, 0.1),
        }
    )
    D.loc[0] = ["a", 10.0, 1.0, False]
    D.loc[[7, 35], "size"] = np.nan
    canary = pd.DataFrame({"kind": ["c"], "amount": [97.3], "size": [9.0], "flag": [True]})
    D_prime = (
        pd.concat([D, canary], ignore_index=True)
        if adjacency == "add_remove"
        else pd.concat([canary, D.iloc[1:]], ignore_index=True)
    )
    candidates = pd.DataFrame(
        {
            "kind": ["c", "a", "a", "b", "b", "a"],
            "amount": [97.0, 10.0, 25.0, 50.0, 40.0, 60.0],
            "size": [9.0, 1.0, 3.0, 2.0, np.nan, 8.0],
            "flag": [True, False, False, True, False, True],
        }
    )
    codes = [encode_table(x, meta) for x in (D, D_prime, candidates)]
    return TableScenario(meta, *codes)


@dataclass(frozen=True)
class _Family:
    """One release family on a scenario: how to release, and the auditor's own exact parts."""

    names: list  # one per part
    sensitivity: float  # of each part, as TabularPE calibrates it
    default: Callable  # the real release function
    prepare: Callable  # codes → the release's private input (cells, or embedded rows)
    release: Callable  # (release function, input, σ, rng) → Release
    exact: Callable  # input → list of parts (arrays), counted by the auditor
    parts: Callable  # a Release's value → list of parts


def _counts(cells: np.ndarray, sizes) -> list:
    """The auditor's exact cell counts of every histogram (−1: no cell)."""
    return [np.bincount(c[c >= 0], minlength=s)[:s].astype(float) for c, s in zip(cells.T, sizes)]


def _cell_family(name, names, cells: Callable, sizes, adjacency: str) -> _Family:
    from ..private import noisy_cell_counts

    return _Family(
        names,
        vote_sensitivity(adjacency),
        noisy_cell_counts,
        cells,
        lambda fn, x, sigma, rng: fn(name, x, sizes, sigma, rng, adjacency),
        lambda x: _counts(x, sizes),
        list,
    )


def _marginals(sc: TableScenario, adjacency: str) -> _Family:
    from ..tabular import TableEmbedding
    from ..tabular.marginals import cell_candidates, cells_of

    emb, columns = TableEmbedding(sc.metadata), sc.metadata.columns
    sizes = [len(cell_candidates(spec, BINS)) for spec in columns]
    return _cell_family(
        "column_marginals",
        [spec.name for spec in columns],
        lambda codes: cells_of(codes, emb, BINS),
        sizes,
        adjacency,
    )


def _tree_levels(sc: TableScenario, adjacency: str) -> _Family:
    from ..tabular.fine import BRANCHING, level_cells, tree_levels

    plan = [
        (j, spec, level)
        for j, spec in enumerate(sc.metadata.columns)
        for level in range(1, tree_levels(spec, BINS, LEVELS) + 1)
    ]
    sizes = [BINS * BRANCHING**level for _, _, level in plan]

    def cells(codes):
        return np.column_stack(
            [level_cells(codes[:, j], spec, size) for (j, spec, _), size in zip(plan, sizes)]
        )

    names = [f"{spec.name} level {level}" for _, spec, level in plan]
    return _cell_family("numeric_refinements", names, cells, sizes, adjacency)


def _pair_cells(sc: TableScenario):
    """TabularPE's pair cells here: codes, or ``PAIR_BINS`` equal-width bins (+ missing)."""
    from ..tabular import TableEmbedding
    from ..tabular.marginals import cell_candidates, cells_of

    emb = TableEmbedding(sc.metadata)
    sizes = [len(cell_candidates(spec, PAIR_BINS)) for spec in sc.metadata.columns]
    return (lambda codes: cells_of(codes, emb, PAIR_BINS)), sizes


def _pair_tables(sc: TableScenario, adjacency: str, target: bool = False) -> _Family:
    cells, sizes = _pair_cells(sc)
    names = sc.metadata.names
    edges = [(j, j + 1) for j in range(len(sizes) - 1)]  # a spanning tree: the C − 1 tables
    if target:  # the first column's star: also C − 1 tables
        edges = [(0, j) for j in range(1, len(sizes))]

    def joint(codes):
        c = cells(codes)
        return np.column_stack([c[:, a] * sizes[b] + c[:, b] for a, b in edges])

    return _cell_family(
        "target_marginals" if target else "pair_marginals",
        [f"{names[a]} × {names[b]}" for a, b in edges],
        joint,
        [sizes[a] * sizes[b] for a, b in edges],
        adjacency,
    )


def _pair_scores(sc: TableScenario, adjacency: str) -> _Family:
    """L1 distance of each pair's joint counts from a public expected table: here the public
    row count spread uniformly, in integers (as the release rounds it), each cell ≥ 1."""
    from ..private import noisy_dependence_scores
    from ..tabular.pairs import all_pairs

    cells, sizes = _pair_cells(sc)
    pairs = all_pairs(len(sizes))
    expected = [
        np.full((sizes[a], sizes[b]), max(1.0, np.rint(_N_PUBLIC / (sizes[a] * sizes[b]))))
        for a, b in pairs
    ]

    def exact(c):
        out = []
        for (a, b), e in zip(pairs, expected):
            joint = np.zeros(e.shape)
            np.add.at(joint, (c[:, a], c[:, b]), 1.0)
            out.append(np.array([np.abs(joint - e).sum()]))
        return out

    names = sc.metadata.names
    return _Family(
        [f"score {names[a]} × {names[b]}" for a, b in pairs],
        vote_sensitivity(adjacency) ** 2,  # 1 → 2: a replaced row leaves one cell, enters another
        noisy_dependence_scores,
        cells,
        lambda fn, x, sigma, rng: fn(
            "pair_scores", x, sizes, pairs, expected, sigma, rng, adjacency
        ),
        exact,
        lambda value: [np.array([s]) for s in np.asarray(value)],
    )


def _votes(sc: TableScenario, adjacency: str) -> _Family:
    from ..private import noisy_nn_histogram, reference_assign
    from ..tabular import TableEmbedding

    emb = TableEmbedding(sc.metadata)
    cands = emb.embed(sc.candidates)

    def exact(x):
        return [np.bincount(reference_assign(x, cands), minlength=len(cands)).astype(float)]

    return _Family(
        ["votes"],
        vote_sensitivity(adjacency),
        noisy_nn_histogram,
        emb.embed,
        lambda fn, x, sigma, rng: fn(x, cands, sigma, rng, adjacency=adjacency),
        exact,
        lambda value: [np.asarray(value)],
    )


_FAMILIES = {
    "marginals": _marginals,
    "tree levels": _tree_levels,
    "pair scores": _pair_scores,
    "pair tables": _pair_tables,
    "target tables": lambda sc, adjacency: _pair_tables(sc, adjacency, target=True),
    "votes": _votes,
}


def audit_table_release(
    family: str,
    epsilon: float,
    delta: float = 1e-5,
    *,
    adjacency: str = "add_remove",
    n_releases: int = 20_000,
    alpha: float = 0.05,
    random_state=None,
    release: Callable | None = None,
) -> AuditResult:
    """Audit one release of a TabularPE family (:data:`TABLE_FAMILIES`) with σ for (ε, δ).

    The real release function is called ``n_releases`` times on D and as many on
    D′ (:func:`table_scenario`); ``release`` (same signature: ``noisy_cell_counts``,
    ``noisy_dependence_scores`` or ``noisy_nn_histogram``) replaces it — tests pass
    broken ones. The claimed ε is that of the release's ledger entry.
    """
    if family not in _FAMILIES:
        raise ValueError(f"family must be one of {list(TABLE_FAMILIES)}, got {family!r}")
    epsilon, delta, n_releases, rng = _single_release_arguments(
        epsilon, delta, n_releases, random_state
    )
    sc = table_scenario(adjacency)
    fam = _FAMILIES[family](sc, adjacency)
    budget = accounting.quadratic_budget(epsilon, delta)
    sigma = accounting.share_sigma(budget, 1.0, fam.sensitivity, len(fam.names))
    x0, x1 = fam.prepare(sc.codes), fam.prepare(sc.codes_prime)
    h0 = fam.exact(x0)
    v = [h1 - h for h, h1 in zip(h0, fam.exact(x1))]
    watched = [np.flatnonzero(vk) for vk in v]  # the LLR depends on these cells only
    fn, ledger, observed = release or fam.default, None, []
    for x in [x0] * n_releases + [x1] * n_releases:
        ledger = fam.release(fn, x, sigma, rng)
        observed.append(np.concatenate([y[w] for y, w in zip(fam.parts(ledger.value), watched)]))
    llrs = _part_llrs(np.asarray(observed, dtype=float), h0, v, watched, sigma)
    scores, names = llr_statistics(llrs, n_releases, fam.names)
    return audit_result(
        scores,
        names,
        delta=delta,
        alpha=alpha,
        setting=f"TabularPE {family} (one release)",
        noise=ledger.noise,
        adjacency=adjacency,
        claimed_epsilon=_claimed_epsilon(
            ledger.sigma, delta, ledger.count, ledger.sensitivity, ledger.noise
        ),
        sigma=sigma,
    )


def _part_llrs(observed: np.ndarray, h0: list, v: list, watched: list, sigma: float) -> np.ndarray:
    """Each part's log p(y | h + v)/p(y | h) under Gaussian noise σ, ((y − h)·v − ‖v‖²/2)/σ²,
    from ``observed`` (one row per release: every part's watched cells, concatenated)."""
    out, start = [], 0
    for h, vk, w in zip(h0, v, watched):
        y = observed[:, start : start + len(w)]
        out.append(((y - h[w]) @ vk[w] - 0.5 * (vk @ vk)) / sigma**2)
        start += len(w)
    return np.column_stack(out)


def audit_marginal_choice(
    epsilon: float,
    delta: float = 1e-5,
    *,
    adjacency: str = "add_remove",
    n_releases: int = 20_000,
    alpha: float = 0.05,
    random_state=None,
    release: Callable | None = None,
) -> AuditResult:
    """Audit one adaptive choice of TabularPE (``pair_selection="adaptive"``): the real
    :func:`~privevo.private.exponential_choice` over every pair and triple of the scenario's
    pair cells, its scale calibrated as TabularPE does (zCDP: ε_c²/8 = ρ(ε, δ), the whole budget
    on this one choice), called ``n_releases`` times on D and on D′. The auditor computes both
    tables' qualities itself, so the statistic is the optimal test of the claimed mechanism:
    log P_D′(r)/P_D(r) of the chosen clique r. ``release`` (same signature) replaces it — tests
    pass broken ones. The claim is the ε of the release's ledger entry (its ρ at δ)."""
    from ..adjacency import histogram_l1_sensitivity
    from ..private import exponential_choice
    from ..tabular.adaptive import candidates, clique_cells

    epsilon, delta, n_releases, rng = _single_release_arguments(
        epsilon, delta, n_releases, random_state
    )
    sc = table_scenario(adjacency)
    cells, sizes = _pair_cells(sc)
    cliques = candidates(sizes)
    x0, x1 = cells(sc.codes), cells(sc.codes_prime)

    def counts(x, clique):
        size = int(np.prod([sizes[j] for j in clique]))
        return np.bincount(clique_cells(x, clique, sizes), minlength=size).astype(float)

    # public estimates (fixed inputs of the audit): D's own tables for half the cliques, D′'s for
    # the other half, so the canary moves half the qualities up by Δ and half down by Δ — the
    # exponential mechanism's worst case (a shift shared by every quality changes nothing)
    estimates = [counts(x0 if k % 2 == 0 else x1, c) for k, c in enumerate(cliques)]
    penalties = [0.0] * len(cliques)

    def quality(x):
        return np.array([np.abs(counts(x, c) - e).sum() for c, e in zip(cliques, estimates)])

    sensitivity = histogram_l1_sensitivity(adjacency)
    budget = accounting.quadratic_budget(epsilon, delta, "discrete_gaussian")  # zCDP's 2ρ
    choice_epsilon = 2 * sensitivity / accounting.share_sigma(budget, 1.0, sensitivity)
    logs = [_log_softmax(choice_epsilon * quality(x) / (2 * sensitivity)) for x in (x0, x1)]
    fn, ledger, llrs = release or exponential_choice, None, []
    for x in [x0] * n_releases + [x1] * n_releases:
        ledger = fn(
            "marginal_choices",
            x,
            sizes,
            cliques,
            estimates,
            penalties,
            choice_epsilon,
            rng,
            adjacency,
        )
        llrs.append([logs[1][ledger.value] - logs[0][ledger.value]])
    scores, names = llr_statistics(llrs, n_releases, ["the choice"])
    return audit_result(
        scores,
        names,
        delta=delta,
        alpha=alpha,
        setting="TabularPE marginal choice (one release)",
        noise=ledger.noise,
        adjacency=adjacency,
        claimed_epsilon=accounting.epsilon_of_rho(ledger.rho, delta),
        sigma=ledger.sigma,
    )


def _log_softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max()
    return z - np.log(np.exp(z).sum())
