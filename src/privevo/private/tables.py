"""Tabular releases: noisy cell counts (tree levels, 2-way marginals) and pair dependence scores.

Both take the private rows as integer *cells*: ``cells[i, k]`` is row i's
cell in histogram k under a public map (a bin of a public domain, a
category, a pair of them), −1 for "no cell" (e.g. a missing value in a
histogram of present values). The maps are the caller's public inputs; the
counting and the noise happen here.

* :func:`noisy_cell_counts` — K histograms; one row adds 1 to at most one
  cell of each, so each has L2 sensitivity 1 (add/remove) or √2 (replace)
  and the K releases with noise σ are ``count=K`` Gaussian releases.
* :func:`noisy_dependence_scores` — for each pair (a, b) of histograms, the
  L1 distance between the pair's exact joint counts and a public expected
  table (MST's selection score, McKenna et al. 2021 §4, with the expected
  table from released 1-way marginals). One row moves one joint count by 1,
  so each score moves by at most 1 (add/remove) or 2 (replace); the P scores
  are ``count=P`` releases. Releasing every noisy score and taking the best
  pairs afterwards is post-processing (a Gaussian "report noisy scores").
"""

from __future__ import annotations

import math

import numpy as np

from .release import Release, _check_release, release_noise

__all__ = ["noisy_cell_counts", "noisy_dependence_scores"]


def _exact_counts(cells: np.ndarray, size: int) -> np.ndarray:
    column = np.asarray(cells, dtype=np.int64)
    return np.bincount(column[column >= 0], minlength=size)[:size].astype(np.float64)


def noisy_cell_counts(
    name: str,
    cells: np.ndarray,
    sizes,
    sigma: float,
    rng: np.random.Generator,
    adjacency: str = "add_remove",
) -> Release:
    """K noisy histograms of ``cells`` (n, K) with ``sizes[k]`` cells each (value: a list)."""
    _check_release(rng, adjacency, sigma=sigma)
    cells = np.asarray(cells)
    if cells.ndim != 2 or cells.shape[1] != len(sizes):
        raise ValueError(f"cells must be (n, {len(sizes)}), got shape {cells.shape}")
    sensitivity = 1.0 if adjacency == "add_remove" else math.sqrt(2.0)
    noisy = [
        release_noise(_exact_counts(cells[:, k], int(size)), sigma, rng)
        for k, size in enumerate(sizes)
    ]
    return Release(name, float(sigma), sensitivity, "gaussian", adjacency, len(sizes), noisy)


def noisy_dependence_scores(
    name: str,
    cells: np.ndarray,
    sizes,
    pairs,
    expected,
    sigma: float,
    rng: np.random.Generator,
    adjacency: str = "add_remove",
) -> Release:
    """Noisy ‖joint counts(a, b) − expected[p]‖₁ of every pair p = (a, b) (value: an array)."""
    _check_release(rng, adjacency, sigma=sigma)
    cells = np.asarray(cells, dtype=np.int64)
    scores = np.empty(len(pairs))
    for p, (a, b) in enumerate(pairs):
        size = int(sizes[a]) * int(sizes[b])
        joint = np.where(
            (cells[:, a] >= 0) & (cells[:, b] >= 0), cells[:, a] * sizes[b] + cells[:, b], -1
        )
        scores[p] = np.abs(_exact_counts(joint, size) - np.ravel(expected[p])).sum()
    sensitivity = 1.0 if adjacency == "add_remove" else 2.0
    noisy = release_noise(scores, sigma, rng)
    return Release(name, float(sigma), sensitivity, "gaussian", adjacency, len(pairs), noisy)
