"""DPKMeans' private rows at any size: the unit-ball map, HDPE's projection and the recover sums,
block by block.

DPKMeans reads its private rows through these views (docs/kmeans.md, "Data larger than
memory"):

* :func:`unit_rows` — the rows mapped into the unit ball by the public domain
  (:meth:`~.domain.Domain.to_unit_ball`), a public per-row map: an in-memory array is mapped
  at once, a block source (Parquet, ``.npy`` folder) as each block is read, a Dask array
  partition by partition (:class:`UnitBallSource`, ``map_blocks``);
* :func:`project_rows` — HDPE-means' projection z ↦ zᵀB, per row likewise;
* :class:`BlockCache` — the mapped blocks of a block source kept in memory, first come, up to a
  fixed public budget (``cache_mib``, default :data:`CACHE_MIB`), so that the fit's later passes
  (every PE round and recover step reads all rows) skip reading and mapping them again;
* :class:`ChunkedRows` and :class:`RecoverRows` — :class:`~.blocks.Source` views that read
  those rows in chunks of ``blocks._SUM_CHUNK`` rows (the in-memory sums' chunk) aligned on
  the row index, whatever the blocks the
  data comes in. The float sums (the recover step's cluster sums, HDPE's second moment) add
  the same chunk partials in the same order, so an array, a Parquet folder and a Dask
  collection give bit-identical exact statistics, hence identical releases for the same seed.

The histogram counts are integers and come from the engine's own sources (:mod:`.sources`);
nothing here adds noise (:mod:`.release` does).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Iterator

import numpy as np

from . import blocks
from .blocks import Source
from .dask import as_dask_array, is_dask_collection
from .domain import Domain
from .files import BlockSource, open_source
from .flat import _assign_chunk, _chunk, as_block
from .kernel import PreparedCandidates, expand_counts

__all__ = [
    "CACHE_MIB",
    "BlockCache",
    "aligned_chunks",
    "ChunkedRows",
    "DaskBlocks",
    "RecoverRows",
    "ScaledDomain",
    "UnitBallSource",
    "is_lazy",
    "lazy_input",
    "row_blocks",
    "project_rows",
    "row_count",
    "row_dim",
    "scaled_domain",
    "unit_rows",
]


CACHE_MIB = 256  # MiB of mapped blocks a streamed DPKMeans fit keeps in memory (docs/kmeans.md)


def lazy_input(X, columns=None, backend: str = "auto"):
    """``X`` as a block source (or, for ``backend="dask"``, a 2-D Dask array) when it is one or
    a path to one, else None.

    A path opens a Parquet file/folder (``columns``: the numeric columns, by name) or a
    ``.npy`` file/folder; a Dask DataFrame keeps ``columns`` (default: all). A Dask collection
    is counted on its cluster under ``backend="dask"``, else read partition by partition on
    the caller (:class:`DaskBlocks`), as Dask DataFrames are for TabularPE.
    """
    if isinstance(X, (str, os.PathLike)):
        return open_source(X, columns=columns)
    if isinstance(X, BlockSource):
        return X
    if is_dask_collection(X):
        if columns is not None and hasattr(X, "columns"):
            X = X[list(columns)]
        return as_dask_array(X) if backend == "dask" else DaskBlocks(as_dask_array(X))
    if columns is not None:
        raise ValueError("columns= applies to a Parquet path or a Dask DataFrame only; drop it")
    return None


def row_dim(rows) -> int:
    """d of an array, block source or Dask array (public: the schema)."""
    return int(rows.shape[1])


def row_count(rows) -> int:
    """The exact number of rows (private under add/remove: only plan checks and replace use it)."""
    if isinstance(rows, np.ndarray):
        return int(rows.shape[0])
    if isinstance(rows, BlockSource):
        return int(rows.n_rows())
    return int(as_dask_array(rows).shape[0])


@dataclass(frozen=True)
class DaskPart:
    """One row partition of a Dask array, computed (by the default scheduler) when read."""

    part: Any
    rows: int

    def read(self) -> np.ndarray:
        return np.asarray(self.part.compute())


class DaskBlocks(BlockSource):
    """A 2-D Dask array read one row partition at a time on the caller."""

    def __init__(self, array):
        self.path = "a Dask collection"
        self.shape, self.dtype = tuple(int(v) for v in array.shape), np.dtype(array.dtype)
        parts = array.to_delayed().ravel()
        self._refs = [DaskPart(p, int(r)) for p, r in zip(parts, array.chunks[0])]

    def block_refs(self) -> list[DaskPart]:
        return list(self._refs)


@dataclass(frozen=True)
class UnitBallRef:
    """A block reference whose rows are mapped into the unit ball (then by ``basis``) when read.

    Picklable, so Dask workers read and map a block themselves.
    """

    ref: Any
    domain: Domain
    basis: np.ndarray | None = None

    @property
    def rows(self) -> int:
        return self.ref.rows

    def unit_ball(self) -> np.ndarray:
        """The block's rows mapped into the unit ball (before the projection)."""
        return self.domain.to_unit_ball(np.asarray(self.ref.read(), dtype=np.float64))

    def read(self) -> np.ndarray:
        z = self.unit_ball()
        return z if self.basis is None else z @ self.basis


