"""Private rows as a :class:`Source`: the exact statistics every release is built on.

A source yields its private rows as in-memory blocks (``blocks()``); the
statistics below are computed block by block (map) and summed (reduce), so
in-memory arrays, Parquet/``.npy`` folders (:mod:`.files`) and Dask
collections (:mod:`.dask`, which counts on the cluster) share one kernel and
one noise step. Nothing here adds noise: :mod:`.release` does, once, after
the exact statistic.
"""

from __future__ import annotations

import hashlib
import math
from typing import Iterator

import numpy as np

from .._validation import check_same_dimension
from .domain import clip_to_ball
from .flat import PreparedCandidates, _assign_chunk, _chunk, as_block, expand_counts
from .kernel import partial_counts
from .votes import check_vote_arguments, neighbour_labels, user_votes

__all__ = ["Source", "ArraySource"]

_SUM_CHUNK = 8192


class Source:
    """Private rows read block by block. Subclasses implement ``blocks()`` and ``dim``.

    The statistics are exact (no noise) and private: only :mod:`.release`
    turns them into releases.
    """

    dim: int

    def blocks(self) -> Iterator[np.ndarray]:  # pragma: no cover - abstract
        raise NotImplementedError

    def _checked_blocks(self) -> Iterator[np.ndarray]:
        for block in self.blocks():
            if len(block):
                yield as_block(block, self.dim)

    def n_rows(self) -> int:
        """The exact number of private rows (private under add/remove adjacency)."""
        return sum(len(block) for block in self.blocks())

    def count(
        self, prepared: PreparedCandidates, backend: str = "auto", chunk_size=None, n_threads=None
    ) -> np.ndarray:
        """Votes per unique candidate: Σ over blocks of the kernel's counts (int64)."""
        check_same_dimension(prepared.dim, self.dim)
        total = np.zeros(len(prepared.unique), dtype=np.int64)
        for block in self._checked_blocks():
            total += partial_counts(block, prepared, backend, chunk_size, n_threads)
        return total

    def votes(
        self, prepared: PreparedCandidates, n_neighbors: int, groups, chunk_size=None
    ) -> np.ndarray:
        """float64 k-NN (1/√k each) or user-level votes per unique candidate (:mod:`.votes`)."""
        check_same_dimension(prepared.dim, self.dim)
        u = len(prepared.unique)
        if (
            groups is not None
        ):  # one block in memory at a time; only the labels (n × k ints) are kept
            labels = [
                neighbour_labels(b, prepared, n_neighbors, chunk_size)
                for b in self._checked_blocks()
            ]
            labels = np.concatenate(labels) if labels else np.zeros((0, 1), dtype=np.int64)
            k, groups = check_vote_arguments(n_neighbors, groups, len(labels))
            return user_votes(labels, groups, u, k)
        total = np.zeros(u, dtype=np.int64)
        for block in self._checked_blocks():
            total += np.bincount(
                neighbour_labels(block, prepared, n_neighbors, chunk_size).ravel(), minlength=u
            )
        return total / math.sqrt(n_neighbors)

    def cluster_sums(self, prepared: PreparedCandidates, radius: float, assign_by=None):
        """(sums (m, d), counts (m,)): rows clipped to the ``radius`` ball, per nearest centre.

        Row i is assigned by ``assign_by[i]`` (a row-aligned private view, e.g. a
        projection; default the row itself). One row changes the sums by ≤
        ``radius`` and one count by 1 (add/remove).
        """
        u, sums, counts, offset = len(prepared.unique), None, None, 0
        for block in self._checked_blocks():
            keys = (
                block
                if assign_by is None
                else as_block(assign_by[offset : offset + len(block)], prepared.dim)
            )
            if len(keys) != len(block):
                raise ValueError(
                    "assign_by has fewer rows than the data; pass one row per data row"
                )
            check_same_dimension(prepared.dim, keys.shape[1], "centers")
            s, c = _block_sums(block, keys, prepared, radius)
            sums = s if sums is None else sums + s
            counts = c if counts is None else counts + c
            offset += len(block)
        if assign_by is not None and offset != len(assign_by):
            raise ValueError("assign_by has more rows than the data; pass one row per data row")
        full = np.zeros((prepared.n_candidates, self.dim))
        full[prepared.first_index] = sums if sums is not None else 0.0
        counts = counts if counts is not None else np.zeros(u)
        return full, expand_counts(prepared, counts.astype(np.int64))

    def second_moment(self, radius: float) -> np.ndarray:
        """Σ_i x̄_i x̄_iᵀ (d, d) of the rows clipped to the L2 ball of ``radius``."""
        out = np.zeros((self.dim, self.dim))
        for block in self._checked_blocks():
            for start in range(0, len(block), _SUM_CHUNK):
                rows = clipped_rows(block, start, start + _SUM_CHUNK, radius)
                out += rows.T @ rows
        return out

    def digest(self, groups=None) -> str:
        """SHA-256 of the rows as float64 (and of the user ids): binds a checkpoint to its data.

        Private (it identifies the data set); stored only inside the checkpoint.
        """
        h = hashlib.sha256()
        if groups is not None:
            h.update(b"groups:" + repr(np.asarray(groups).tolist()).encode())
        for block in self.blocks():
            h.update(np.ascontiguousarray(block, dtype=np.float64).tobytes())
        h.update(repr((self.dim,)).encode())
        return h.hexdigest()


class ArraySource(Source):
    """An in-memory (or memory-mapped) 2-D array: one block, never copied."""

    def __init__(self, array):
        self.array = as_block(array, np.shape(array)[1] if np.ndim(array) == 2 else -1)
        self.dim = self.array.shape[1]

    def blocks(self) -> Iterator[np.ndarray]:
        yield self.array

    def n_rows(self) -> int:
        return len(self.array)

    def __len__(self) -> int:
        return len(self.array)


def clipped_rows(block, start: int, stop: int, radius: float) -> np.ndarray:
    """Rows start:stop of a private block in float64, each clipped to the L2 ball of ``radius``."""
    return clip_to_ball(
        np.asarray(block[start:stop], dtype=np.float64), radius
    )  # no overflow near 1e300


def _block_sums(block, keys, prepared: PreparedCandidates, radius: float):
    """Per-unique-centre sums of clipped rows and counts, for one block (chunked one-hot GEMMs)."""
    u, n = len(prepared.unique), len(block)
    rows_per = min(_SUM_CHUNK, max(n, 1))
    buf = np.empty((rows_per, u), dtype=np.float32)
    aug = np.ones((rows_per, prepared.dim + 1), dtype=np.float32)
    sums, counts = np.zeros((u, block.shape[1])), np.zeros(u)
    for start in range(0, n, rows_per):
        stop = min(n, start + rows_per)
        labels = _assign_chunk(_chunk(keys, start, stop, prepared), prepared, buf, aug)
        onehot = np.zeros((u, stop - start))
        onehot[labels, np.arange(stop - start)] = 1.0
        sums += onehot @ clipped_rows(block, start, stop, radius)
        counts += onehot.sum(axis=1)
    return sums, counts
