"""TabularPE's measurements: the three release families besides the PE rounds' votes.

Each family counts the private codes block by block through :mod:`privevo.private` (the only
code that reads private rows and draws noise) with the σ its :class:`~.plan.Plan` share gives;
everything built on the noisy counts is post-processing (docs/tabular.md):

- :func:`measure_marginals` — the C noisy 1-way marginals (:mod:`.marginals`);
- :func:`measure_fine` — the numeric columns' noisy tree levels (:mod:`.fine`);
- :func:`measure_pairs` — noisy pair scores, their maximum spanning tree and its noisy 2-way
  tables, and the tree model of them (:mod:`.pairs`).

:func:`pool_constraints` turns the finer measurements into the (cells, target) pairs the
output pool is raked to.
"""

from __future__ import annotations

import math

import numpy as np

from .. import accounting
from .adaptive import CliqueModel, adaptive_model, candidates, clique_cells, penalty
from .encoding import TableEmbedding, per_block
from .fine import BRANCHING, FineColumn, level_cells, tree_levels
from .marginals import noisy_marginals, probabilities
from .metadata import TableMetadata
from .pairs import PairBinning, TargetTreeModel, TreeModel, all_pairs, spanning_tree
from .plan import Plan

__all__ = [
    "measure_marginals",
    "checked_delta",
    "measure_fine",
    "measure_pairs",
    "pool_constraints",
    "signal_to_noise",
]


def measure_marginals(codes, embedding: TableEmbedding, plan: Plan, rng) -> dict | None:
    """Noisy 1-way marginals with the plan's marginal share (None if not measured)."""
    if not plan.measured:
        return None
    sigma = plan.marginal_sigma(len(embedding.metadata.columns))
    release = noisy_marginals(codes, embedding, plan.bins, sigma, rng, plan.adjacency, plan.noise)
    noisy = release.value
    return {"targets": [probabilities(h) for h in noisy], "release": release, "noisy": noisy}


def checked_delta(delta: float, marginals: dict | None, accountant=None) -> float:
    """A defaulted δ checked against the marginals' noisy row count (each column's noisy
    total, averaged over the C columns: noise sd σ_m·√cells/C) and refused when too large
    (:func:`privevo.accounting.check_default_delta`; the marginals are charged to the
    accountant). Without marginals the engine checks its first round instead."""
    if marginals is None:
        return delta
    totals = [float(h.sum()) for h in marginals["noisy"]]
    cells = sum(len(h) for h in marginals["noisy"])
    sd = marginals["release"].sigma * math.sqrt(cells) / len(totals)
    try:
        accounting.check_default_delta(delta, float(np.mean(totals)), sd)
    except ValueError:
        if accountant is not None:
            accountant.charge([marginals["release"]], name="TabularPE")
        raise
    return float(delta)


def measure_fine(codes, metadata: TableMetadata, marginals, plan: Plan, rng) -> dict | None:
    """Every numeric column's leaf distribution (:mod:`.fine`): its coarse marginal, refined
    by the noisy tree levels when the refinements have a share. None without marginals."""
    if marginals is None:
        return None
    from ..private import noisy_cell_counts

    bins = plan.bins
    numeric = [(j, s) for j, s in enumerate(metadata.columns) if s.is_numeric]
    depth = {s.name: tree_levels(s, bins, plan.levels) for _, s in numeric}
    if plan.shares["refinements"] == 0:
        depth = dict.fromkeys(depth, 0)
    levels = [  # (column, spec, cells of the level), every refinement level of every numeric
        (j, spec, bins * BRANCHING**level)
        for j, spec in numeric
        for level in range(1, depth[spec.name] + 1)
    ]
    release, sigma = None, 0.0
    if levels:
        sigma = plan.sigma(plan.shares["refinements"], len(levels))

        def cells(block: np.ndarray) -> np.ndarray:
            return np.column_stack([level_cells(block[:, j], s, n) for j, s, n in levels])

        release = noisy_cell_counts(
            "numeric_refinements",
            per_block(codes, cells, len(levels), np.int64),
            [size for _, _, size in levels],
            sigma,
            rng,
            plan.adjacency,
            plan.noise,
        )
    noisy = iter(release.value if release is not None else [])
    columns = {}
    for j, spec in numeric:
        refinements = [next(noisy) for _ in range(depth[spec.name])]
        sigmas = [marginals["release"].sigma] + [sigma] * len(refinements)
        columns[spec.name] = FineColumn(
            spec, bins, marginals["noisy"][j], refinements, sigmas, plan.threshold
        )
    if release is None:
        return {"columns": {}, "samplers": columns, "release": None}
    return {"columns": columns, "samplers": columns, "release": release}


