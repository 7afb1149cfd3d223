"""Adaptive choice of the measured marginals (AIM, McKenna et al. VLDB 2022), the alternative to
MST's fixed tree (:mod:`.pairs`): ``TabularPE(pair_selection="adaptive")``.

C rounds (C columns, public), each measuring one clique: a pair, or a triple of at most
``MAX_CLIQUE_CELLS`` pair cells. In round t every candidate r is scored

    q_r = ‖M_r(D) − n̂·M_r(p̂)‖₁ − √(2/π)·σ·K_r

(M_r the clique's counts, p̂ the current model, n̂ the released row count, σ the measurement's
noise, K_r the clique's cells): how far the model is from the data beyond what a noisy table
of r would resolve — a triple is chosen only where its cells are dense enough. The choice is
private (:func:`privevo.private.exponential_choice`), its table a noisy count release
(:func:`privevo.private.noisy_cell_counts`). Everything else is post-processing:

- the model p̂ (:class:`CliqueModel`) is a public sample of cell tuples, each column drawn
  from its released 1-way shares, weighted by IPF to every measured table (its departure
  from p̂ shrunk by James–Stein) — a sample-based stand-in for Private-PGM's graphical model;
- the rows' tree model for the PE rounds and the output pool (:class:`.pairs.TreeModel`) follows
  the maximum spanning tree of p̂'s pairwise mutual information over the measured cliques,
  with p̂'s 2-way tables; the pool is raked to p̂'s table of every measured clique.
"""

from __future__ import annotations

import math
from itertools import combinations

import numpy as np

from .marginals import probabilities, rake
from .pairs import TargetTreeModel, TreeModel, spanning_tree

__all__ = [
    "MAX_CLIQUE_CELLS",
    "MODEL_ROWS",
    "MODEL_FLOOR",
    "candidates",
    "CliqueModel",
    "adaptive_model",
]

MAX_CLIQUE_CELLS = 1000  # a triple of more pair cells is never a candidate (10·10·10 at most)
MODEL_ROWS = (20_000, 100_000)  # rows of the public sample standing for p̂: 2·n̂ within these
# (20 000 fitted gss_wages' 49 000 rows worse than MST's tree, 2-way decile TVD .067 against
# .044; 100 000 fitted them at .043; a small table's noise is far above 20 000 rows' grain)
MODEL_SWEEPS = 20  # IPF sweeps after each measurement
MODEL_FLOOR = 0.1  # a fitted clique table keeps at least this share of p̂'s own cells (add)


def candidates(sizes: list[int]) -> list[tuple[int, ...]]:
    """Every pair of columns, and every triple of at most ``MAX_CLIQUE_CELLS`` cells (public:
    ``sizes`` are the pair binnings')."""
    columns = range(len(sizes))
    pairs = list(combinations(columns, 2))
    triples = [
        t for t in combinations(columns, 3) if math.prod(sizes[j] for j in t) <= MAX_CLIQUE_CELLS
    ]
    return pairs + triples


def clique_cells(cells: np.ndarray, clique, sizes) -> np.ndarray:
    """Each row's cell of ``clique`` (row-major over the clique's columns)."""
    out = np.zeros(len(cells), dtype=np.int64)
    for j in clique:
        out = out * int(sizes[j]) + cells[:, j]
    return out


def penalty(clique, sizes, sigma: float) -> float:
    """√(2/π)·σ·K: the expected L1 norm of a noisy table's noise over its K cells."""
    return math.sqrt(2 / math.pi) * sigma * math.prod(int(sizes[j]) for j in clique)


