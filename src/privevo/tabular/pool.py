"""The output pool: public rows whose weights match every measurement, grown where a draw
would repeat rows.

    rows    = tree-model rows + POOL_SUPPORT of rows drawn column by column     (pool_rows)
    cells   = each row's cell under every measurement                          (constraint_cells)
    weights = IPF from equal weights to every noisy target (maximum entropy)   (rake)
    grow    = while a trial draw of n_rows repeats over REPEAT_LIMIT of its rows, at most
              `passes` times: add PE variations of the rows it draws more than once, refit

Post-processing of the releases with public randomness (docs/tabular.md, "Duplicate rows").
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from threadpoolctl import threadpool_limits

from .apis import TabularRandomAPI
from .encoding import TableEmbedding, first_rows
from .marginals import cells_of, probabilities, rake

__all__ = [
    "POOL_SUPPORT",
    "REPEAT_LIMIT",
    "pool_rows",
    "constraint_cells",
    "carries_mass",
    "grow_pool",
    "systematic_draw",
    "nearest",
]

POOL_SUPPORT = 0.1  # share of the output pool drawn column by column (pool_rows)
REPEAT_LIMIT = 0.01  # grow_pool stops once a trial draw repeats at most this share of its rows
TRIAL_ROWS = 100_000  # the trial draw's size, at most


def pool_rows(random_api: TabularRandomAPI, n: int, rng: np.random.Generator) -> np.ndarray:
    """The output pool's public rows: the model's (the pair tree), and ``POOL_SUPPORT`` of them
    with every column drawn on its own from its noisy marginal, so that every released cell
    has pool rows to carry its mass (a category of 35 rows that the tree model reaches in only
    a few cells would otherwise lose them all to one zeroed cell of another table)."""
    support = int(POOL_SUPPORT * n) if random_api.joint is not None else 0
    rows = random_api.sample_codes(n - support, rng)
    if support == 0:
        return rows
    columns = random_api.embedding.metadata.columns
    spread = np.column_stack([random_api.column(spec, support, rng) for spec in columns])
    return np.vstack([rows, spread])


def constraint_cells(
    pool_codes: np.ndarray,
    embedding: TableEmbedding,
    bins: int,
    marginals: list[np.ndarray],
    rounds: list[tuple[np.ndarray, np.ndarray]],
    extra: list | None = None,
) -> tuple[np.ndarray, list[np.ndarray]]:
    """(N, K) cell of every pool row under each of its K measurements, and the K targets.

    Each column's noisy 1-way marginal (``marginals``); for every PE round (``rounds``:
    (candidates, noisy votes)) the candidate whose Voronoi cell holds the row, its target the
    clipped, normalised votes; each ``extra`` (cells, target) pair (finer 1-way levels, 2-way
    tables and cliques). A row that another measurement already puts in a cell of target 0
    carries no mass after raking: its Voronoi cells are not searched, and it takes each round's
    last cell, one of target 0 (:func:`carries_mass`)."""
    cells = [cells_of(pool_codes, embedding, bins)]
    targets = list(marginals)
    extra = [
        (np.asarray(c, dtype=np.int64)[:, None], np.asarray(t, dtype=float)) for c, t in extra or []
    ]
    live = carries_mass(np.hstack(cells + [c for c, _ in extra]), targets + [t for _, t in extra])
    searched = np.flatnonzero(live)  # live only shrinks: rows outside it are never embedded
    points = embedding.embed(pool_codes[searched])
    for candidates, votes in rounds:
        target = np.append(probabilities(votes), 0.0)
        cell = np.full(len(pool_codes), len(candidates), dtype=np.int64)
        cell[live] = nearest(points[live[searched]], candidates)
        positive = target[cell] > 0
        if positive[live].any():  # else raking skips this round (no mass where the rows are)
            live &= positive
        cells.append(cell[:, None])
        targets.append(target)
    for column, target in extra:
        cells.append(column)
        targets.append(target)
    return np.hstack(cells), targets


def carries_mass(cells: np.ndarray, targets: list[np.ndarray]) -> np.ndarray:
    """Rows whose every cell has a positive target: :func:`rake` gives any other row weight 0.
    A measurement counts only where some row lies in a cell of positive target (``rake`` skips
    one that puts no mass where the rows are)."""
    live = np.ones(len(cells), dtype=bool)
    for j, target in enumerate(targets):
        positive = target[cells[:, j]] > 0
        if positive.any():
            live &= positive
    return live


def grow_pool(
    codes: np.ndarray,
    constraints: Callable[[np.ndarray], tuple[np.ndarray, list[np.ndarray]]],
    vary: Callable[[np.ndarray, np.random.Generator], np.ndarray],
    spread: Callable[[np.ndarray, np.random.Generator], np.ndarray],
    rows: int,
    rng: np.random.Generator,
    passes: int = 3,
    most: int = 20,
) -> tuple[np.ndarray, np.ndarray]:
    """The pool and its raked weights, grown where a draw of ``rows`` rows would repeat rows.

    Raking (:func:`~privevo.tabular.marginals.rake`, from equal weights: the maximum-entropy
    fit) can only spread the mass over the rows the pool has; where the measurements want
    more mass than the pool has rows, a few rows carry it, and :func:`systematic_draw` takes
    a row of weight w ⌈rows·w⌉ times. While a trial draw (``spread`` as ``sample`` spreads
    it) repeats more than ``REPEAT_LIMIT`` of its rows, each pass adds ⌈rows·w⌉ − 1 variations
    of every such row (``vary``: PE's variation step; at most ``most`` per row and the pool's
    first size per pass), keeps those the pool lacks, and rakes the grown pool again from
    equal weights: a new row takes mass only as far as every measurement agrees
    (``constraints``: rows → (cells, targets)).
    """
    cells, targets = constraints(codes)
    weights = rake(np.ones(len(codes)), cells, targets)
    budget = len(codes)
    for _ in range(passes):
        if _repeat_share(codes, weights, rows, spread, rng) <= REPEAT_LIMIT:
            break
        copies = np.minimum(np.ceil(rows * weights) - 1, most).clip(0)  # draw's repeats, at most
        copies = np.floor(copies * min(1.0, budget / max(copies.sum(), 1.0))).astype(np.int64)
        children = _new_rows(vary(np.repeat(codes, copies, axis=0), rng), codes)
        child_cells = constraints(children)[0] if len(children) else cells[:0]
        alive = carries_mass(child_cells, targets)  # the rest would take no mass
        if not alive.any():
            break
        codes = np.vstack([codes, children[alive]])
        cells = np.vstack([cells, child_cells[alive]])
        weights = rake(np.ones(len(codes)), cells, targets)
    return codes, weights


def _repeat_share(codes, weights, rows: int, spread, rng: np.random.Generator) -> float:
    """Share of a trial draw (``rows`` rows, at most ``TRIAL_ROWS``) equal to an earlier row."""
    n = min(rows, TRIAL_ROWS)
    drawn = spread(codes[systematic_draw(weights, n, rng)], rng)
    return 1.0 - len(first_rows(drawn)) / n


def systematic_draw(weights: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """Indices of ``n`` rows drawn ∝ ``weights`` by systematic sampling in a random order
    (Madow 1949): row i comes back ⌊n·w_i⌋ or ⌈n·w_i⌉ times, n·w_i in expectation, so a row of
    n·w ≤ 1 at most once, where n independent draws would repeat rows of any weight (about
    n²/2 pairs over the effective pool size). Returned in a random order."""
    order = rng.permutation(len(weights))
    order = order[weights[order] > 0]  # a row of weight 0 never comes back, rounding aside
    cumulative = np.cumsum(weights[order] / weights.sum()) * n
    points = rng.random() + np.arange(n)
    at = np.minimum(np.searchsorted(cumulative, points, side="right"), len(order) - 1)
    return rng.permutation(order[at])


def _new_rows(candidates: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """The distinct rows of ``candidates`` that ``codes`` does not hold, in first-seen order."""
    if not len(candidates):
        return candidates
    first = first_rows(np.vstack([codes, candidates]))
    return candidates[first[first >= len(codes)] - len(codes)]


def nearest(points: np.ndarray, candidates: np.ndarray, chunk: int = 256) -> np.ndarray:
    """Index of each point's nearest candidate (its Voronoi cell): argmin ‖c‖² − 2·p·c in
    float32, chunk by chunk into one buffer. A point within float32 rounding of two candidates
    may take either, where the vote's exact kernel takes the lower index (post-processing of
    public rows). One BLAS thread: a chunk of 256 rows is too small for a second one to pay
    (on 2 cores it doubled the CPU time of gss_wages' searches and saved no wall time)."""
    points, candidates = np.asarray(points, np.float32), np.asarray(candidates, np.float32)
    c_sq = np.einsum("ij,ij->i", candidates, candidates)
    minus_two = np.ascontiguousarray(-2.0 * candidates.T)
    buffer = np.empty((chunk, len(candidates)), dtype=np.float32)
    out = np.empty(len(points), dtype=np.int64)
    with threadpool_limits(1, user_api="blas"):
        for s in range(0, len(points), chunk):
            block = buffer[: len(points[s : s + chunk])]
            np.matmul(points[s : s + chunk], minus_two, out=block)
            block += c_sq
            out[s : s + chunk] = block.argmin(axis=1)
    return out
