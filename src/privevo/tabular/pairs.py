"""Pairs: privately chosen noisy 2-way marginals, a tree model of them, and their cells for raking.

Every column gets a public-after-release *pair binning*: a categorical's codes
(missing included), or a numeric's ``pair_bins`` equal-mass bins of its noisy
leaf distribution (:mod:`.fine`; cuts on leaf edges, so a bin is a union of
leaves) plus a missing cell when nullable. With it:

1. selection (MST, McKenna et al. 2021 §4): each pair's L1 distance between
   its exact joint counts and the product of its released 1-way marginals
   times a released row count is released with Gaussian noise
   (:func:`privevo.private.noisy_dependence_scores`); the maximum spanning
   tree of the noisy scores (Kruskal) gives C − 1 pairs — post-processing;
2. measurement: the chosen pairs' joint counts with Gaussian noise
   (:func:`privevo.private.noisy_cell_counts`);
3. the tree model (post-processing): a root column drawn from its 1-way
   distribution, each other column's cell from the clipped noisy conditional
   given its parent's cell, its value from its fine distribution inside that
   cell (Chow & Liu 1968 with noisy tables). It is the PE rounds' random API
   and the output pool; the pool is then raked to every measured marginal.
"""

from __future__ import annotations

import numpy as np

from .marginals import probabilities

SPARSE_KEPT = 0.5  # consistent_joint: a row keeping less of its noisy mass takes the product

__all__ = ["PairBinning", "spanning_tree", "TreeModel", "TargetTreeModel", "all_pairs"]


