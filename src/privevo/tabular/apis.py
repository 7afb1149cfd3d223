"""Tabular random API, variation API and Tab-PE's selection schedule (all public / post-processing).

Each works on codes (:mod:`privevo.tabular.encoding`) and hands the engine
embedded rows, so :class:`privevo.PrivateEvolution` runs unchanged.

- :class:`TabularRandomAPI` — every column drawn independently from its
  public domain: categories uniformly (or from the metadata's ``prior``),
  numerics uniformly on ``[lower, upper]`` (integers on the integers in it);
  a nullable numeric is missing with probability ``missing_share``; or, per
  column, from a given sampler (e.g. DP 1-way marginals, post-processing).
- :class:`TabularVariationAPI` — each child copies its parent and mutates
  each column with probability p_t, decaying geometrically over the rounds
  from ``start`` to ``end`` (Tab-PE's 0.5 → 0.01):
  p_t = start·(end/start)^(t/(T−2)) after round t = 0 … T−2; one column
  chosen uniformly is always mutated, so no child is a copy. A mutated
  categorical is redrawn from the random API's distribution; a mutated
  numeric moves by N(0, (p_t·(upper − lower))²), clipped to the domain, or,
  when the embedding carries the column's noisy CDF F, to F⁻¹(F(x) + N(0, p_t²))
  (or, with probability ``resample_share``, is redrawn like a random row's).
  Columns named in ``fixed`` (e.g. a class-conditional run's label) are
  never mutated.
- :class:`TabPESelection` — Tab-PE's schedule: "sample" (draw m candidates
  ∝ clipped noisy votes) in the first ``sample_rounds`` rounds, then
  "rank" (top m by noisy votes; the parents stay in the next population).
- :class:`RoundTagged` — wraps any privevo selector so that its selection
  carries the round number the variation API's schedule needs.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from ..selection import Rank, Selection, SelectionContext, Subsample
from .encoding import TableEmbedding
from .metadata import ColumnSpec

__all__ = [
    "TabularRandomAPI",
    "TabularVariationAPI",
    "TabPESelection",
    "RoundTagged",
    "mutation_probability",
]


class TabularRandomAPI:
    """Rows drawn from the public domain (module docstring); ``sample`` returns embedded rows."""

    def __init__(
        self,
        embedding: TableEmbedding,
        missing_share: float = 0.1,
        samplers: dict | None = None,
        joint=None,
    ):
        self.embedding = embedding
        self.missing_share = missing_share
        self.samplers = samplers or {}
        self.joint = joint  # None, or (n, rng) → codes of whole rows (e.g. a fitted pair tree)

    def __repr__(self) -> str:
        prior = ", DP 1-way marginals as prior" if self.samplers else ""
        prior += ", rows from the DP pair tree" if self.joint is not None else ""
        return f"TabularRandomAPI(missing_share={self.missing_share}{prior})"

    def sample_codes(self, n: int, rng: np.random.Generator) -> np.ndarray:
        if self.joint is not None:
            return self.joint(n, rng)
        return np.column_stack(
            [self.column(spec, n, rng) for spec in self.embedding.metadata.columns]
        )

    def sample(self, n: int, dim: int, rng: np.random.Generator) -> np.ndarray:
        return self.embedding.embed(self.sample_codes(n, rng))

    def column(self, spec: ColumnSpec, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` public draws of one column's codes (from ``samplers[name]`` when given)."""
        if spec.name in self.samplers:
            return self.samplers[spec.name](n, rng)
        if not spec.is_numeric:
            p = None if spec.prior is None else np.asarray(spec.prior, float) / np.sum(spec.prior)
            return rng.choice(spec.n_codes, size=n, p=p).astype(float)
        if spec.integer:
            lo, hi = math.ceil(spec.lower), math.floor(spec.upper)
            values = (
                rng.integers(lo, hi + 1, size=n).astype(float)
                if lo <= hi
                else np.full(n, spec.lower)
            )
        else:
            values = rng.uniform(spec.lower, spec.upper, size=n)
        if spec.nullable:
            values[rng.random(n) < self.missing_share] = np.nan
        return values


def mutation_probability(round_: int, rounds: int, start: float, end: float) -> float:
    """p_t = start·(end/start)^(t/(T−2)) for the variation after round t (0-based) of T."""
    if rounds <= 2:
        return start
    return start * (end / start) ** (min(round_, rounds - 2) / (rounds - 2))