def measure_pairs(codes, metadata: TableMetadata, marginals, fine, plan: Plan, rng, target=None):
    """The measured 2-way tables and the tree model of them (:mod:`.pairs`): with a ``target``
    (a column name), its C − 1 tables first (``"target_marginals"``); then, with a pair share,
    the adaptive rounds (:func:`_measure_adaptive`), or noisy scores of the other pairs, their
    maximum spanning tree (a forest without the target) and its noisy tables
    (:func:`_pair_model` builds the rows' model of them)."""
    has_target = target is not None and "target_pairs" in plan.shares
    if marginals is None or (plan.shares["pairs"] == 0 and not has_target):
        return None
    binnings = [
        PairBinning(spec, q, fine["samplers"].get(spec.name), plan.pair_bins)
        for spec, q in zip(metadata.columns, marginals["targets"])
    ]
    sizes = [b.size for b in binnings]

    def pair_cells(block: np.ndarray) -> np.ndarray:
        return np.column_stack([b.cells(block[:, j]) for j, b in enumerate(binnings)])

    measured, releases = [], []  # (edges, noisy tables, σ) of each family
    t = metadata.names.index(target) if has_target else None
    if has_target:
        star = [(t, j) for j in range(len(binnings)) if j != t]
        sigma = plan.sigma(plan.shares["target_pairs"], len(star))
        release = _joint_counts(
            "target_marginals", codes, pair_cells, sizes, star, sigma, plan, rng
        )
        measured.append((star, release.value, sigma))
        releases.append(release)
    if plan.pair_selection == "adaptive":
        star = measured[0] if has_target else None
        return _measure_adaptive(
            codes, pair_cells, binnings, marginals, plan, rng, star, t, releases
        )
    if plan.shares["pairs"] > 0:
        n_hat = max(float(np.clip(marginals["noisy"][0], 0, None).sum()), 1.0)  # released
        candidates = [p for p in all_pairs(len(binnings)) if t not in p]
        if candidates:
            scores = _scores(codes, pair_cells, binnings, candidates, n_hat, plan, rng)
            edges = spanning_tree(scores.value, candidates, len(binnings))
            sigma = plan.sigma(plan.shares["pairs"], len(edges))
            joints = _joint_counts(
                "pair_marginals", codes, pair_cells, sizes, edges, sigma, plan, rng
            )
            measured.append((edges, joints.value, sigma))
            releases.extend([scores, joints])
    pool_margins(binnings, measured, marginals)
    return _pair_model(binnings, measured, releases, plan.threshold, t)


def _measure_adaptive(
    codes,
    pair_cells,
    binnings,
    marginals: dict,
    plan: Plan,
    rng,
    star=None,
    target=None,
    releases=(),
) -> dict:
    """AIM's choose-then-measure rounds (:mod:`.adaptive`): each round's choice by the
    exponential mechanism against the current model, then the chosen clique's noisy table.
    With a ``target`` (a column index), its measured ``star`` ((edges, noisy tables, σ)) is
    fitted first, unshrunk (its small cells are its relations), and C − 1 rounds choose among
    the other cliques; ``releases``: those made before (the star's)."""
    from ..private import ExponentialChoices, noisy_cell_counts

    sizes = [b.size for b in binnings]
    if star is not None:  # before p̂ draws its columns: a small category keeps its rows
        pool_margins(binnings, [star], marginals)
    pool = [c for c in candidates(sizes) if star is None or c not in star[0]]
    rounds = len(binnings) - (star is not None)
    sigma = plan.sigma(plan.shares["pairs"], rounds)
    epsilon = plan.selection_epsilon(rounds)
    n_hat = max(float(np.clip(marginals["noisy"][0], 0, None).sum()), 1.0)  # released
    model = CliqueModel(binnings, np.random.default_rng(rng.integers(0, 2**63)), n_hat)
    for edge, table in zip(*star[:2]) if star is not None else []:
        model.add(edge, table, 0.0, n_hat)
    choices = ExponentialChoices(per_block(codes, pair_cells, len(binnings), np.int64), sizes, pool)
    measured, releases = [], list(releases)
    for _ in range(rounds):
        choice = choices.choose(
            "marginal_choices",
            [n_hat * model.marginal(c) for c in pool],
            [penalty(c, sizes, sigma) for c in pool],
            epsilon,
            rng,
            plan.adjacency,
            secure=plan.noise.endswith("_secure"),
        )
        clique = pool[choice.value]
        cell_sizes = [math.prod(sizes[j] for j in clique)]
        table = noisy_cell_counts(
            "clique_marginals",
            per_block(
                codes,
                lambda b, c=clique: clique_cells(pair_cells(b), c, sizes)[:, None],
                1,
                np.int64,
            ),
            cell_sizes,
            sigma,
            rng,
            plan.adjacency,
            plan.noise,
        )
        model.add(clique, table.value[0], sigma, n_hat)
        measured.append((clique, table.value[0], sigma))
        releases.extend([choice, table])
    built = adaptive_model(binnings, model, measured, star and star[:2], target)
    projected = [_projection(e, [*measured, *_cliques(star)], sizes) for e in built["edges"]]
    return {
        "binnings": binnings,
        "edges": built["edges"],
        "joints": [t.ravel() for t in built["tables"]],
        "cliques": built["cliques"],
        "model": built["tree"],
        "releases": releases,
        "signal_to_noise": [signal_to_noise(t, s) if t is not None else 0.0 for t, s in projected],
        "sigmas": [s for _, s in projected],
    }


