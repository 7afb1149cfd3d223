"""Noisy 1-way marginals as cell counts, and raking to them.

A column's 1-way histogram counts the rows in each of its public cells
(:func:`cells_of`), released by :func:`privevo.private.noisy_cell_counts`,
block by block for a table larger than memory:

- categorical / boolean: one cell per value (missing included when nullable);
- numeric: B equal-width bins of the public domain, cell ⌊u·B⌋ as in
  :func:`privevo.evaluation.marginal_tvd` (a nullable column adds a missing cell).

It is the nearest-neighbour vote histogram of the column's embedding block
(:class:`~privevo.tabular.encoding.TableEmbedding`) over the cell candidates
:func:`cell_candidates` (one-hot vectors; bin centres, 10⁻⁷ below the midpoints
so that a value on a bin edge goes to the upper bin, as the floor does).

One row changes one count of every column's histogram, so the C releases
with noise σ compose to μ = √C·Δ/σ (Δ = 1 add/remove, √2 replace).
Everything else here is post-processing: cell probabilities are the clipped,
normalised noisy counts; :func:`rake` rescales weights of candidate rows so
that their marginals match those probabilities (iterative proportional
fitting, Deming & Stephan 1940); :mod:`privevo.tabular.pool` fits the output pool with it.
"""

from __future__ import annotations

import math

import numpy as np

from .encoding import TableEmbedding, per_block
from .metadata import ColumnSpec

__all__ = ["cell_candidates", "cells_of", "noisy_marginals", "rake", "cell_sampler"]

_MISSING = (0.5, math.sqrt(3.0) / 2.0)
_EDGE_SHIFT = 1e-7


def cell_candidates(spec: ColumnSpec, bins: int) -> np.ndarray:
    """Public candidates of one column's histogram, in its embedding block."""
    if not spec.is_numeric:
        return np.eye(spec.n_codes) / math.sqrt(2.0)
    centres = (np.arange(bins) + 0.5) / bins - _EDGE_SHIFT
    if not spec.nullable:
        return centres[:, None]
    return np.vstack([np.column_stack([centres, np.zeros(bins)]), np.array([_MISSING])])


def cells_of(codes: np.ndarray, embedding: TableEmbedding, bins: int) -> np.ndarray:
    """(n, C) cell index of every code: its value's code, or its bin ⌊u·B⌋ (missing: B)."""
    out = np.empty(codes.shape, dtype=np.int64)
    for j, spec in enumerate(embedding.metadata.columns):
        if not spec.is_numeric:
            out[:, j] = codes[:, j]
            continue
        u = (codes[:, j] - spec.lower) / (spec.upper - spec.lower)
        b = np.clip(np.floor(np.nan_to_num(u, nan=0.0) * bins), 0, bins - 1).astype(np.int64)
        out[:, j] = np.where(np.isnan(codes[:, j]), bins, b)
    return out


def noisy_marginals(
    codes,
    embedding: TableEmbedding,
    bins: int,
    sigma: float,
    rng: np.random.Generator,
    adjacency: str = "add_remove",
    noise: str = "gaussian",
):
    """The C noisy 1-way marginals of the private rows' ``codes`` (an array, or a source of
    code blocks), one release (``value``: per column, its noisy counts over its cells) with
    ``noise`` (:func:`privevo.private.noisy_cell_counts`)."""
    from ..private import noisy_cell_counts

    columns = embedding.metadata.columns
    cells = per_block(codes, lambda c: cells_of(c, embedding, bins), len(columns), np.int64)
    sizes = [len(cell_candidates(spec, bins)) for spec in columns]
    return noisy_cell_counts("column_marginals", cells, sizes, sigma, rng, adjacency, noise)


def probabilities(noisy: np.ndarray) -> np.ndarray:
    """Clipped, normalised noisy counts (uniform if none is positive)."""
    p = np.clip(noisy, 0.0, None)
    return p / p.sum() if p.sum() > 0 else np.full(len(p), 1.0 / len(p))


def rake(
    weights: np.ndarray, cells: np.ndarray, targets: list[np.ndarray], sweeps: int = 30
) -> np.ndarray:
    """Weights rescaled so each column's weighted cell shares approach ``targets`` (IPF)."""
    w = np.asarray(weights, dtype=float).copy()
    if not w.sum() > 0:
        return w
    cells = np.asfortranarray(cells)  # one contiguous column per constraint
    for _ in range(sweeps):
        for j, q in enumerate(targets):
            column = cells[:, j]
            current = np.bincount(column, weights=w, minlength=len(q))
            ratio = np.divide(q * current.sum(), current, out=np.ones_like(q), where=current > 0)
            if not ratio @ current > 0:  # the target puts no mass where the rows are: skip it
                continue
            w *= ratio[column]
        w /= w.sum()
    return w


def cell_sampler(spec: ColumnSpec, bins: int, p: np.ndarray):
    """A function ``(n, rng) → codes`` drawing a cell ∝ ``p``, then a value uniformly inside it."""

    def draw(n: int, rng: np.random.Generator) -> np.ndarray:
        cell = rng.choice(len(p), size=n, p=p)
        if not spec.is_numeric:
            return cell.astype(float)
        b = np.minimum(cell, bins - 1)
        if spec.integer:
            lo, hi = _integer_range(spec, bins)
            values = np.floor(lo[b] + rng.random(n) * (hi[b] - lo[b] + 1))
        else:
            values = spec.lower + (b + rng.random(n)) * (spec.upper - spec.lower) / bins
        return np.where(cell == bins, np.nan, values)

    return draw


def _integer_range(spec: ColumnSpec, bins: int) -> tuple[np.ndarray, np.ndarray]:
    """Per bin, the first and last integer x with ⌊(x − lower)/(upper − lower)·B⌋ = b
    (an empty bin gets its rounded centre)."""
    edges = spec.lower + np.arange(bins + 1) * (spec.upper - spec.lower) / bins
    lo = np.ceil(edges[:-1])
    hi = np.ceil(edges[1:]) - 1
    hi[-1] = math.floor(spec.upper)
    empty = lo > hi
    centre = np.round((edges[:-1] + edges[1:]) / 2)
    return np.where(empty, centre, lo), np.where(empty, centre, hi)