class BlockCache:
    """Mapped blocks kept in memory, first come, while they fit in ``budget`` bytes (public).

    Block i is kept when it fits beside the blocks kept before it; later reads of it return
    the same read-only array, so a cached and a re-read block give bit-identical statistics.
    The budget is a parameter (``DPKMeans(cache_mib=...)``), never sized from the data.
    """

    def __init__(self, budget: int):
        self.budget, self.used, self._blocks = int(budget), 0, {}

    def get(self, index: int, read) -> np.ndarray:
        block = self._blocks.get(index)
        if block is None:
            block = read()
            if self.used + block.nbytes <= self.budget:
                block.flags.writeable = False
                self._blocks[index], self.used = block, self.used + block.nbytes
        return block


class UnitBallSource(BlockSource):
    """``source``'s rows in the unit ball of ``domain`` (and projected by ``basis``), per block.

    With a ``cache`` (:class:`BlockCache`) the mapped blocks read on the caller are kept up to
    its budget (shared with the projected view); Dask workers read their refs uncached.
    """

    def __init__(
        self,
        source: BlockSource,
        domain: Domain,
        basis: np.ndarray | None = None,
        cache: BlockCache | None = None,
    ):
        self.source, self.domain, self.basis, self.cache = source, domain, basis, cache
        self.path = getattr(source, "path", "")
        d = source.shape[1] if basis is None else basis.shape[1]
        self.shape, self.dtype = (source.shape[0], d), np.dtype(np.float64)
        self._refs = [UnitBallRef(ref, domain, basis) for ref in source.block_refs()]

    def block_refs(self) -> list[UnitBallRef]:
        return list(self._refs)

    def iter_blocks(self) -> Iterator[np.ndarray]:
        if self.cache is None:
            yield from super().iter_blocks()
            return
        for index, ref in enumerate(self._refs):
            z = self.cache.get(index, ref.unit_ball)
            yield z if self.basis is None else z @ self.basis

    def projected(self, basis: np.ndarray) -> "UnitBallSource":
        if self.basis is not None:
            raise ValueError("the rows are projected already")
        return UnitBallSource(self.source, self.domain, basis, self.cache)


@dataclass(frozen=True)
class ScaledDomain(Domain):
    """A box with every column scaled to [−1, 1] by its own interval, (x − m)/h (m its
    centre, h its half-width), then by 1/√d into the unit ball: distances in scaled units.

    A public per-column map, as the box itself; ``radius`` is √d, the ball of the scaled box.
    """

    def to_unit_ball(self, X: np.ndarray) -> np.ndarray:
        lo, hi = self.box
        half = (hi - lo) / 2
        return (np.clip(X, lo, hi) - self.center) / half / self.radius

    def from_unit_ball(self, U: np.ndarray) -> np.ndarray:
        """Points of the unit ball back in data units, kept in the box (post-processing)."""
        lo, hi = self.box
        return np.clip(self.center + (hi - lo) / 2 * self.radius * U, lo, hi)


def scaled_domain(domain: Domain) -> ScaledDomain:
    """``domain``'s box with every column scaled to [−1, 1] (the box is needed)."""
    if domain.box is None:
        raise ValueError("units='scaled' scales each column by its bounds: pass bounds=")
    lo, hi = domain.box
    return ScaledDomain((lo + hi) / 2, float(np.sqrt(len(lo))), domain.box, domain.leaked)


def unit_rows(X, domain: Domain, cache_bytes: int = 0):
    """Rows in the unit ball: an array at once, a block source or Dask array lazily (a block
    source's mapped blocks kept up to ``cache_bytes``, :class:`BlockCache`)."""
    if isinstance(X, np.ndarray):
        return domain.to_unit_ball(X)
    if isinstance(X, BlockSource):
        return UnitBallSource(X, domain, cache=BlockCache(cache_bytes) if cache_bytes else None)
    x = as_dask_array(X)
    return x.map_blocks(_to_unit_ball, domain, dtype=np.float64)