class CliqueModel:
    """p̂: 2·n̂ public cell tuples (n̂ = ``total``, the released row count; within
    ``MODEL_ROWS``), each column drawn from its 1-way shares, with weights raked (IPF) to the
    shares and to every measured clique's table."""

    def __init__(self, binnings: list, rng: np.random.Generator, total: float):
        sample_size = int(np.clip(2 * total, *MODEL_ROWS))
        self.sizes = [b.size for b in binnings]
        self.cells = np.column_stack(
            [rng.choice(b.size, size=sample_size, p=probabilities(b.p)) for b in binnings]
        )
        self.one_way = [(self.cells[:, j], probabilities(b.p)) for j, b in enumerate(binnings)]
        self.measured: list = []
        self.weights = np.full(sample_size, 1.0 / sample_size)

    def marginal(self, clique) -> np.ndarray:
        """p̂'s distribution over the clique's cells."""
        size = math.prod(self.sizes[j] for j in clique)
        cells = clique_cells(self.cells, clique, self.sizes)
        return np.bincount(cells, weights=self.weights, minlength=size) / self.weights.sum()

    def add(self, clique, noisy: np.ndarray, sigma: float = 0.0, total: float = 1.0) -> None:
        """Fit p̂ to a measured clique's noisy table as well, its departure from p̂ shrunk by
        the positive-part James–Stein factor (1 − (K − 2)σ²/‖T̃ − n̂·p̂_r‖²)₊ (K cells, n̂
        ``total``): a table whose departure is mostly noise moves p̂ little. Each cell keeps
        at least ``MODEL_FLOOR`` of p̂'s own: raking to clipped tables whose zeros disagree (a
        category of 38 rows whose noisy cells clip to 0 in one table and not in another)
        empties the category for good, where a floor lets the tables meet. Each sweep ends on
        the 1-way shares, so p̂'s margins are the released ones."""
        noisy = np.asarray(noisy, float)
        expected = total * self.marginal(clique)
        gap = noisy - expected
        norm = float((gap**2).sum())
        shrink = max(0.0, 1.0 - (len(noisy) - 2) * sigma**2 / norm) if norm > 0 else 1.0
        target = probabilities(np.maximum(expected + shrink * gap, MODEL_FLOOR * expected))
        self.measured.append((clique_cells(self.cells, clique, self.sizes), target))
        constraints = self.measured + self.one_way
        cells = np.column_stack([c for c, _ in constraints])
        self.weights = rake(self.weights, cells, [t for _, t in constraints], MODEL_SWEEPS)
        self.weights = self.weights / self.weights.sum()


def mutual_information(table: np.ndarray) -> float:
    """I(A; B) of a 2-way distribution (nats)."""
    p = table / table.sum()
    product = np.outer(p.sum(axis=1), p.sum(axis=0))
    positive = p > 0
    return float((p[positive] * np.log(p[positive] / product[positive])).sum())


def adaptive_model(
    binnings: list, model: CliqueModel, measured: list, star=None, target=None
) -> dict:
    """The rows' tree model and the pool's constraints from the final p̂ (post-processing):
    the maximum spanning tree of p̂'s mutual information over the pairs inside the measured
    cliques (other pairs: independent), p̂'s 2-way tables on its edges, and p̂'s table of every
    measured clique. (Rows drawn from p̂ itself, with a 20 000-row p̂, fitted gss_wages worse:
    2-way decile TVD .095 against the tree's .070, seeds 0–2.)

    With a ``target`` column and its ``star`` ((edges, noisy tables)): a forest over the other
    columns, :class:`.pairs.TargetTreeModel` of it and the star, and the star's tables (clipped
    and made consistent with the 1-way shares, not cut) among the constraints."""
    sizes = model.sizes
    inside = sorted(
        {p for clique, _, _ in measured for p in combinations(clique, 2) if target not in p}
    )
    tables = {p: model.marginal(p).reshape(sizes[p[0]], sizes[p[1]]) for p in inside}
    edges = spanning_tree([mutual_information(tables[p]) for p in inside], inside, len(sizes))
    forest = [tables[e] for e in edges]
    unique = dict.fromkeys(clique for clique, *_ in measured)
    cliques = [(clique, model.marginal(clique)) for clique in unique]
    if star is None:
        tree = TreeModel(binnings, edges, forest)
        return {"tree": tree, "edges": edges, "tables": forest, "cliques": cliques}
    tree = TargetTreeModel(binnings, target, (edges, forest), star)
    star_tables = [table.ravel() for table in tree.tables[len(edges) :]]
    return {
        "tree": tree,
        "edges": [*edges, *star[0]],
        "tables": tree.tables,
        "cliques": cliques + list(zip(star[0], star_tables)),
    }
