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

from typing import Sequence

import numpy as np

__all__ = ["LABEL_SCALE", "label_block", "with_labels", "check_label_names"]

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
