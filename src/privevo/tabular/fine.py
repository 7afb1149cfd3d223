"""Numeric columns at their real resolution: a noisy tree of nested bins, and its CDF.

Level 0 of a numeric column's tree is its public 1-way marginal, B equal-width
bins of ``[lower, upper]`` (:mod:`.marginals`); level l = 1 … k splits every bin
into 8, i.e. B·8^l equal-width bins, cell ⌊u·B·8^l⌋ of u = (x − lower)/(upper −
lower). k is public: ``levels`` (default 2: B·8² = 640 leaves at B = 10), or for
an integer column the least k with B·8^k ≥ its number of integers if that is fewer (its
leaves then hold one integer each: an integer column with a small domain, e.g.
≤ 64 values, is ordinal, one cell per value). Each level is one noisy histogram
of the present values (:func:`privevo.private.noisy_cell_counts`); a row is in
one cell per level, as in the hierarchical histograms of Hay et al. (VLDB 2010,
§3).

Consistency (post-processing): level 0's bins below 2·``threshold``·σ get no
mass (an empty bin's clipped noise would otherwise put rows in far tails: at
1·σ, W1/sd of credit_data's Debt was .30 and of flights' dep_delay .19; at 2·σ
.11 and .02, seed 0, ε = 1), then the leaf distribution is allocated top-down —
each cell's mass goes to its 8 children in proportion to their noisy counts, a
child's count first shrunk towards the parent's even split by the James–Stein
factor of its siblings' spread (:func:`_allocate`), a child below the cut getting
none (if none passes, the siblings share it evenly) — so every level sums to its
parent, mass stays where the data is, the tails that hold no rows get none of the
noise, and a level too noisy to resolve at this n leaves its parent's mass even.
The column's distribution is then piecewise uniform over its leaves (a leaf
holding integers spreads its mass over [lo − ½, hi + ½]). Its CDF F and inverse
F⁻¹ are the space the PE rounds vote and mutate in (a mutation step of 0.1 moves a
value by a tenth of the rows, in a dense and in a sparse region alike).
"""

from __future__ import annotations

import math

import numpy as np

from .encoding import first_rows
from .metadata import ColumnSpec

__all__ = ["BRANCHING", "tree_levels", "level_cells", "FineColumn", "spread_repeats"]

BRANCHING = 8


def tree_levels(spec: ColumnSpec, bins: int, levels: int = 2) -> int:
    """k, the public number of refinement levels of a numeric column (0 for categoricals)."""
    if not spec.is_numeric:
        return 0
    if spec.integer:
        n_values = math.floor(spec.upper) - math.ceil(spec.lower) + 1
        k = 0
        while bins * BRANCHING**k < n_values and k < levels:
            k += 1
        return k
    return levels


def level_cells(values: np.ndarray, spec: ColumnSpec, size: int) -> np.ndarray:
    """Cell ⌊u·size⌋ (clipped) of every value; −1 for a missing one."""
    u = (values - spec.lower) / (spec.upper - spec.lower)
    cell = np.clip(np.floor(np.nan_to_num(u, nan=0.0) * size), 0, size - 1).astype(np.int64)
    return np.where(np.isnan(values), -1, cell)


