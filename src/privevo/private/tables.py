"""Tabular releases: noisy cell counts (1-way, tree levels, 2-way) and pair dependence scores.

Both take the private rows as integer *cells*: ``cells[i, k]`` is row i's
cell in histogram k under a public map (a bin of a public domain, a
category, a pair of them), −1 for "no cell" (e.g. a missing value in a
histogram of present values). The maps are the caller's public inputs; the
counting and the noise happen here. ``cells`` is an (n, K) array or a
:class:`~privevo.private.blocks.Source` of such blocks (a table larger than
memory, :mod:`.frames`): the counts are summed block by block, so they do not
depend on how the rows are split.

* :func:`noisy_cell_counts` — K histograms; one row adds 1 to at most one
  cell of each, so each has L2 sensitivity 1 (add/remove) or √2 (replace)
  and the K releases with noise σ are ``count=K`` releases.
* :func:`noisy_dependence_scores` — for each pair (a, b) of histograms, the
  L1 distance between the pair's exact joint counts and a public expected
  table rounded to integers (MST's selection score, McKenna et al. 2021 §4,
  with the expected table from released 1-way marginals): an integer. One row
  moves one joint count by 1, so each score moves by at most 1 (add/remove)
  or 2 (replace); the P scores are ``count=P`` releases. Releasing every noisy
  score and taking the best pairs afterwards is post-processing (a "report
  noisy scores").

* :class:`ExponentialChoices` / :func:`exponential_choice` — one of several
  marginals (tuples of histograms) chosen by the exponential mechanism on the L1
  distance between its exact joint counts and a public estimate, less a public
  penalty (AIM's selection, McKenna et al., VLDB 2022): one row moves each distance
  by at most 1 (add/remove) or 2 (replace).

The counts and scores are integers, so every noise of :func:`.release.release_noise`
applies exactly (``noise``: ``"gaussian"``, or the discrete Gaussians on the
lattice ℤ, granularity 1, with no rounding and no added sensitivity;
docs/privacy.md, "Accounting").
"""

from __future__ import annotations

from typing import Iterator

import numpy as np

from ..adjacency import histogram_l1_sensitivity, vote_sensitivity
from .blocks import Source
from .release import NOISES, Release, _check_release, noisy_statistic, observe_exact, release_noise

__all__ = [
    "noisy_cell_counts",
    "noisy_dependence_scores",
    "ExponentialChoices",
    "exponential_choice",
]


def _check_noise(noise: str) -> None:
    """The Gaussian noises only: the sensitivities here are L2 (Laplace's would be L1)."""
    if noise not in NOISES:
        raise ValueError(f"noise must be one of {list(NOISES)}, got {noise!r}")


def _exact_counts(cells: np.ndarray, size: int) -> np.ndarray:
    column = np.asarray(cells, dtype=np.int64)
    return np.bincount(column[column >= 0], minlength=size)[:size].astype(np.float64)


def _cell_blocks(cells, n_histograms: int) -> Iterator[np.ndarray]:
    """The (rows, K) integer blocks of ``cells`` (an array: one block)."""
    blocks = cells.blocks() if isinstance(cells, Source) else [cells]
    for block in blocks:
        block = np.asarray(block)
        if block.ndim != 2 or block.shape[1] != n_histograms:
            raise ValueError(  # the block's row count is private: never said
                f"cells must be 2-D blocks of {n_histograms} columns (rows x histograms)"
            )
        yield block.astype(np.int64, copy=False)


def _summed_counts(cells, sizes) -> list[np.ndarray]:
    """Exact counts of every histogram, summed over the blocks."""
    totals = [np.zeros(int(size)) for size in sizes]
    for block in _cell_blocks(cells, len(sizes)):
        for k, size in enumerate(sizes):
            totals[k] += _exact_counts(block[:, k], int(size))
    return totals


def noisy_cell_counts(
    name: str,
    cells: np.ndarray | Source,
    sizes,
    sigma: float,
    rng: np.random.Generator,
    adjacency: str = "add_remove",
    noise: str = "gaussian",
) -> Release:
    """K noisy histograms of ``cells`` (n, K) with ``sizes[k]`` cells each (value: a list)."""
    _check_release(rng, adjacency, sigma=sigma)
    _check_noise(noise)
    sensitivity = vote_sensitivity(adjacency)  # a row adds 1 to one cell, as a vote does
    exact = _summed_counts(cells, sizes)
    observe_exact(name, exact, sensitivity, noise, adjacency)
    noisy = [release_noise(counts, sigma, rng, noise) for counts in exact]
    return Release(name, float(sigma), sensitivity, noise, adjacency, len(sizes), noisy)