def project_rows(Z, basis: np.ndarray):
    """Rows zᵀB, (n, d'): an array at once, a block source or Dask array lazily."""
    if isinstance(Z, np.ndarray):
        return Z @ basis
    if isinstance(Z, UnitBallSource):
        return Z.projected(basis)
    return Z.map_blocks(_project, basis, chunks=(Z.chunks[0], (basis.shape[1],)), dtype=Z.dtype)


def _to_unit_ball(block: np.ndarray, domain: Domain) -> np.ndarray:
    return domain.to_unit_ball(np.asarray(block, dtype=np.float64))


def _project(block: np.ndarray, basis: np.ndarray) -> np.ndarray:
    return block @ basis


def is_lazy(X) -> bool:
    """Whether ``X`` is read lazily (a path, block source or Dask collection)."""
    return isinstance(X, (str, os.PathLike, BlockSource)) or is_dask_collection(X)


def row_blocks(rows) -> Iterator[np.ndarray]:
    """The rows' blocks as read (an array is one block; a Dask array, one per partition)."""
    if isinstance(rows, np.ndarray):
        yield rows
    elif isinstance(rows, BlockSource):
        yield from rows.iter_blocks()
    else:
        for part in as_dask_array(rows).to_delayed().ravel():
            yield np.asarray(part.compute())


def aligned_chunks(rows, size: int | None = None) -> Iterator[np.ndarray]:
    """Consecutive chunks of exactly ``size`` rows (default ``blocks._SUM_CHUNK``; the last one
    shorter), whatever the blocks.

    Chunk j holds rows [j·size, (j+1)·size) of the data: the same rows for an array, a
    Parquet folder or a Dask collection.
    """
    size = size or blocks._SUM_CHUNK
    carry: list[np.ndarray] = []
    held = 0
    for block in row_blocks(rows):
        start = 0
        if held:
            take = min(size - held, len(block))
            carry.append(block[:take])
            held, start = held + take, take
            if held < size:
                continue
            yield np.concatenate(carry)
            carry, held = [], 0
        while len(block) - start >= size:
            yield block[start : start + size]
            start += size
        if start < len(block):
            carry, held = [block[start:]], len(block) - start
    if held:
        yield np.concatenate(carry)


class ChunkedRows(Source):
    """A :class:`Source` over ``rows`` read in aligned chunks (the count, the second moment)."""

    def __init__(self, rows):
        self.rows, self.dim = rows, row_dim(rows)

    def blocks(self) -> Iterator[np.ndarray]:
        return aligned_chunks(self.rows)

    def n_rows(self) -> int:
        return row_count(self.rows)


class RecoverRows(ChunkedRows):
    """The recover step's rows: cluster sums over aligned chunks, each row assigned by a key.

    Row z goes to the centre nearest to its key, z (``key_basis`` None) or zᵀB (HDPE's first
    step, centres in the projection). With ``anchors`` and ``radii`` (the later, centred
    steps) the summed row is its offset from the anchor of its cell in units of that anchor's
    radius, (z − a_j)/r_j; the cell is the nearest of the centres, which are the anchors.
    Every summed row is clipped to the ``radius`` ball (:meth:`Source.cluster_sums`).
    """

    def __init__(self, rows, key_basis=None, anchors=None, radii=None):
        super().__init__(rows)
        self.key_basis, self.anchors, self.radii = key_basis, anchors, radii

    def cluster_sums(self, prepared: PreparedCandidates, radius: float, assign_by=None):
        if assign_by is not None:
            raise ValueError("RecoverRows assigns by its own keys; pass assign_by=None")
        u = len(prepared.unique)
        sums, counts = np.zeros((u, self.dim)), np.zeros(u)
        rows_per = blocks._SUM_CHUNK
        buf = np.empty((rows_per, u), dtype=np.float32)
        aug = np.ones((rows_per, prepared.dim + 1), dtype=np.float32)
        for chunk in self.blocks():
            z = as_block(chunk, self.dim)
            keys = z if self.key_basis is None else z @ self.key_basis
            labels = _assign_chunk(_chunk(keys, 0, len(z), prepared), prepared, buf, aug)
            rows = z
            if self.anchors is not None:
                cell = prepared.first_index[labels]
                rows = (z - self.anchors[cell]) / self.radii[cell, None]
            onehot = np.zeros((u, len(z)))
            onehot[labels, np.arange(len(z))] = 1.0
            sums += onehot @ blocks.clipped_rows(rows, 0, len(z), radius)
            counts += onehot.sum(axis=1)
        full = np.zeros((prepared.n_candidates, self.dim))
        full[prepared.first_index] = sums
        return full, expand_counts(prepared, counts.astype(np.int64))