def _cliques(family) -> list:
    """(clique, noisy table, σ) of each table of a family (edges, noisy tables, σ)."""
    if family is None:
        return []
    edges, noisy, sigma = family
    return [(edge, table, sigma) for edge, table in zip(edges, noisy)]


def _projection(edge, measured: list, sizes) -> tuple:
    """The noisy 2-way table of ``edge`` from its first measured clique (a triple summed over
    its third column: noise σ·√K₃ per cell) and its σ; (None, 0) if it was never measured."""
    for clique, noisy, sigma in measured:
        if set(edge) <= set(clique):
            table = np.reshape(noisy, [sizes[j] for j in clique])
            axes = tuple(k for k, j in enumerate(clique) if j not in edge)
            table = table.sum(axis=axes) if axes else table
            if [j for j in clique if j in edge] != list(edge):
                table = table.T
            scale = math.sqrt(math.prod(sizes[clique[k]] for k in axes)) if axes else 1.0
            return table, sigma * scale
    return None, 0.0


def pool_margins(binnings, measured: list, marginals: dict) -> None:
    """Each categorical column's 1-way shares re-estimated from every release that counts its
    cells (post-processing): its 1-way marginal (variance σ_m² per cell) and the margin of each
    measured 2-way table with it (the sum of K partner cells: variance K·σ_k²), weighted by
    inverse variance (Hay et al., VLDB 2010, §3). A small category that the 1-way noise alone
    would zero (35 rows, σ_m ≈ 21) keeps its rows when the tables say it has them; a
    ``may be empty`` column's emptied categories (:func:`.structure.without_empty`) stay empty.
    Updates ``binnings[j].p`` and ``marginals["targets"][j]`` in place."""
    sigma_m = marginals["release"].sigma
    totals = {
        j: [np.asarray(marginals["noisy"][j], float) / sigma_m**2] for j in range(len(binnings))
    }
    weights = {j: [1.0 / sigma_m**2] for j in range(len(binnings))}
    for edges, noisy, sigma in measured:
        for (a, b), table in zip(edges, noisy):
            table = np.reshape(np.asarray(table, float), (binnings[a].size, binnings[b].size))
            for j, margin, k in (
                (a, table.sum(axis=1), binnings[b].size),
                (b, table.sum(axis=0), binnings[a].size),
            ):
                totals[j].append(margin / (k * sigma**2))
                weights[j].append(1.0 / (k * sigma**2))
    for j, binning in enumerate(binnings):
        if binning.fine is not None or len(weights[j]) == 1:
            continue  # a numeric's pair cells are not its 1-way bins; unmeasured: as released
        pooled = np.sum(totals[j], axis=0) / np.sum(weights[j])
        if binning.spec.may_be_empty:  # a category the released counts left empty stays empty
            pooled = np.where(np.asarray(marginals["targets"][j]) > 0, pooled, 0.0)
        binning.p = probabilities(pooled)
        marginals["targets"][j] = binning.p


def _joint_counts(name: str, codes, pair_cells, sizes, edges, sigma: float, plan: Plan, rng):
    """One release of the noisy joint counts of every pair in ``edges``."""
    from ..private import noisy_cell_counts

    def joint_cells(block: np.ndarray) -> np.ndarray:
        pair = pair_cells(block)
        return np.column_stack([pair[:, a] * sizes[b] + pair[:, b] for a, b in edges])

    return noisy_cell_counts(
        name,
        per_block(codes, joint_cells, len(edges), np.int64),
        [sizes[a] * sizes[b] for a, b in edges],
        sigma,
        rng,
        plan.adjacency,
        plan.noise,
    )