class TabularVariationAPI:
    """Column-wise mutation with a decaying probability (module docstring)."""

    def __init__(
        self,
        random_api: TabularRandomAPI,
        per_point: int = 2,
        start: float = 0.5,
        end: float = 0.01,
        resample_share: float = 0.1,
        fixed: tuple = (),
    ):
        self.random_api = random_api
        self.per_point = per_point
        self.start = start
        self.end = end
        self.resample_share = resample_share
        self.fixed = tuple(fixed)

    def __repr__(self) -> str:
        return (
            f"TabularVariationAPI(per_point={self.per_point}, start={self.start}, end={self.end}, "
            f"resample_share={self.resample_share}"
            + (f", fixed={self.fixed}" if self.fixed else "")
            + ")"
        )

    def vary_selection(self, selection: Selection, rng: np.random.Generator) -> np.ndarray:
        """Children of the selected rows (engine seam); the round comes from ``selection.info``."""
        k = selection.variations_per_point or self.per_point
        p = mutation_probability(
            selection.info.get("round", 0), selection.info.get("rounds", 2), self.start, self.end
        )
        embedding = self.random_api.embedding
        parents = embedding.decode(selection.points)
        return embedding.embed(self.mutate(np.repeat(parents, k, axis=0), p, rng))

    def mutate(self, codes: np.ndarray, p: float, rng: np.random.Generator) -> np.ndarray:
        """Each cell mutated with probability ``p``; one random column per row always
        (``fixed`` columns never)."""
        n, c = codes.shape
        names = self.random_api.embedding.metadata.names
        free = np.array([j for j in range(c) if names[j] not in self.fixed])
        mask = rng.random((n, c)) < p
        mask[:, [j for j in range(c) if names[j] in self.fixed]] = False
        mask[np.arange(n), free[rng.integers(len(free), size=n)]] = True
        out = codes.copy()
        for j, spec in enumerate(self.random_api.embedding.metadata.columns):
            rows = np.flatnonzero(mask[:, j])
            out[rows, j] = self._mutate_column(codes[rows, j], spec, p, rng)
        return out

    def _mutate_column(self, values: np.ndarray, spec: ColumnSpec, p: float, rng) -> np.ndarray:
        fresh = self.random_api.column(spec, len(values), rng)
        if not spec.is_numeric:
            return fresh
        transform = self.random_api.embedding.transforms.get(spec.name)
        if transform is not None:  # a step of p in the noisy-CDF space: where the data is
            missing = np.isnan(values)
            u = transform.cdf(np.where(missing, spec.lower, values))
            moved = transform.inverse(u + rng.normal(0.0, p, size=len(values)))
            moved = np.where(missing, values, moved)
            return np.where(rng.random(len(values)) < self.resample_share, fresh, moved)
        width = spec.upper - spec.lower
        moved = np.clip(
            values + rng.normal(0.0, p * width, size=len(values)), spec.lower, spec.upper
        )
        if spec.integer:
            moved = np.round(moved)
        return np.where(rng.random(len(values)) < self.resample_share, fresh, moved)


class TabPESelection:
    """Tab-PE's selection: subsample ∝ votes for ``sample_rounds`` rounds, then rank.

    ``sample_rounds=None``: the first half of the rounds, ⌊T/2⌋.
    """

    def __init__(self, sample_rounds: int | None = None):
        self.sample_rounds = sample_rounds

    def __repr__(self) -> str:
        return f"TabPESelection(sample_rounds={self.sample_rounds})"

    def select(
        self, candidates: np.ndarray, noisy_counts: np.ndarray, context: SelectionContext
    ) -> Selection:
        cut = context.iterations // 2 if self.sample_rounds is None else self.sample_rounds
        inner = Subsample() if context.iteration < cut else Rank()
        return RoundTagged(inner).select(candidates, noisy_counts, context)


class RoundTagged:
    """Any selector, its selection tagged with ``info["round"]`` and ``info["rounds"]``."""

    def __init__(self, selector):
        self.selector = selector

    def __repr__(self) -> str:
        return repr(self.selector)

    def select(
        self, candidates: np.ndarray, noisy_counts: np.ndarray, context: SelectionContext
    ) -> Selection:
        chosen = self.selector.select(candidates, noisy_counts, context)
        info = {**chosen.info, "round": context.iteration, "rounds": context.iterations}
        return dataclasses.replace(chosen, info=info)