class FineColumn:
    """A numeric column's leaf distribution from its noisy tree (module docstring).

    ``coarse``: level 0's noisy counts (B bins, then the missing cell if nullable);
    ``refinements``: levels 1 … k's noisy counts; ``sigmas``: each level's σ.
    """

    def __init__(
        self,
        spec: ColumnSpec,
        bins: int,
        coarse: np.ndarray,
        refinements: list,
        sigmas: list,
        threshold: float = 1.0,
    ):
        self.spec, self.bins = spec, bins
        self.size = bins * BRANCHING ** len(refinements)
        self._spans(self.size)
        coarse = np.asarray(coarse, dtype=float)
        present = np.clip(coarse[:bins], 0.0, None)
        present = np.where(present >= 2 * threshold * sigmas[0], present, 0.0)  # noise, not rows
        missing = max(float(coarse[bins]), 0.0) if spec.nullable else 0.0
        total = present.sum() + missing
        self.missing = missing / total if total > 0 else (0.5 if spec.nullable else 0.0)
        mass = self._allowed(bins) * present
        if not mass.sum() > 0:
            mass = self._allowed(bins).astype(float)
        mass = mass / mass.sum()
        for level, (noisy, sigma) in enumerate(zip(refinements, sigmas[1:]), start=1):
            size = bins * BRANCHING**level
            mass = _allocate(mass, np.asarray(noisy, float), self._allowed(size), sigma, threshold)
        self.p = mass  # over the leaves, sums to 1 (present values only)
        self._cum = np.concatenate([[0.0], np.cumsum(self.p)])

    # -- the leaves' public spans ---------------------------------------------------------

    def _spans(self, size: int) -> None:
        spec = self.spec
        edges = spec.lower + np.arange(size + 1) * (spec.upper - spec.lower) / size
        if spec.integer:
            lo = np.ceil(edges[:-1])
            hi = np.ceil(edges[1:]) - 1
            hi[-1] = math.floor(spec.upper)
            self.lo, self.hi = lo, hi  # integers in each leaf (none where lo > hi)
            self.start, self.stop = lo - 0.5, hi + 0.5
        else:
            self.lo = self.hi = None
            self.start, self.stop = edges[:-1], edges[1:]

    def _allowed(self, size: int) -> np.ndarray:
        """Cells of level ``size`` that can hold a value (integers: at least one integer)."""
        if not self.spec.integer:
            return np.ones(size, dtype=bool)
        holds = self.lo <= self.hi
        return holds.reshape(size, -1).any(axis=1)

    # -- sampling, CDF and its inverse ----------------------------------------------------

    def level_probabilities(self, size: int) -> np.ndarray:
        """The leaf distribution summed to level ``size`` (present values only)."""
        return self.p.reshape(size, -1).sum(axis=1)

    def sample(self, n: int, rng: np.random.Generator, leaves: np.ndarray | None = None):
        """``n`` values drawn from the leaf distribution (restricted to ``leaves`` if given)."""
        p = self.p if leaves is None else np.where(leaves, self.p, 0.0)
        if not p.sum() > 0:
            p = self.p if leaves is None or not leaves.any() else leaves.astype(float)
        leaf = rng.choice(self.size, size=n, p=p / p.sum())
        return self._within(leaf, rng.random(n))

    def sample_codes(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` codes: missing with the measured share (nullable), else a fine draw."""
        values = self.sample(n, rng)
        if self.spec.nullable:
            values[rng.random(n) < self.missing] = np.nan
        return values

    def redraw(self, values: np.ndarray, rng: np.random.Generator, cell_of_leaf: np.ndarray):
        """Each value redrawn from the leaf distribution restricted to its leaf's cell
        (``cell_of_leaf``: a cell id per leaf); missing stays missing. Every cell's count is
        unchanged, and a value of cell c is drawn as a fresh value of c would be
        (post-processing)."""
        values = np.asarray(values, dtype=float)
        out = values.copy()
        present = np.flatnonzero(~np.isnan(values))
        cell = cell_of_leaf[np.clip(self.leaf_of(values[present]), 0, self.size - 1)]
        for c in np.unique(cell):
            rows = present[cell == c]
            out[rows] = self.sample(len(rows), rng, leaves=cell_of_leaf == c)
        return out

    def coarse_bins(self) -> np.ndarray:
        """Each leaf's level-0 bin (of the ``bins`` equal-width ones)."""
        return np.arange(self.size) * self.bins // self.size

    def _within(self, leaf: np.ndarray, r: np.ndarray) -> np.ndarray:
        if self.spec.integer:
            lo, hi = self.lo[leaf], self.hi[leaf]
            return np.clip(np.floor(lo + r * (hi - lo + 1)), lo, np.maximum(hi, lo))
        return self.start[leaf] + r * (self.stop[leaf] - self.start[leaf])

    def leaf_of(self, values: np.ndarray) -> np.ndarray:
        return level_cells(values, self.spec, self.size)

    def cdf(self, values: np.ndarray) -> np.ndarray:
        """F(x) ∈ [0, 1] (missing: NaN)."""
        values = np.asarray(values, dtype=float)
        leaf = np.clip(self.leaf_of(values), 0, self.size - 1)
        width = self.stop[leaf] - self.start[leaf]
        inside = np.clip((values - self.start[leaf]) / np.where(width > 0, width, 1.0), 0, 1)
        out = self._cum[leaf] + self.p[leaf] * inside
        return np.where(np.isnan(values), np.nan, np.clip(out, 0.0, 1.0))

    def inverse(self, u: np.ndarray) -> np.ndarray:
        """F⁻¹(u), a value in a leaf of positive mass (integers rounded into their leaf)."""
        u = np.clip(np.asarray(u, dtype=float), 0.0, 1.0)
        positive = np.flatnonzero(self.p > 0)
        cum = self._cum[positive]
        k = np.clip(np.searchsorted(cum, u, side="right") - 1, 0, len(positive) - 1)
        leaf = positive[k]
        inside = np.clip((u - self._cum[leaf]) / self.p[leaf], 0.0, 1.0)
        values = self.start[leaf] + inside * (self.stop[leaf] - self.start[leaf])
        if self.spec.integer:
            return np.clip(np.round(values), self.lo[leaf], self.hi[leaf])
        return np.clip(values, self.spec.lower, self.spec.upper)


def spread_repeats(codes: np.ndarray, metadata, fine, pairs, rng) -> np.ndarray:
    """Each repeated row (every row equal to an earlier one) gets its numeric values redrawn
    inside their measured cells: the column's pair cell where pairs were measured, else its
    level-0 bin (:meth:`FineColumn.redraw`).

    ``sample`` draws from a pool whose raked weights may concentrate on fewer rows than it
    draws, so a row of weight w comes back ⌈n·w⌉ times: exact duplicates that real rows
    rarely hold (docs/tabular.md, "Duplicate rows"). A repeat's value is drawn
    from the column's fine distribution inside its cell, as the tree model draws a fresh
    row's: every pair and clique cell of the row stays as drawn, the 1-way bins and tree levels
    keep their shares in expectation (post-processing)."""
    repeat = np.ones(len(codes), dtype=bool)
    repeat[first_rows(codes)] = False
    columns = fine["samplers"] if fine is not None else {}
    if not repeat.any() or not columns:
        return codes
    rows = np.flatnonzero(repeat)
    cells = {b.spec.name: b.leaf_bin for b in pairs["binnings"]} if pairs is not None else {}
    for j, spec in enumerate(metadata.columns):
        column = columns.get(spec.name)
        if column is not None:
            cell_of_leaf = cells.get(spec.name)
            cell_of_leaf = column.coarse_bins() if cell_of_leaf is None else cell_of_leaf
            codes[rows, j] = column.redraw(codes[rows, j], rng, cell_of_leaf)
    return codes


def _allocate(
    mass: np.ndarray, noisy: np.ndarray, allowed: np.ndarray, sigma: float, threshold: float
) -> np.ndarray:
    """Each parent's mass split over its children ∝ their shrunk noisy counts above the cut.

    Within a parent, the allowed children's noisy counts c_i (noise sd ``sigma``) are shrunk
    towards their mean c̄ by the positive-part James–Stein factor
    s = (1 − (k − 3)·σ²/Σ(c_i − c̄)²)₊ (k allowed
    children; Efron & Morris 1973): children whose spread is within the noise's share the
    parent evenly (s = 0), children with a clear shape keep it (s ≈ 1). A child whose shrunk
    count is below s·``threshold``·σ gets none; if none passes, the allowed children share the mass
    evenly. Without the shrinkage a parent of 150 rows over 8 children of σ ≈ 33 went whole
    to the one child its noise lifted highest: a spike in the synthetic values (creditcard's
    share, income and age deciles; docs/tabular.md, "Numeric columns")."""
    children = noisy.reshape(len(mass), BRANCHING)
    ok = allowed.reshape(len(mass), BRANCHING)
    k = ok.sum(axis=1)
    mean = np.where(ok, children, 0.0).sum(axis=1) / np.maximum(k, 1)
    spread = np.where(ok, children - mean[:, None], 0.0)
    noise = (k - 3) * max(sigma, np.finfo(float).tiny) ** 2
    sq = (spread**2).sum(axis=1)
    shrink = np.clip(1.0 - noise / np.where(sq > 0, sq, np.inf), 0.0, 1.0)[:, None]
    shrunk = mean[:, None] + shrink * spread
    weights = np.where(ok & (shrunk >= shrink * threshold * sigma), np.clip(shrunk, 0.0, None), 0.0)
    none = ~(weights.sum(axis=1) > 0)
    weights[none] = ok[none].astype(float)  # nothing passes: the allowed children evenly
    total = weights.sum(axis=1, keepdims=True)
    weights = weights / np.where(total > 0, total, 1.0)  # a cell with no allowed child holds 0
    return (mass[:, None] * weights).ravel()
