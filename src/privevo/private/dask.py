"""Dask backend of the private histogram: one map-reduce per round.

* **map** — every partition of the private data is counted on a worker by
  :func:`privevo.private.kernel.partial_counts`, the kernel of the local backend
  (float32 GEMM + argmin + float64 fix-up of near ties);
* **reduce** — the per-partition counts (integers over the unique candidates)
  are summed;
* **noise** — added once, on the driver, by
  :func:`privevo.private.release.noisy_nn_histogram`. Workers never see the noise
  or the random generator.

Every row's vote does not depend on how rows are split, so the counts equal
the local backend's exactly. The candidates are broadcast to the workers once
per round (``Client.scatter(..., broadcast=True)``).

Private data may be a ``dask.array.Array`` (n, d), a ``dask.dataframe``
(feature columns only), a :class:`privevo.private.files.BlockSource` (each
Parquet row group / ``.npy`` block is read on a worker: the files must be
visible to the workers) or an in-memory array (scattered in row blocks).

The cluster: the ``Client`` of an enclosing :func:`dask_session`, else the
current default ``distributed`` client, else a ``LocalCluster`` started for
the call and closed afterwards. Wrap a whole run in :func:`dask_session` to
start the cluster (and scatter in-memory data) only once.
"""

from __future__ import annotations

import contextlib
import logging
import sys
from dataclasses import dataclass, field
from typing import Iterator

import numpy as np

from .._validation import check_same_dimension, not_two_d
from .blocks import Source
from .files import BlockSource
from .flat import as_block as _as_private_block
from .kernel import PreparedCandidates, partial_counts

__all__ = [
    "DaskSource",
    "dask_session",
    "backend_session",
    "dask_unique_counts",
    "as_dask_array",
    "is_dask_collection",
]

_TARGET_BLOCK_BYTES = 2**26  # in-memory data is scattered in blocks of ~64 MiB


@dataclass
class _Session:
    client: object
    scattered: dict = field(default_factory=dict)  # id(array) -> (array, [futures])


_ACTIVE: list[_Session] = []  # stack of open sessions (innermost last)


def is_dask_collection(x) -> bool:
    """True for Dask arrays/dataframes, without importing Dask when it is not in use."""
    dask = sys.modules.get("dask")  # never import Dask for in-memory data
    return dask is not None and hasattr(dask, "is_dask_collection") and dask.is_dask_collection(x)


class DaskSource(Source):
    """Private rows counted on a Dask cluster (the map on the workers, the reduce here).

    ``data``: a Dask array or dataframe (feature columns only), a
    :class:`~privevo.private.files.BlockSource` (blocks read on the workers) or
    an in-memory array (scattered in row blocks once per :func:`dask_session`).
    The other statistics read the partitions one at a time on the driver.
    """

    def __init__(self, data):
        if not hasattr(data, "columns") and len(np.shape(data)) != 2:
            raise ValueError(not_two_d("private data", len(np.shape(data))))
        self.data = data
        self.dim = int(len(data.columns) if hasattr(data, "columns") else np.shape(data)[1])

    def count(
        self, prepared: PreparedCandidates, backend: str = "auto", chunk_size=None, n_threads=None
    ) -> np.ndarray:
        return dask_unique_counts(self.data, prepared, chunk_size, n_threads)

    def blocks(self) -> Iterator[np.ndarray]:
        if isinstance(self.data, BlockSource):
            yield from self.data.iter_blocks()
        elif is_dask_collection(self.data):
            for part in as_dask_array(self.data).to_delayed().ravel():
                yield np.asarray(part.compute())
        else:
            yield np.asarray(self.data)


@contextlib.contextmanager
def dask_session(client=None, address: str | None = None, **cluster_kwargs) -> Iterator[object]:
    """Yield a ``distributed.Client`` for the Dask backend; close only what was started here.

    Order: ``client`` → a new client for the scheduler at ``address`` → the
    client of an enclosing session → the default client → a new
    ``LocalCluster(**cluster_kwargs)`` (one single-threaded worker process per
    core unless told otherwise).
    """
    if client is None and address is None and _ACTIVE:
        yield _ACTIVE[-1].client
        return
    with contextlib.ExitStack() as stack:
        client = client or _connect(address, cluster_kwargs, stack)
        _ACTIVE.append(_Session(client))
        try:
            yield client
        finally:
            _ACTIVE.pop()


def backend_session(backend: str):
    """A :func:`dask_session` for ``backend="dask"``, a no-op context otherwise (for loops of
    rounds)."""
    return dask_session() if backend == "dask" else contextlib.nullcontext()