def _scores(codes, pair_cells, binnings, candidates, n_hat: float, plan: Plan, rng):
    """MST's selection scores of the ``candidates`` (:mod:`.pairs`, step 1)."""
    from ..private import noisy_dependence_scores

    expected = [
        n_hat * np.outer(probabilities(binnings[a].p), probabilities(binnings[b].p))
        for a, b in candidates
    ]
    return noisy_dependence_scores(
        "pair_scores",
        per_block(codes, pair_cells, len(binnings), np.int64),
        [b.size for b in binnings],
        candidates,
        expected,
        plan.sigma(plan.shares["pair_selection"], len(candidates), score=True),
        rng,
        plan.adjacency,
        plan.noise,
    )


def _pair_model(binnings, measured: list, releases: list, threshold: float, target) -> dict:
    """The model of the measured tables (post-processing): one family alone gives its tree
    (:class:`~.pairs.TreeModel`); the target's star with the pairs' forest gives
    :class:`~.pairs.TargetTreeModel`. Its tables, made consistent with the 1-way shares, are
    the pool's 2-way constraints."""
    edges = [e for edges_k, _, _ in measured for e in edges_k]
    sigmas = [s_k for edges_k, _, s_k in measured for _ in edges_k]
    tables = [
        np.reshape(t, (binnings[a].size, binnings[b].size))
        for edges_k, noisy_k, _ in measured
        for (a, b), t in zip(edges_k, noisy_k)
    ]
    if len(measured) == 1:
        model = TreeModel(binnings, edges, tables, cut=threshold * sigmas[0])
    else:
        (star, star_noisy, star_sigma), (forest, forest_noisy, forest_sigma) = measured
        model = TargetTreeModel(
            binnings,
            target,
            (forest, forest_noisy),
            (star, star_noisy),
            cut=threshold * forest_sigma,
            star_cut=0.0,  # a target table's small cells are its relations: clipped, not cut
        )
        edges, sigmas = [*forest, *star], [forest_sigma] * len(forest) + [star_sigma] * len(star)
        tables = [*forest_noisy, *star_noisy]
        tables = [
            np.reshape(t, (binnings[a].size, binnings[b].size)) for (a, b), t in zip(edges, tables)
        ]
    return {
        "binnings": binnings,
        "edges": edges,
        "joints": [t.ravel() for t in model.tables],  # consistent: post-processing
        "model": model,
        "releases": releases,
        "signal_to_noise": [signal_to_noise(t, s) for t, s in zip(tables, sigmas)],
        "sigmas": sigmas,
    }


def signal_to_noise(noisy: np.ndarray, sigma: float) -> float:
    """A released 2-way table's dependence over the noise's (post-processing):
    ‖T̃ − r·cᵀ/n‖₁ / (σ·K·√(2/π)), T̃ the noisy table (K cells), r, c its margins, n its total;
    σ·K·√(2/π) is the L1 norm a table of pure noise has in expectation. About 1 or less: the
    released table cannot tell the relation from independence at this ε."""
    table = np.asarray(noisy, float)
    total = table.sum()
    if table.ndim != 2 or not total > 0 or not sigma > 0:
        return 0.0
    product = np.outer(table.sum(axis=1), table.sum(axis=0)) / total
    return float(np.abs(table - product).sum() / (sigma * table.size * math.sqrt(2 / math.pi)))


def pool_constraints(codes: np.ndarray, metadata: TableMetadata, bins: int, fine, pairs) -> list:
    """(cells, target) of every measured marginal beyond the coarse 1-ways: each refined
    numeric at its first finer level, every chosen pair (post-processing)."""
    out = []
    columns = fine["columns"] if fine is not None else {}
    for j, spec in enumerate(metadata.columns):
        if spec.name in columns and columns[spec.name].size > bins:
            column, size = columns[spec.name], bins * BRANCHING
            cells = level_cells(codes[:, j], spec, size)
            target = column.level_probabilities(size) * (1 - column.missing)
            if spec.nullable:
                target = np.concatenate([target, [column.missing]])
            out.append((np.where(cells < 0, size, cells), target / target.sum()))
    if pairs is not None:  # adaptive: every measured clique; tree: every chosen pair
        sizes = [b.size for b in pairs["binnings"]]
        cells = np.column_stack([b.cells(codes[:, j]) for j, b in enumerate(pairs["binnings"])])
        cliques = pairs.get("cliques") or zip(pairs["edges"], pairs["joints"])
        for clique, table in cliques:
            out.append((clique_cells(cells, clique, sizes), probabilities(table)))
    return out