class PairBinning:
    """One column's pair cells: ``cells(codes) → int``, ``size``, ``p`` (released 1-way shares)."""

    def __init__(self, spec, q: np.ndarray, fine=None, pair_bins: int = 10):
        self.spec, self.fine = spec, fine
        if fine is None:  # categorical / boolean: its codes
            self.leaf_bin = None
            self.size = len(q)
            self.p = np.asarray(q, float)
            return
        before = np.concatenate([[0.0], np.cumsum(fine.p)[:-1]])
        raw = np.minimum(np.floor((before + fine.p / 2) * pair_bins), pair_bins - 1)
        _, self.leaf_bin = np.unique(raw, return_inverse=True)
        present = int(self.leaf_bin.max()) + 1
        self.size = present + int(spec.nullable)
        p = np.bincount(self.leaf_bin, weights=fine.p, minlength=present) * (1 - fine.missing)
        self.p = np.concatenate([p, [fine.missing]]) if spec.nullable else p

    def cells(self, codes: np.ndarray) -> np.ndarray:
        if self.fine is None:
            return codes.astype(np.int64)
        leaf = self.fine.leaf_of(codes)
        cell = self.leaf_bin[np.clip(leaf, 0, None)]
        return np.where(leaf < 0, self.size - 1, cell)

    def sample_in(self, cell: int, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` codes of this column inside pair cell ``cell``."""
        spec = self.spec
        if not spec.is_numeric:
            return np.full(n, float(cell))
        if spec.nullable and cell == self.size - 1:
            return np.full(n, np.nan)
        return self.fine.sample(n, rng, leaves=self.leaf_bin == cell)


def all_pairs(n_columns: int) -> list[tuple[int, int]]:
    return [(a, b) for a in range(n_columns) for b in range(a + 1, n_columns)]


def spanning_tree(scores: np.ndarray, pairs: list, n_columns: int) -> list[tuple[int, int]]:
    """The maximum spanning tree of the (noisy) pair scores (Kruskal); C − 1 pairs."""
    parent = list(range(n_columns))

    def root(a: int) -> int:
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    chosen = []
    for p in np.argsort(-np.asarray(scores), kind="stable"):
        a, b = pairs[p]
        ra, rb = root(a), root(b)
        if ra != rb:
            parent[ra] = rb
            chosen.append((a, b))
    return chosen


class TreeModel:
    """Rows drawn along the chosen pairs (module docstring, step 3)."""

    def __init__(self, binnings: list, edges: list, joints: list, cut=0.0):
        self.binnings = binnings
        self.n_columns = len(binnings)
        neighbours: dict = {j: [] for j in range(self.n_columns)}
        self.tables = []
        cuts = np.broadcast_to(np.asarray(cut, float), (len(edges),))  # one, or one per table
        for (a, b), joint, cut_k in zip(edges, joints, cuts):
            table = consistent_joint(joint, binnings[a].p, binnings[b].p, float(cut_k))
            self.tables.append(table)
            neighbours[a].append((b, table))
            neighbours[b].append((a, table.T))
        self.order, seen = [], set()  # (child, parent, P(child cell | parent cell)) in BFS order
        for start in range(self.n_columns):
            if start in seen:
                continue
            seen.add(start)
            self.order.append((start, None, None))
            queue = [start]
            while queue:
                a = queue.pop(0)
                for b, table in neighbours[a]:
                    if b not in seen:
                        seen.add(b)
                        queue.append(b)
                        self.order.append((b, a, self._conditional(table, binnings[b].p)))

    @staticmethod
    def _conditional(table: np.ndarray, child_p: np.ndarray) -> np.ndarray:
        rows = table.sum(axis=1, keepdims=True)
        fallback = probabilities(np.asarray(child_p, float))
        return np.where(rows > 0, table / np.where(rows > 0, rows, 1.0), fallback[None, :])

    def sample_codes(self, n: int, rng: np.random.Generator) -> np.ndarray:
        codes = np.empty((n, self.n_columns))
        cells = np.empty((n, self.n_columns), dtype=np.int64)
        for child, parent, conditional in self.order:
            binning = self.binnings[child]
            if parent is None:
                cells[:, child] = rng.choice(binning.size, size=n, p=probabilities(binning.p))
            else:
                for cell in np.unique(cells[:, parent]):
                    rows = np.flatnonzero(cells[:, parent] == cell)
                    cells[rows, child] = rng.choice(
                        binning.size, size=len(rows), p=conditional[cell]
                    )
            for cell in np.unique(cells[:, child]):
                rows = np.flatnonzero(cells[:, child] == cell)
                codes[rows, child] = binning.sample_in(int(cell), len(rows), rng)
        return codes


def consistent_joint(noisy, p_a, p_b, cut: float, sweeps: int = 20) -> np.ndarray:
    """A noisy 2-way table made a distribution near its 1-way shares (post-processing).

    Cells below ``cut`` (a multiple of the table's σ) are zero — the clipped noise of empty
    cells would otherwise spread mass uniformly — and the rest is fitted (IPF) to the
    released 1-way shares ``p_a``, ``p_b``; a row or column left empty takes the product of
    the shares.
    """
    p_a, p_b = probabilities(np.asarray(p_a, float)), probabilities(np.asarray(p_b, float))
    clipped = np.clip(np.asarray(noisy, float).reshape(len(p_a), len(p_b)), 0.0, None)
    table = np.where(clipped >= max(cut, 0.0), clipped, 0.0)
    product = np.outer(p_a, p_b)
    empty_rows = _mostly_cut(table, clipped, 1) & (p_a > 0)
    table[empty_rows] = product[empty_rows]
    empty_columns = _mostly_cut(table, clipped, 0) & (p_b > 0)
    table[:, empty_columns] = product[:, empty_columns]
    for _ in range(sweeps):
        rows = table.sum(axis=1)
        table *= np.divide(p_a, rows, out=np.zeros_like(p_a), where=rows > 0)[:, None]
        columns = table.sum(axis=0)
        table *= np.divide(p_b, columns, out=np.zeros_like(p_b), where=columns > 0)[None, :]
    total = table.sum()
    return table / total if total > 0 else product


def _mostly_cut(table: np.ndarray, clipped: np.ndarray, axis: int) -> np.ndarray:
    """Rows (``axis=1``) or columns (``axis=0``) that the cut left empty, or with less than
    ``SPARSE_KEPT`` of their clipped noisy mass: a sparse row (35 rows over 10 cells of σ ≈ 20)
    keeps only the cells its noise lifted over the cut, so its shape is noise; the product of
    the 1-way shares is the better estimate there."""
    kept, before = table.sum(axis=axis), clipped.sum(axis=axis)
    return ~(kept > 0) | (kept < SPARSE_KEPT * before)


class TargetTreeModel:
    """Rows drawn target first, then each other column along the pairs' forest given its
    parent *and* the target (post-processing of the target's and the forest's 2-way tables).

    A child's cell is drawn ∝ P(child | parent)·P(child | target)/P(child): the
    pairwise log-linear model with both interactions, each table's conditional taken as is
    (no 3-way table is measured; the pool's raking fits what this leaves). A forest root is
    drawn ∝ P(child | target).
    """

    def __init__(self, binnings: list, target: int, forest, star, cut=0.0, star_cut=0.0):
        self.binnings, self.target = binnings, target
        self.forest = TreeModel(binnings, forest[0], forest[1], cut)  # the target alone
        self.ratio = {}
        self.tables = list(self.forest.tables)
        cuts = np.broadcast_to(np.asarray(star_cut, float), (len(star[0]),))
        for (a, b), joint, cut_k in zip(star[0], star[1], cuts):
            table = consistent_joint(joint, binnings[a].p, binnings[b].p, float(cut_k))
            self.tables.append(table)
            given = table if a == target else table.T  # (target cell, column cell)
            rows = given.sum(axis=1, keepdims=True)
            conditional = np.divide(given, rows, out=np.zeros_like(given), where=rows > 0)
            column = given.sum(axis=0)
            self.ratio[b if a == target else a] = np.divide(
                conditional, column, out=np.zeros_like(conditional), where=column > 0
            )
        self.order = [o for o in self.forest.order if o[0] == target] + [
            o for o in self.forest.order if o[0] != target
        ]

    def sample_codes(self, n: int, rng: np.random.Generator) -> np.ndarray:
        codes = np.empty((n, len(self.binnings)))
        cells = np.empty((n, len(self.binnings)), dtype=np.int64)
        for child, parent, conditional in self.order:
            binning = self.binnings[child]
            if child == self.target:
                cells[:, child] = rng.choice(binning.size, size=n, p=probabilities(binning.p))
            else:
                above = cells[:, parent] if parent is not None else np.zeros(n, np.int64)
                pairs = np.column_stack([cells[:, self.target], above])
                combos, which = np.unique(pairs, axis=0, return_inverse=True)
                for k, (y, cell) in enumerate(combos):
                    base = binning.p if parent is None else conditional[cell]
                    p = probabilities(np.asarray(base, float) * self.ratio[child][y])
                    rows = np.flatnonzero(which.ravel() == k)
                    cells[rows, child] = rng.choice(binning.size, size=len(rows), p=p)
            for cell in np.unique(cells[:, child]):
                rows = np.flatnonzero(cells[:, child] == cell)
                codes[rows, child] = binning.sample_in(int(cell), len(rows), rng)
        return codes