def _connect(address, cluster_kwargs: dict, stack: contextlib.ExitStack):
    distributed = _import_distributed()
    if address is not None:
        return stack.enter_context(distributed.Client(address))
    if not cluster_kwargs:
        try:
            return distributed.default_client()
        except ValueError:
            pass
    options = {
        "threads_per_worker": 1,
        "processes": True,
        "dashboard_address": ":0",  # any free port for the HTTP server; no dashboard
        "scheduler_kwargs": {"dashboard": False},
        "silence_logs": logging.ERROR,
    }
    cluster = stack.enter_context(distributed.LocalCluster(**{**options, **cluster_kwargs}))
    return stack.enter_context(distributed.Client(cluster))


def _import_distributed():
    try:
        import dask.array  # noqa: F401
        import distributed
    except ImportError:
        raise ImportError(
            "backend='dask' needs dask and distributed: pip install 'privevo[dask]'"
        ) from None
    return distributed


# ---------------------------------------------------------------- map-reduce


def dask_unique_counts(
    private, prepared: PreparedCandidates, chunk_size=None, n_threads=None
) -> np.ndarray:
    """Exact counts over ``prepared.unique``: per-partition counts on the workers, summed.

    ``n_threads`` is the kernel's threads per task (default 1: Dask runs one
    task per worker thread).
    """
    from dask import delayed

    with dask_session() as client:
        session = _ACTIVE[-1]
        blocks, reader = _partitions(private, prepared.dim, session)
        shared = client.scatter(prepared, broadcast=True, hash=False)
        count = delayed(_count_block, pure=True)
        parts = [count(block, shared, reader, chunk_size, n_threads or 1) for block in blocks]
        total = delayed(_sum_counts, pure=True)(parts, len(prepared.unique))
        return np.asarray(client.compute(total).result(), dtype=np.int64)


def _count_block(
    block, prepared: PreparedCandidates, reader: str, chunk_size, n_threads
) -> np.ndarray:
    """The map step, run on a worker: read the partition, count it with the local kernel."""
    if reader == "ref":
        block = block.read()
    block = np.asarray(block)
    if len(block) == 0:
        return np.zeros(len(prepared.unique), dtype=np.int64)
    block = _as_private_block(block, prepared.dim)
    return partial_counts(block, prepared, "auto", chunk_size, n_threads)


def _sum_counts(parts: list, size: int) -> np.ndarray:
    """The reduce step."""
    return np.sum(parts, axis=0, dtype=np.int64) if parts else np.zeros(size, dtype=np.int64)


def _partitions(private, dim: int, session: _Session) -> tuple[list, str]:
    """(partitions as delayed objects / futures / block references, how to read one)."""
    if isinstance(private, BlockSource):
        check_same_dimension(dim, private.shape[1])
        return private.block_refs(), "ref"
    if is_dask_collection(private):
        return _collection_blocks(private, dim), "array"
    return _scattered_blocks(private, dim, session), "array"


def _collection_blocks(x, dim: int) -> list:
    import dask.array as da

    if isinstance(x, da.Array):
        x = _two_dim(x)
        check_same_dimension(dim, x.shape[1])
        return list(x.rechunk({1: -1}).to_delayed().ravel())
    if hasattr(x, "columns"):  # dask dataframe: feature columns only
        check_same_dimension(dim, len(x.columns))
        return list(x.to_delayed())
    raise _not_dask(x)


def _scattered_blocks(private, dim: int, session: _Session) -> list:
    """In-memory data split in row blocks and scattered once per session."""
    key = id(private)
    if key in session.scattered and session.scattered[key][0] is private:
        return session.scattered[key][1]
    array = _as_private_block(private, dim)
    rows = max(1, _TARGET_BLOCK_BYTES // max(1, array.shape[1] * array.itemsize))
    blocks = [array[s : s + rows] for s in range(0, len(array), rows)]
    futures = session.client.scatter(blocks, hash=False)
    session.scattered[key] = (private, futures)
    return futures


def as_dask_array(x):
    """A Dask collection as a 2-D Dask array with known row counts (dataframes: feature columns
    only)."""
    import dask.array as da

    if isinstance(x, da.Array):
        return _two_dim(x).rechunk({1: -1})
    if hasattr(x, "to_dask_array"):
        return x.to_dask_array(lengths=True).rechunk({1: -1})
    raise _not_dask(x)


def _two_dim(x):
    if x.ndim != 2:
        raise ValueError(not_two_d("private data", x.ndim))
    return x


def _not_dask(x) -> ValueError:
    return ValueError(
        f"private data must be a Dask array or dataframe (rows x features), got {type(x).__name__}"
    )