def noisy_dependence_scores(
    name: str,
    cells: np.ndarray | Source,
    sizes,
    pairs,
    expected,
    sigma: float,
    rng: np.random.Generator,
    adjacency: str = "add_remove",
    noise: str = "gaussian",
) -> Release:
    """Noisy ‖joint counts(a, b) − round(expected[p])‖₁ of every pair p = (a, b): integers
    (value: an array)."""
    _check_release(rng, adjacency, sigma=sigma)
    _check_noise(noise)
    joints = _clique_counts(cells, sizes, pairs)
    scores = np.array([np.abs(j - np.rint(np.ravel(e))).sum() for j, e in zip(joints, expected)])
    sensitivity = histogram_l1_sensitivity(adjacency)  # one score per pair: its own release
    return noisy_statistic(name, scores, sigma, sensitivity, rng, noise, adjacency, per_value=True)


def _clique_counts(cells, sizes, cliques) -> list[np.ndarray]:
    """Exact joint counts of every clique (a tuple of histogram indices; cells row-major over
    its histograms), summed over the blocks; a row with no cell in one of a clique's
    histograms is in none of its cells."""
    cliques = [tuple(int(j) for j in clique) for clique in cliques]
    joints = [np.zeros(int(np.prod([int(sizes[j]) for j in c]))) for c in cliques]
    for block in _cell_blocks(cells, len(sizes)):
        for joint, clique in zip(joints, cliques):
            present = np.all(block[:, list(clique)] >= 0, axis=1)
            cell = np.zeros(len(block), dtype=np.int64)
            for j in clique:
                cell = cell * int(sizes[j]) + block[:, j]
            joint += _exact_counts(np.where(present, cell, -1), len(joint))
    return joints


class ExponentialChoices:
    """The exponential mechanism over a fixed set of ``cliques`` (tuples of histogram indices
    of ``cells``), their exact joint counts counted once: each :meth:`choose` is one release.
    The counts stay inside this object; only releases leave it."""

    def __init__(self, cells: np.ndarray | Source, sizes, cliques):
        self._joints = _clique_counts(cells, sizes, cliques)

    def choose(
        self,
        name: str,
        estimates,
        penalties,
        epsilon: float,
        rng: np.random.Generator,
        adjacency: str = "add_remove",
        secure: bool = False,
    ) -> Release:
        """One clique (value: its index). Quality q_r = ‖joint counts of r − estimates[r]‖₁ −
        penalties[r], the estimate and penalty public; P(r) ∝ exp(ε·q_r/(2Δ)), Δ = 1
        (add/remove) or 2 (replace), drawn as argmax_r q_r + Gumbel(2Δ/ε) (the Gumbel-max
        trick). Released as noise ``"exponential"`` with σ = 2Δ/ε: ε-DP and ε²/8-zCDP
        (:class:`.release.Release`); ``secure``: the Gumbel noise from the OS CSPRNG (``rng``
        not used)."""
        _check_release(rng, adjacency, epsilon=epsilon)
        quality = np.array(
            [
                np.abs(j - np.ravel(e)).sum() - float(p)
                for j, e, p in zip(self._joints, estimates, penalties)
            ]
        )
        sensitivity = histogram_l1_sensitivity(adjacency)
        observe_exact(name, quality.reshape(-1, 1), sensitivity, "exponential", adjacency)
        scale = 2.0 * sensitivity / epsilon
        kind = "exponential_secure" if secure else "exponential"
        choice = int(np.argmax(release_noise(quality, scale, rng, kind)))
        return Release(name, scale, sensitivity, "exponential", adjacency, 1, choice)


def exponential_choice(
    name: str,
    cells: np.ndarray | Source,
    sizes,
    cliques,
    estimates,
    penalties,
    epsilon: float,
    rng: np.random.Generator,
    adjacency: str = "add_remove",
    secure: bool = False,
) -> Release:
    """One of the ``cliques`` by the exponential mechanism (:meth:`ExponentialChoices.choose`),
    counted for this one choice."""
    choices = ExponentialChoices(cells, sizes, cliques)
    return choices.choose(name, estimates, penalties, epsilon, rng, adjacency, secure)
