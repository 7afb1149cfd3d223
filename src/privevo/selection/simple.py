"""The classic selectors: SubsamplePE's sampling and Aug-PE's ranking."""

from __future__ import annotations

import numpy as np

from .._params import Plugin
from ._base import Selection, SelectionContext, subset


class Subsample(Plugin):
    """Original PE: clip negative counts to 0, draw m candidates ∝ count, with replacement.

    If every clipped count is 0 the draw is uniform.
    """

    def __init__(self, replace: bool = True):
        self.replace = replace

    def select(
        self, candidates: np.ndarray, noisy_counts: np.ndarray, context: SelectionContext
    ) -> Selection:
        weights = np.clip(noisy_counts, 0.0, None)
        total = weights.sum()
        p = weights / total if total > 0 else None
        m = context.n_select
        if not self.replace:
            positive = int(np.count_nonzero(weights)) if total > 0 else len(candidates)
            m = min(m, positive)
        idx = context.rng.choice(len(candidates), size=m, replace=self.replace, p=p)
        return subset(candidates, idx, weights[idx])


class Rank(Plugin):
    """Aug-PE: the m candidates with the largest noisy counts (ties → lower index)."""

    def select(
        self, candidates: np.ndarray, noisy_counts: np.ndarray, context: SelectionContext
    ) -> Selection:
        m = min(context.n_select, len(candidates))
        idx = np.argsort(-np.asarray(noisy_counts), kind="stable")[:m]
        return subset(candidates, idx, noisy_counts[idx])
