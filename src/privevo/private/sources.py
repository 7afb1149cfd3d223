"""One way in to private rows: :func:`as_source`, and the exact (un-noised) statistics.

Imports run one way: :mod:`.flat`/:mod:`.lowd` ← :mod:`.kernel` ← :mod:`.blocks`
(the :class:`Source` protocol) ← :mod:`.files`, :mod:`.dask` ← this module ←
:mod:`.release`. The exact statistics here are private; code outside
:mod:`privevo.private` uses them only for evaluation (:mod:`privevo.evaluation`)
and for the non-private ``epsilon=inf`` run, which its report marks as such.
"""

from __future__ import annotations

import os

import numpy as np

from .._validation import check_points
from .blocks import ArraySource, Source
from .dask import DaskSource, as_dask_array, is_dask_collection
from .files import BlockSource, open_source
from .kernel import expand_counts, prepare_candidates

__all__ = [
    "Source",
    "as_source",
    "nn_histogram",
    "cluster_sums",
    "second_moment",
    "data_digest",
]


def as_source(x, backend: str | None = None) -> Source:
    """The :class:`Source` of private data ``x``.

    A source is returned as is; a path opens a Parquet/``.npy`` source; Dask
    collections, or anything with ``backend="dask"``, count on a Dask
    cluster; arrays (and memory maps) are read in place, never copied.
    """
    if backend == "dask" and not isinstance(x, DaskSource):
        return DaskSource(open_source(x) if isinstance(x, (str, os.PathLike)) else x)
    if isinstance(x, Source):
        return x
    if isinstance(x, (str, os.PathLike)):
        return open_source(x)
    if is_dask_collection(x):
        return DaskSource(x)
    if not (isinstance(x, np.ndarray) and x.dtype.kind in "fiu"):
        x = check_points(x, "private data")
    return ArraySource(x)


def lazy_rows(x):
    """``x`` as a block source or 2-D Dask array when it is one (or a path to one), else None."""
    if isinstance(x, BlockSource):
        return x
    if isinstance(x, (str, os.PathLike)):
        return open_source(x)
    if is_dask_collection(x):
        return as_dask_array(x)
    return None


def nn_histogram(
    private,
    candidates,
    backend: str = "auto",
    chunk_size: int | None = None,
    metric: str = "euclidean",
    n_threads: int | None = None,
    n_neighbors: int = 1,
    groups=None,
) -> np.ndarray:
    """Exact vote counts over the candidates (private: no noise; see ``noisy_nn_histogram``).

    int64 counts summing to n; with ``n_neighbors > 1`` (each row gives 1/√k
    to its k nearest distinct candidates) or ``groups`` (each user's vote
    vector scaled to L2 norm ≤ 1) float64 votes. One row (one user) changes
    them by ≤ 1 in L2 under add/remove, ≤ √2 under replace.
    """
    prepared = prepare_candidates(candidates, metric)
    source = as_source(private, backend)
    if isinstance(n_neighbors, bool) or n_neighbors != 1 or groups is not None:
        from .votes import check_vote_arguments

        n_neighbors, groups = check_vote_arguments(n_neighbors, groups)
        votes = np.zeros(prepared.n_candidates)
        votes[prepared.first_index] = source.votes(prepared, n_neighbors, groups, chunk_size)
        return votes
    return expand_counts(prepared, source.count(prepared, backend, chunk_size, n_threads))


def cluster_sums(private, centers, assign_by=None, radius: float = 1.0):
    """Exact per-centre sums of the rows clipped to the ``radius`` ball, and counts (private)."""
    return as_source(private).cluster_sums(prepare_candidates(centers), float(radius), assign_by)


def second_moment(private, radius: float = 1.0) -> np.ndarray:
    """Exact Σ x̄x̄ᵀ of the rows clipped to the ``radius`` ball (private)."""
    return as_source(private).second_moment(float(radius))


def data_digest(private, groups=None) -> str:
    """SHA-256 of the private rows (and user ids): binds a checkpoint to its data (private)."""
    return as_source(private).digest(groups)
