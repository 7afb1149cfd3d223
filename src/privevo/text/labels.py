"""Label-restricted votes: each private text votes only among its own label's candidates.

Aug-PE's class-conditional generation (Xie et al. 2024, §3) writes candidates
per label and lets a private sample vote only for candidates of its label.
privevo does this inside the one noisy nearest-neighbour histogram the engine
already releases: every embedding (private and candidate) gets a label block
appended, ``LABEL_SCALE`` × the one-hot vector of its label in the public
label list. Unit-norm embeddings are at most 2 apart, while two points of
different labels are at least ``LABEL_SCALE·√2 > 2`` apart in the label block
alone, so a private text's nearest candidate (and its k nearest, as long as
its label has k candidates) is always one of its own label.

It is still one histogram over all candidates, and one private text still
adds one vote (or k votes of 1/√k): the sensitivity and the accounting are
those of the unlabelled histogram. A private label that is not in the public
list gets a zero label block: it votes among all candidates, at the same
distance offset from each, which changes no sensitivity either.
"""

from __future__ import annotations

import dataclasses
from typing import Sequence

import numpy as np

from ..selection import Selection, SelectionContext

__all__ = [
    "LABEL_SCALE",
    "LabelShares",
    "apportion",
    "label_block",
    "with_labels",
    "check_label_names",
]

LABEL_SCALE = (
    4.0  # > 2/√2: across labels, distances exceed any within-label distance of unit vectors
)


LABELS_MISMATCH = "labels and texts differ in length; pass one label per text"


def check_label_names(names) -> list:
    """The public label list: a non-empty sequence of distinct labels."""
    if isinstance(names, str) or not isinstance(names, Sequence) or len(names) == 0:
        raise ValueError("labels must be a non-empty list of the public label names")
    names = list(names)
    if len(set(map(str, names))) != len(names):
        raise ValueError("the public label names must be distinct")
    return names


def label_block(labels: Sequence, names: Sequence, scale: float = LABEL_SCALE) -> np.ndarray:
    """(n, len(names)): ``scale`` × one-hot of each label in ``names`` (zeros if absent)."""
    index = {str(name): j for j, name in enumerate(names)}
    block = np.zeros((len(labels), len(names)))
    for i, label in enumerate(labels):
        j = index.get(str(label))
        if j is not None:
            block[i, j] = scale
    return block


def with_labels(
    points: np.ndarray, labels: Sequence, names: Sequence, scale: float = LABEL_SCALE
) -> np.ndarray:
    """``points`` with their label block appended (the vectors the votes are cast on)."""
    points = np.asarray(points, dtype=np.float64)
    if len(labels) != len(points):
        raise ValueError(LABELS_MISMATCH)
    return np.hstack([points, label_block(labels, names, scale)])


def apportion(total: int, weights: np.ndarray, caps: np.ndarray) -> np.ndarray:
    """``total`` split ∝ ``weights`` by largest remainders, each part ≤ its cap and ≥ 1 while
    ``total`` allows (Hamilton's method; ties → lower index).

    ``weights`` ≥ 0 with a positive sum; ``caps`` ≥ 1. Parts a cap cuts short pass their
    excess on to the others in proportion to their weights.
    """
    weights = np.asarray(weights, dtype=np.float64)
    caps = np.asarray(caps, dtype=np.int64)
    total = int(min(total, caps.sum()))
    parts = np.minimum(np.ones_like(caps), caps) if total >= len(caps) else np.zeros_like(caps)
    while parts.sum() < total:
        open_ = parts < caps
        share = np.where(open_, weights, 0.0)
        if share.sum() <= 0:
            share = open_.astype(np.float64)
        left = total - parts.sum()
        ideal = parts + left * share / share.sum()
        grown = np.minimum(np.maximum(np.floor(ideal).astype(np.int64), parts), caps)
        if grown.sum() == parts.sum():  # every floor is spent: one more to the largest remainder
            j = int(np.argmax(np.where(open_, ideal - parts, -np.inf)))
            grown = parts.copy()
            grown[j] += 1
        parts = grown
    return parts


class LabelShares:
    """Each label's share of the selection is its share of the noisy votes (post-processing).

    In a labelled run a private text votes only among its own label's candidates, so the
    noisy votes on label l's candidates add up to n_l·v plus the noise of those counts
    (v = 1, or √k with k votes of 1/√k): an unbiased estimate of the private label
    count from the round's one release, free of the selection's geometry. The m
    selected points are apportioned to the labels by these sums (clipped at 0;
    :func:`apportion`, every label present keeping at least one point while m allows
    and none more than its candidates), and ``selector`` picks each label's points among
    that label's candidates alone, with m_l in place of m (GAPE's threshold then takes its
    union bound over that label's candidates). Rows without a label block
    form one more group. If no group's sum is positive, ``selector`` sees every
    candidate at once.
    """

    def __init__(self, selector, n_labels: int):
        self.selector = selector
        self.n_labels = int(n_labels)

    def select(
        self, candidates: np.ndarray, noisy_counts: np.ndarray, context: SelectionContext
    ) -> Selection:
        counts = np.asarray(noisy_counts, dtype=np.float64)
        groups = self._groups(candidates)
        mass = self._label_mass(counts, groups)
        if not np.any(mass > 0):
            return self.selector.select(candidates, counts, context)
        sizes = np.array([len(rows) for rows in groups])
        quotas = apportion(context.n_select, np.clip(mass, 0.0, None), sizes)
        picked = [
            self._select_within(candidates, counts, rows, int(quota), context)
            for rows, quota in zip(groups, quotas)
            if quota > 0
        ]
        return _joined(candidates, picked, quotas)

    def _groups(self, candidates: np.ndarray) -> list[np.ndarray]:
        """Candidate rows per public label (its block's one-hot), then the unlabelled rows."""
        block = np.asarray(candidates)[:, -self.n_labels :]
        own = np.where(block.max(axis=1) > 0, block.argmax(axis=1), self.n_labels)
        groups = [np.flatnonzero(own == j) for j in range(self.n_labels + 1)]
        return [rows for rows in groups if rows.size]

    @staticmethod
    def _label_mass(counts: np.ndarray, groups: list[np.ndarray]) -> np.ndarray:
        """Each group's sum of noisy votes: its private count's estimate (times the vote v)."""
        return np.array([counts[rows].sum() for rows in groups])

    def _select_within(self, candidates, counts, rows, quota, context) -> tuple:
        inner = dataclasses.replace(context, n_select=quota, n_private=None)
        selection = self.selector.select(candidates[rows], counts[rows], inner)
        if selection.indices is None:
            raise ValueError(
                "a labelled run needs a selector that keeps candidate rows (rank, subsample, "
                "gape, gape_agg)"
            )
        return rows, selection

    def __repr__(self) -> str:
        return f"LabelShares({self.selector!r}, n_labels={self.n_labels})"


def _joined(candidates: np.ndarray, picked: list[tuple], quotas: np.ndarray) -> Selection:
    """One selection from each label's: rows back in the full candidate numbering."""
    indices = np.concatenate([rows[s.indices] for rows, s in picked]).astype(np.int64)
    weights = [s.weights for _, s in picked]
    resized = any(s.variations_per_point for _, s in picked)  # GAPE's refill: keep the size
    return Selection(
        points=candidates[indices],
        indices=indices,
        weights=None if any(w is None for w in weights) else np.concatenate(weights),
        variations_per_point=max(1, -(-len(candidates) // len(indices)) - 1) if resized else None,
        info={"label_quotas": [int(q) for q in quotas], "by_label": [s.info for _, s in picked]},
    )
