"""Every size-dependent branch of privevo in one place, and how a test crosses each at n, n + 1.

A *size branch* is code whose path depends on how large the private data is: a block or chunk
size, a threshold on n·m·d, a rule that reads a row count. Under add/remove adjacency n is
private (docs/privacy.md, "What is public"), so each such branch must either change nothing
published and no release's exact statistic beyond its sensitivity (blocking, chunking,
threading), or read a noisy count or a public size, never n.

* :data:`SIZE_BRANCHES` — one :class:`SizeBranch` per branch: its constants (named by where they
  live in privevo, imported from there, never restated), what depends on them, what size they
  read, which entry points (names as in tests/helpers/entry_points.py, or the extra runs of
  :data:`RUNS`) cross them, and the :class:`Crossing` replays that reach them at small size.
* :data:`NOT_SIZE_BRANCHES` — every other module-level numeric constant of src/privevo, with the
  reason it cannot depend on n. tests/privacy/test_size_branches.py fails on a constant in
  neither list, so a new branch cannot go unlisted.

A crossing runs an entry point on D of t rows, t the first size past the threshold, and on its
neighbours of t − 1 and t + 1 rows (the last row removed; an extreme row added), with the byte and
sensitivity replays of tests/helpers/neighbour.py: both pairs (t − 1, t) and (t, t + 1) are
replayed, one on each side of the threshold. Where the real threshold is large the constant is
patched small (:func:`patch_constant`: every module that binds it, and every function default
that holds it).
"""

from __future__ import annotations

import importlib
import inspect
import os
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable

import numpy as np

from helpers.entry_points import (
    ENTRY_POINTS,
    KMEANS_ARGV,
    SYNTH_ARGV,
    argv_for,
    cli_entry,
    points,
    table,
    table_metadata,
)
from helpers.neighbour import estimator_artefacts

P = "privevo."  # every constant is named by its module path inside privevo

# -- the lists --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Crossing:
    """One replay of ``entry`` on D of ``n`` rows and its neighbours of n − 1 and n + 1 rows.

    ``n``: a size, or ``n()`` computed from privevo's own rules (never a restated number; after
    the fixed patches, so a patched constant counts).
    ``patches``: constant path → value, or ``value(probe)`` with ``probe`` the (rows, unique
    candidates, d) of the first call of the kernel named by ``probe`` on D (``"numpy"`` or
    ``"lowd"``). ``options``: passed to a run of :data:`RUNS` (``"n"`` stands for D's size, fixed
    for D and its neighbours alike). ``refused``: whether the run on D must refuse its defaulted
    δ (so that both sides of a noisy rule are exercised). ``witness``: a privevo function called
    a different number of times on n − 1 and n rows, which shows that the layout really changes
    there (the noisy rules have none: with their releases pinned nothing may change).
    ``leak``: why the replay is known to fail (it runs as a strict xfail, so it stays visible).
    """

    entry: str
    n: int | Callable[[], int]
    patches: dict = field(default_factory=dict)
    adjacency: str = "add_remove"
    probe: str | None = None
    options: dict = field(default_factory=dict)
    refused: bool | None = None
    witness: str | None = None
    leak: str | None = None
    fast: bool = False

    def size(self) -> int:
        return int(self.n() if callable(self.n) else self.n)


@dataclass(frozen=True)
class SizeBranch:
    """A size-dependent branch: its constants and how it is crossed."""

    constants: tuple[str, ...]  # privevo module path + name
    depends: str  # what takes another path past the threshold
    reads: str  # what size the branch reads: exact n (only layout may change), noisy, public
    entry_points: tuple[str, ...]  # ENTRY_POINTS names, or RUNS names
    reach: str  # how a test reaches it at small size
    crossings: tuple[Crossing, ...] = ()  # () only where ``reach`` says why it is not replayed


def value_of(path: str):
    """The constant at ``path`` (``privevo.private.frames.BLOCK_ROWS``), imported from privevo."""
    module, name = path.rsplit(".", 1)
    return getattr(importlib.import_module(module), name)


# -- sizes computed from privevo's own rules ---------------------------------------------------


def _first(rule: Callable[[int], object], lo: int = 2, hi: int = 10**8) -> int:
    """The smallest n in (lo, hi] where ``rule(n) != rule(lo)`` (``rule`` monotone in n)."""
    start = rule(lo)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if rule(mid) != start else (mid, hi)
    return hi


def _su_rounds(estimator: str, epsilon: float = 1.0, k: int = 3, d: int = 2) -> Callable:
    """Su et al.'s T(n) as DPLloyd (ε·(1 − COUNT_SHARE)) or FastLloyd (ε) computes it."""
    from privevo.baselines import dplloyd

    eps = epsilon * (1 - dplloyd.COUNT_SHARE) if estimator == "dplloyd" else epsilon
    return lambda n: dplloyd.dplloyd_iterations(eps, n, k, d)


def su_threshold(estimator: str, rounds: int) -> int:
    """The smallest n whose T (Su et al.'s rule, as the entry point runs it) is ``rounds``."""
    T = _su_rounds(estimator)
    return _first(lambda n: T(n) >= rounds)


def variations_threshold(cap: bool = False, k: int = 3) -> int:
    """The smallest n past DPKMeans' floor L = 4 (``cap``: past ``MAX_VARIATIONS``)."""
    from privevo.kmeans import MAX_VARIATIONS, paper_variations

    bound = MAX_VARIATIONS if cap else paper_variations(0, k)
    return _first(lambda n: paper_variations(n, k) > bound)


def lowd_chunk_threshold(rows: int) -> int:
    """The smallest n that the fused kernel splits into more than one chunk per worker, with
    chunks of at most ``rows`` (its floor, 256, below that) and ``os.cpu_count()`` workers."""
    return (os.cpu_count() or 1) * rows + 1


def tabular_auto_threshold(rule: str, epsilon: float = 4.0, delta: float = 1e-5) -> int:
    """The smallest public n_rows N where TabularPE's ``"auto"`` rule (``"rounds"``,
    ``"population"`` or ``"target"``) first changes: a run reading n instead of N would change
    there."""
    from privevo import TabularPE
    from privevo._params import constructor_params
    from privevo.tabular.plan import make_plan, population

    def value(N: int):
        est = TabularPE(epsilon, delta, replace(table_metadata(), n_rows=N))
        meta = est.metadata
        if rule == "population":
            return population(est.n_synthetic, meta)
        if rule == "target":  # the target's share leaves its upper clip
            est.target = meta.names[1]
            return make_plan(constructor_params(est), meta, delta).shares["target_pairs"]
        return make_plan(constructor_params(est), meta, delta).iterations  # fit()'s plan

    return _first(value)


# -- the replays' extra runs --------------------------------------------------------------------

EXTREME = 1e6
LIMIT = 64  # the default δ's size limit in the crossings: δ patched to 1/(10·LIMIT)


def _refusal(call: Callable[[], dict]) -> dict:
    """``call()``, or what it publishes when it refuses a defaulted δ: the refusal's message."""
    try:
        return call()
    except ValueError as err:
        if "default delta" not in str(err):
            raise
        return {"refused": str(err)}


def _default_delta():
    from privevo import accounting

    return accounting.default_delta(None)  # the DefaultDelta the command line passes


def _pe(adjacency: str, *, users: bool = False, default_delta: bool = False, **options):
    def make(tmp):
        def run(data):
            from privevo import PrivateEvolution
            from privevo.selection import make_selector
            from privevo.variation import GaussianVariation, UniformBall

            X, kw = (data[0], {"groups": data[1]}) if users else (data, {})
            est = PrivateEvolution(
                UniformBall(8.0),
                GaussianVariation(0.3),
                make_selector("rank"),
                n_synthetic=6,
                iterations=2,
                epsilon=2.0,
                delta=_default_delta() if default_delta else 1e-5,
                adjacency=adjacency,
                random_state=3,
                **options,
            )
            return _refusal(lambda: estimator_artefacts(est.fit(X, **kw), "synthetic_"))

        return run

    return make


def _pe_dask(adjacency: str):
    """PrivateEvolution(backend="dask") on an in-memory array, on an in-process cluster."""

    def make(tmp):
        run = _pe(adjacency, backend="dask")(tmp)

        def in_session(data):
            from privevo.private import dask_session

            with dask_session(
                processes=False, n_workers=1, threads_per_worker=1, dashboard_address=":0"
            ):
                return run(data)

        return in_session

    return make


def _dpkmeans(adjacency: str):
    def make(tmp):
        def run(X):
            from privevo import DPKMeans

            est = DPKMeans(
                3, epsilon=2.0, radius=8.0, iterations=2, adjacency=adjacency, random_state=0
            )
            return _refusal(lambda: estimator_artefacts(est.fit(X), "cluster_centers_"))

        return run

    return make


def _text_pe(adjacency: str):
    def make(tmp):
        def run(texts):
            from helpers.text_doubles import text_pe

            est = text_pe(adjacency=adjacency, delta=_default_delta())
            return _refusal(lambda: estimator_artefacts(est.fit(texts), "synthetic_texts_"))

        return run

    return make


def _tabular(adjacency: str, *, n_rows: int | None = None, **options):
    """TabularPE on a DataFrame: δ defaulted (``delta=None``), or the ``"auto"`` rules read off
    a public ``n_rows`` (``n_rows`` and ``delta`` given, ``iterations``/``n_synthetic`` auto)."""

    def make(tmp):
        def run(df):
            from privevo import TabularPE

            meta = table_metadata() if n_rows is None else replace(table_metadata(), n_rows=n_rows)
            est = TabularPE(
                4.0,
                options.get("delta"),
                meta,
                pool=200,
                adjacency=adjacency,
                random_state=0,
                **{k: v for k, v in options.items() if k != "delta"},
            )

            def fit():
                sample = est.fit(df).sample(30, random_state=1)
                return {
                    "csv": sample.to_csv(index=False),
                    "report": estimator_artefacts(est)["privacy_report_"],
                }

            return _refusal(fit)

        return run

    return make


def _write_npy_folder(folder: Path, X) -> None:
    (folder / "data").mkdir()
    np.save(folder / "data" / "part-0.npy", np.asarray(X, dtype=np.float64))


def _npy_folder_cli(base: list[str]):
    def make(adjacency: str):
        argv = argv_for(base, "data", "--adjacency", adjacency, "-o", "{w}/out.csv")
        return cli_entry(argv, _write_npy_folder)

    return make


#: Runs the crossings need beyond ENTRY_POINTS: name → (input kind, make(adjacency, **options)).
RUNS: dict[str, tuple[str, Callable]] = {
    "pe rank, default delta": ("points", lambda a: _pe(a, default_delta=True)),
    "pe rank, k-NN votes": ("points", lambda a: _pe(a, n_neighbors=3)),
    "pe users, default delta": ("users", lambda a: _pe(a, users=True, default_delta=True)),
    "pe rank, dask backend": ("points", _pe_dask),
    "dpkmeans, default delta": ("points", _dpkmeans),
    "text pe, default delta": ("texts", _text_pe),
    "tabular memory, default delta": ("table", lambda a: _tabular(a, iterations=2, n_synthetic=20)),
    "tabular memory, auto rules": ("table", _tabular),
    "cli synth npy folder": ("points", _npy_folder_cli(SYNTH_ARGV)),
    "cli kmeans npy folder": ("points", _npy_folder_cli(KMEANS_ARGV)),
}


def entry_names() -> set[str]:
    """Every name a branch may list: ENTRY_POINTS' names and :data:`RUNS`."""
    return {e.name for e in ENTRY_POINTS.values()} | set(RUNS)


def kind_of(entry: str) -> str:
    if entry in RUNS:
        return RUNS[entry][0]
    return next(e.kind for e in ENTRY_POINTS.values() if e.name == entry)


def make_run(crossing: Crossing, tmp_path: Path) -> Callable:
    """``run(data)`` of the crossing's entry point under its adjacency; a refused defaulted δ
    is published as its message (:func:`_refusal`)."""
    if crossing.entry in RUNS:
        n = crossing.size()
        options = {
            k: n if isinstance(v, str) and v == "n" else v for k, v in crossing.options.items()
        }
        run = RUNS[crossing.entry][1](crossing.adjacency, **options)(tmp_path)
    else:
        run = ENTRY_POINTS[f"{crossing.entry}/{crossing.adjacency}"].make_run(tmp_path)
    return lambda data: _refusal(lambda: run(data))


# -- data of n rows and its neighbours of n − 1 and n + 1 rows ---------------------------------


def sized(kind: str, n: int):
    """D of ``n`` rows (users: the last row its own user, so one user is one row)."""
    if kind == "points":
        return points(n)
    if kind == "users":
        groups = np.arange(n) // 3
        groups[-1] = n  # its own user: removing it removes one user and one row
        return points(n), groups
    if kind == "table":
        return table(n)
    if kind == "texts":
        return [f"private text number {i} about topic {i % 5}" for i in range(n)]
    raise ValueError(f"no sized data of kind {kind!r}")


def size_neighbours(kind: str, D) -> dict[str, object]:
    """D without its last row (n − 1 rows) and D with an extreme row added (n + 1 rows)."""
    import pandas as pd

    if kind == "points":
        extreme = np.tile([EXTREME, -EXTREME], D.shape[1])[: D.shape[1]]
        return {"n - 1 rows": D[:-1], "n + 1 rows": np.vstack([D, extreme])}
    if kind == "users":
        X, groups = D
        extreme = np.tile([EXTREME, -EXTREME], X.shape[1])[: X.shape[1]]
        added = (np.vstack([X, extreme]), np.append(groups, groups.max() + 1))
        return {"n - 1 rows": (X[:-1], groups[:-1]), "n + 1 rows": added}
    if kind == "table":
        extreme = pd.DataFrame([{**D.iloc[1].to_dict(), "weight": 10**9}])
        return {"n - 1 rows": D.iloc[:-1], "n + 1 rows": pd.concat([D, extreme], ignore_index=True)}
    if kind == "texts":
        return {"n - 1 rows": D[:-1], "n + 1 rows": D + ["a much longer private text " * 40]}
    raise ValueError(f"no neighbours of kind {kind!r}")


# -- patching a constant everywhere it is bound --------------------------------------------------


def patch_constant(monkeypatch, path: str, value) -> list[str]:
    """Set the constant at ``path`` to ``value`` in every loaded privevo module that binds it and
    in every function default that holds it (a default is bound when its ``def`` runs); return
    where it was set. Small cached ints are patched in their own module only."""
    module_name, name = path.rsplit(".", 1)
    home = importlib.import_module(module_name)
    original = getattr(home, name)
    shared = not (isinstance(original, int) and -5 <= original <= 256)
    where = []
    for mod_name, module in sorted(sys.modules.items()):
        if not mod_name.startswith("privevo") or module is None:
            continue
        if not (module is home or shared):
            continue
        if module.__dict__.get(name, None) is original:
            monkeypatch.setattr(module, name, value)
            where.append(f"{mod_name}.{name}")
        for function in _functions(module, mod_name):
            defaults = function.__defaults__ or ()
            if any(d is original for d in defaults):
                new = tuple(value if d is original else d for d in defaults)
                monkeypatch.setattr(function, "__defaults__", new)
                where.append(f"default of {function.__qualname__}")
            kwdefaults = function.__kwdefaults__ or {}
            if any(d is original for d in kwdefaults.values()):
                new = {k: value if d is original else d for k, d in kwdefaults.items()}
                monkeypatch.setattr(function, "__kwdefaults__", new)
                where.append(f"keyword default of {function.__qualname__}")
    assert where, f"{path} is bound nowhere"
    return where


def _functions(module, mod_name: str):
    """The functions and methods defined in ``module``."""
    for obj in list(vars(module).values()):
        if getattr(obj, "__module__", None) != mod_name:
            continue
        if inspect.isfunction(obj):
            yield obj
        elif inspect.isclass(obj):
            for member in vars(obj).values():
                member = getattr(member, "__func__", member)  # static and class methods
                if inspect.isfunction(member):
                    yield member


def count_calls(monkeypatch, path: str) -> list[int]:
    """Wrap the function (or method) at ``path`` in its module or class with a counter; return
    the counter (one element: the calls so far)."""
    parts = path.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            owner = importlib.import_module(".".join(parts[:cut]))
            break
        except ImportError:
            continue
    for attribute in parts[cut:-1]:
        owner = getattr(owner, attribute)
    original, calls = getattr(owner, parts[-1]), [0]

    def counted(*args, **kwargs):
        calls[0] += 1
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, parts[-1], counted)
    return calls


def kernel_probe(kernel: str, run: Callable, data) -> tuple[int, int, int]:
    """(rows, unique candidates, d) of the first call of the ``"numpy"`` or ``"lowd"`` vote
    kernel when ``run(data)`` runs: what an n·m·d threshold is set from."""
    from privevo.private import kernel as kernel_module
    from privevo.private import lowd

    owner, name = (kernel_module, "_numpy_kernel") if kernel == "numpy" else (lowd, "assign")
    original, calls = getattr(owner, name), []

    def spy(block, prepared, *args, **kwargs):
        calls.append((len(block), len(prepared.unique), prepared.dim))
        return original(block, prepared, *args, **kwargs)

    setattr(owner, name, spy)
    try:
        run(data)
    finally:
        setattr(owner, name, original)
    assert calls, f"the {kernel} kernel was never called"
    return calls[0]


# -- the branches -----------------------------------------------------------------------------

_NUMPY_KERNEL = {P + "private.lowd.AUTO_MAX_DIM": 0}  # backend="auto" takes the numpy kernel
_SMALL = 64  # the size the patched thresholds are set to

_HISTOGRAMS = (
    "pe rank", "pe subsample", "pe weighted_kmeans", "pe gape", "pe gape_agg", "pe users",
    "dpkmeans", "dpkmeans hdpe", "tabular memory", "tabular parquet", "tabular parquet folder",
    "tabular dask", "text pe", "labelled text pe", "cli kmeans csv", "cli kmeans npy",
    "cli kmeans --json", "cli synth csv", "cli synth npy", "cli synth --json", "cli synth users",
    "cli synth-table csv", "cli synth-table parquet", "cli synth-text", "cli synth-text labels",
)  # fmt: skip
_DEFAULT_DELTA = (
    "cli synth csv", "cli synth npy", "cli synth --json", "cli synth users", "cli kmeans csv",
    "cli kmeans npy", "cli kmeans --json", "cli synth-text", "cli synth-text labels",
    "baseline fastlloyd", "baseline lsh_tree", "pe rank, default delta", "pe users, default delta",
    "dpkmeans, default delta", "text pe, default delta", "tabular memory, default delta",
)  # fmt: skip
_DELTA_PATCH = {P + "accounting.DEFAULT_DELTA_ADD_REMOVE": 1 / (10 * LIMIT)}


_TOO_FEW = (
    "refusing n_clusters > n reads the exact n: D of k rows fits and publishes, its neighbour "
    "of k - 1 rows is refused (under add/remove a tiny-data leak of whether n < k)"
)


def _delta_crossings(entry: str, fast: bool) -> tuple[Crossing, ...]:
    """The default δ at its (patched) size limit — exact n on both sides, the noisy total
    below it — and far past it, where the run on D refuses."""
    return (
        Crossing(entry, LIMIT + 1, _DELTA_PATCH, refused=False, fast=fast),
        Crossing(entry, 4 * LIMIT, _DELTA_PATCH, refused=True, fast=fast),
    )


_BATCH = P + "private.frames._to_pandas"  # once per Parquet batch
_NPY_READ = P + "private.files.NpyRows.read"  # once per .npy block
_LOWD_CHUNK = P + "private.lowd._assign_chunk"  # once per fused-kernel chunk
_CLIPPED = P + "private.blocks.clipped_rows"  # once per summed chunk


def _lowd_chunks() -> int:
    return lowd_chunk_threshold(256)


_BLOCK_ROWS = {P + "private.frames.BLOCK_ROWS": 32}
_NPY_BLOCK = {P + "private.files._DEFAULT_BLOCK_BYTES": 32 * 2 * 8}  # 32 rows of 2 float64
_VOTE_CHUNK = {P + "private.votes._CHUNK_BYTES": 0}  # chunks of the floor, 64 rows
_FLAT_CHUNKS = {P + "private.flat.SMALL_WORK": 0, P + "private.flat._CHUNK_BYTES": 0}
_LOWD_CHUNKS = {P + "private.flat.SMALL_WORK": 0, P + "private.lowd._CHUNK_ROWS": 256}
_TREE_CHUNKS = {
    P + "private.flat.SMALL_WORK": 0,
    P + "private.lowd._TREE_CHUNK_ROWS": 256,
    P + "private.lowd.TREE_MIN_CANDIDATES": dict.fromkeys(range(1, 5), 1),
}
_SUM_CHUNK = {P + "private.blocks._SUM_CHUNK": _SMALL}
_CACHE = {P + "private.kmeans_stats.CACHE_MIB": 100 * 2 * 8 / 2**20}  # 100 rows of 2 float64
_MAPPED = P + "private.kmeans_stats.UnitBallRef.unit_ball"  # once per block read and mapped
_MORE_THAN_ONE_CHUNK = 2 * 256 + 1  # the fused kernel's chunks hold at least 256 rows


def _small_work(kernel: str) -> dict:
    """SMALL_WORK at D's size for the first kernel call (n·m·(d + 1) numpy, n·m·d fused)."""
    if kernel == "numpy":
        return {
            P + "private.flat.SMALL_WORK": lambda p: p[0] * p[1] * (p[2] + 1),
            **_NUMPY_KERNEL,
        }
    return {
        P + "private.flat.SMALL_WORK": lambda p: p[0] * p[1] * p[2],
        P + "private.lowd._CHUNK_ROWS": 256,  # the chunked path then has more than one chunk
    }


SIZE_BRANCHES: dict[str, SizeBranch] = {
    "Parquet tables read in blocks": SizeBranch(
        (P + "private.frames.BLOCK_ROWS",),
        "how many pandas blocks a Parquet table is read in (a file: ⌈rows/BLOCK_ROWS⌉ batches; "
        "a folder: per part); the encoding and the cell counts run block by block",
        "exact n (block layout only)",
        ("tabular parquet", "tabular parquet folder", "cli synth-table parquet"),
        "BLOCK_ROWS patched to 32 (it is bound as a default of frame_source and the Parquet "
        "reader: patch_constant sets those); the entry points write row groups of 50, so a file "
        "of 32, 33, 34 rows is read in one, two, two batches; a folder of two halves crosses "
        "in its second part at 64 → 65 rows",
        (
            Crossing("tabular parquet", 33, _BLOCK_ROWS, witness=_BATCH, fast=True),
            Crossing("tabular parquet folder", 65, _BLOCK_ROWS, witness=_BATCH),
            Crossing("cli synth-table parquet", 33, _BLOCK_ROWS, witness=_BATCH),
        ),
    ),
    ".npy folders read in blocks": SizeBranch(
        (P + "private.files._DEFAULT_BLOCK_BYTES",),
        "how many blocks a .npy part is read in (block_rows = _DEFAULT_BLOCK_BYTES // row bytes); "
        "synth and kmeans (a public domain, no --plot) stream the blocks",
        "exact n (block layout only)",
        ("cli synth npy folder", "cli kmeans npy folder"),
        "_DEFAULT_BLOCK_BYTES patched to 32 rows of 2 float64: a part of 32 → 33 rows goes from "
        "one block to two (a single .npy file is read whole, not in blocks)",
        (
            Crossing("cli synth npy folder", 33, _NPY_BLOCK, witness=_NPY_READ, fast=True),
            Crossing("cli kmeans npy folder", 33, _NPY_BLOCK, witness=_NPY_READ),
        ),
    ),
    "in-memory data scattered to Dask workers": SizeBranch(
        (P + "private.dask._TARGET_BLOCK_BYTES",),
        "how many row blocks an in-memory array is scattered in under backend='dask'",
        "exact n (block layout only)",
        ("pe rank, dask backend",),
        "_TARGET_BLOCK_BYTES patched to 32 rows of 2 float64, on an in-process cluster: 32 → 33 "
        "rows go from one block to two",
        (
            Crossing(
                "pe rank, dask backend",
                33,
                {P + "private.dask._TARGET_BLOCK_BYTES": 32 * 2 * 8},
                witness=P + "private.dask.partial_counts",
            ),
        ),
    ),
    "k-NN and user votes in chunks": SizeBranch(
        (P + "private.votes._CHUNK_BYTES",),
        "how many row chunks the k-nearest and user-level votes are found in (rows per chunk "
        "max(64, _CHUNK_BYTES // 4u)) where the fused kernel does not find them",
        "exact n (chunk layout only)",
        ("pe users", "cli synth users", "pe rank, k-NN votes"),
        "_CHUNK_BYTES patched to 0 (chunks of the floor, 64 rows; user votes with AUTO_MAX_DIM = "
        "0 so that the numpy path runs): 64 → 65 rows go from one chunk to two",
        (
            Crossing(
                "pe rank, k-NN votes",
                _SMALL + 1,
                _VOTE_CHUNK,
                witness=P + "private.votes._topk_chunk",
                fast=True,
            ),
            Crossing(
                "pe users",
                _SMALL + 1,
                {**_VOTE_CHUNK, **_NUMPY_KERNEL},
                witness=P + "private.votes._assign_rows",
                fast=True,
            ),
            Crossing(
                "cli synth users",
                _SMALL + 1,
                {**_VOTE_CHUNK, **_NUMPY_KERNEL},
                witness=P + "private.votes._assign_rows",
            ),
        ),
    ),
    "small calls on one thread": SizeBranch(
        (P + "private.flat.SMALL_WORK",),
        "below n·m·(d + 1) (numpy kernel) or n·m·d (fused kernel) < SMALL_WORK a vote count "
        "runs as one chunk on the calling thread; above it, chunked on a thread pool",
        "exact n (threads and chunks only)",
        _HISTOGRAMS,
        "SMALL_WORK patched to t·m·(d + 1) (numpy kernel, AUTO_MAX_DIM = 0) or t·m·d (fused, "
        "chunks of 256 rows so that the chunked path has several), m and d read off the first "
        "kernel call on D of t rows: t − 1 → t rows leave the small path",
        (
            Crossing(
                "pe rank",
                _SMALL,
                _small_work("numpy"),
                probe="numpy",
                witness=P + "private.flat._assign_rows",  # the small path's one call
                fast=True,
            ),
            Crossing(
                "pe rank",
                _MORE_THAN_ONE_CHUNK,
                _small_work("lowd"),
                probe="lowd",
                witness=_LOWD_CHUNK,
                fast=True,
            ),
            Crossing(
                "tabular memory",
                _MORE_THAN_ONE_CHUNK,
                _small_work("lowd"),
                probe="lowd",
                witness=_LOWD_CHUNK,
            ),
            Crossing(
                "text pe",
                _MORE_THAN_ONE_CHUNK,
                _small_work("lowd"),
                probe="lowd",
                witness=_LOWD_CHUNK,
            ),
        ),
    ),
    "numpy kernel chunks": SizeBranch(
        (P + "private.flat._CHUNK_BYTES",),
        "rows per chunk of the numpy vote kernel (clip(_CHUNK_BYTES // 4m, 64, 8192)) and with "
        "them the number of worker threads",
        "exact n (chunks and threads only)",
        _HISTOGRAMS,
        "SMALL_WORK and _CHUNK_BYTES patched to 0, AUTO_MAX_DIM to 0: chunks of 64 rows, and "
        "64 → 65 rows go from one chunk on one thread to two chunks on two",
        (
            Crossing(
                "pe rank",
                _SMALL + 1,
                {**_FLAT_CHUNKS, **_NUMPY_KERNEL},
                witness=P + "private.flat._assign_chunk",
                fast=True,
            ),
            Crossing(
                "dpkmeans",
                _SMALL + 1,
                {**_FLAT_CHUNKS, **_NUMPY_KERNEL},
                witness=P + "private.flat._assign_chunk",
            ),
        ),
    ),
    "fused kernel chunks": SizeBranch(
        (P + "private.lowd._CHUNK_ROWS", P + "private.lowd._TREE_CHUNK_ROWS"),
        "how many chunks the fused kernel splits n rows into (a multiple of the workers, at "
        "most _CHUNK_ROWS rows each, _TREE_CHUNK_ROWS on the candidate-tree path, at least 256)",
        "exact n (chunks and threads only)",
        _HISTOGRAMS,
        "SMALL_WORK patched to 0 and the chunk cap to 256 (the tree path forced with "
        "TREE_MIN_CANDIDATES = 1): os.cpu_count()·256 → +1 rows add a chunk",
        (
            Crossing("pe rank", _lowd_chunks, _LOWD_CHUNKS, witness=_LOWD_CHUNK, fast=True),
            Crossing("pe rank", _lowd_chunks, _TREE_CHUNKS, witness=_LOWD_CHUNK, fast=True),
            Crossing("dpkmeans", _lowd_chunks, _LOWD_CHUNKS, witness=_LOWD_CHUNK),
        ),
    ),
    "cluster sums and second moment in chunks": SizeBranch(
        (P + "private.blocks._SUM_CHUNK",),
        "how many row chunks DPKMeans' recover sums (one-hot GEMMs) and HDPE's second moment "
        "are summed in: float sums in another order",
        "exact n (summation order only)",
        (
            "dpkmeans",
            "dpkmeans hdpe",
            "dpkmeans parquet folder",
            "dpkmeans dask",
            "cli kmeans csv",
            "cli kmeans npy",
            "cli kmeans --json",
            "cli kmeans folder",
            "cli kmeans --metadata",
        ),  # fmt: skip
        "_SUM_CHUNK patched to 64: 64 → 65 rows go from one chunk to two (streamed rows are "
        "cut in the same aligned chunks whatever their blocks)",
        (
            Crossing("dpkmeans", _SMALL + 1, _SUM_CHUNK, witness=_CLIPPED, fast=True),
            Crossing("dpkmeans hdpe", _SMALL + 1, _SUM_CHUNK, witness=_CLIPPED),
            Crossing("cli kmeans csv", _SMALL + 1, _SUM_CHUNK, witness=_CLIPPED),
            Crossing("dpkmeans parquet folder", _SMALL + 1, _SUM_CHUNK, witness=_CLIPPED),
        ),
    ),
    "a streamed DPKMeans fit's cache of mapped blocks": SizeBranch(
        (P + "private.kmeans_stats.CACHE_MIB",),
        "which blocks a streamed DPKMeans fit keeps mapped in memory (first come, while they fit "
        "in cache_mib) and which it reads and maps again on every pass: the same arrays either "
        "way",
        "exact n (block layout only)",
        ("dpkmeans parquet folder",),
        "CACHE_MIB patched to 100 rows of 2 float64 (bound as DPKMeans' cache_mib default): the "
        "folder's two halves (row groups of 50) both fit at 99 and 100 rows; at 101 the second "
        "half's 51 rows do not and are read again on every pass",
        (Crossing("dpkmeans parquet folder", 101, _CACHE, witness=_MAPPED, fast=True),),
    ),
    "default delta refused for large data": SizeBranch(
        (P + "accounting.DEFAULT_DELTA_ADD_REMOVE",),
        "a defaulted δ is refused once ñ − 3·sd > 1/(10·δ) (10⁵ units): "
        "accounting.check_default_delta, after the first release",
        "noisy count (the first round's vote total, the row count, the marginals' totals)",
        _DEFAULT_DELTA,
        f"DEFAULT_DELTA_ADD_REMOVE patched to 1/(10·{LIMIT}): D of {LIMIT} + 1 rows (n crosses "
        f"the limit, ñ − 3·sd does not: not refused) and of 4·{LIMIT} rows (refused), each "
        "against n − 1 and n + 1 with the releases pinned; the real limit is replayed by "
        "tests/privacy/test_neighbour_replay.py::test_tabular_pe_default_delta_refusal",
        (
            *_delta_crossings("cli synth csv", fast=True),
            *_delta_crossings("baseline fastlloyd", fast=True),
            *_delta_crossings("dpkmeans, default delta", fast=True),
            *_delta_crossings("baseline lsh_tree", fast=False),
            *_delta_crossings("pe users, default delta", fast=False),
            *_delta_crossings("cli kmeans csv", fast=False),
            *_delta_crossings("text pe, default delta", fast=False),
            *_delta_crossings("tabular memory, default delta", fast=False),
            *_delta_crossings("cli synth-text", fast=False),
        ),
    ),
    "DPKMeans' population L": SizeBranch(
        (P + "kmeans.plan.MAX_VARIATIONS",),
        "L = min(max(⌊ñ/(5k)⌋, 4), MAX_VARIATIONS) variations per centre: the candidates' "
        "number, PE-means' count threshold",
        "noisy count ñ under add/remove; the public n under replace (neighbours keep n)",
        ("dpkmeans", "dpkmeans hdpe", "cli kmeans csv", "cli kmeans npy", "cli kmeans --json"),
        "the floor at its real size (n past it computed by kmeans.paper_variations); the cap "
        "patched to 6 (n past it likewise)",
        (
            Crossing("dpkmeans", variations_threshold, fast=True),
            Crossing(
                "dpkmeans",
                lambda: variations_threshold(cap=True),
                {P + "kmeans.plan.MAX_VARIATIONS": 6},
                fast=True,
            ),
            Crossing("dpkmeans hdpe", variations_threshold),
            Crossing("cli kmeans csv", variations_threshold),
        ),
    ),
    "Su et al.'s iteration count": SizeBranch(
        (P + "baselines.dplloyd.RHO", P + "names.COUNT_SHARE"),
        "T = clip(ε/ε_m, 2, 7), ε_m = √(500·k³/ñ²·(d + ∛(4dρ²))³) rounds (DPLloyd with "
        "ε·(1 − COUNT_SHARE), FastLloyd with ε); the LSH tree's threshold min(…, ñ/(2k))",
        "noisy count (COUNT_SHARE of the budget) under add/remove; the public n under replace",
        ("baseline dplloyd", "baseline fastlloyd", "baseline lsh_tree"),
        "at real size: the smallest n with T = 3 and with T = 7, computed by "
        "dplloyd.dplloyd_iterations for each estimator; the LSH tree (no T: its threshold "
        "moves with ñ at every n) at FastLloyd's n",
        (
            Crossing("baseline dplloyd", lambda: su_threshold("dplloyd", 3), fast=True),
            Crossing("baseline fastlloyd", lambda: su_threshold("fastlloyd", 3), fast=True),
            Crossing("baseline dplloyd", lambda: su_threshold("dplloyd", 7)),
            Crossing("baseline fastlloyd", lambda: su_threshold("fastlloyd", 7)),
            Crossing("baseline lsh_tree", lambda: su_threshold("fastlloyd", 3)),
        ),
    ),
    "TabularPE's automatic rules": SizeBranch(
        (
            P + "tabular.plan.ROUND_BUDGET",
            P + "tabular.plan.MAX_AUTO_ROUNDS",
            P + "tabular.plan.MIN_MARGINAL_SHARE",
            P + "tabular.plan.MAX_MARGINAL_SHARE",
            P + "tabular.plan.TARGET_NOISE",
            P + "tabular.plan.TARGET_SHARE",
        ),
        'iterations="auto" (⌊μ_PE²·N/ROUND_BUDGET⌋ in [1, MAX_AUTO_ROUNDS]), n_synthetic="auto" '
        '(N/30 in [50, 3000]), marginal_share="auto" (2B·C·Δ²/(μ²·N) in [MIN, MAX]), '
        "a target's share ((C − 1)Δ²/(B·(TARGET_NOISE·N)²) in TARGET_SHARE); without "
        "n_rows fixed (2 rounds, 300, 0.5, 0.45). `pool` is a fixed public count, not a rule",
        "the public n_rows N of the metadata only (metadata_from_data sets none)",
        ("tabular memory, auto rules", "cli synth-table csv", "cli synth-table parquet"),
        "metadata declaring N = the n where a rule reading n would change (found by the "
        "estimator's own rule), D of N rows against N − 1 and N + 1",
        (
            Crossing(
                "tabular memory, auto rules",
                lambda: tabular_auto_threshold("population"),
                options={"n_rows": "n", "delta": 1e-5, "iterations": 1},
            ),
            Crossing(
                "tabular memory, auto rules",
                lambda: tabular_auto_threshold("rounds"),
                options={"n_rows": "n", "delta": 1e-5, "n_synthetic": 20},
                fast=True,
            ),
            Crossing(
                "tabular memory, auto rules",
                lambda: tabular_auto_threshold("target"),
                options={"n_rows": "n", "delta": 1e-5, "n_synthetic": 20, "target": "color"},
            ),
        ),
    ),
    "too few rows refused": SizeBranch(
        (),
        "a fit refuses data with fewer rows than clusters (DPKMeans, the baselines, privevo "
        "kmeans: n_clusters > n), fewer than 2 rows (the baselines, privevo kmeans) or none; "
        "the message never says n, but whether the run refuses is a function of the exact n",
        "exact n (at n < k, n < 2, n = 0)",
        ("dpkmeans", "baseline dplloyd", "cli kmeans csv"),
        "no constant: D of k = 3 rows against 2 and 4 rows (the entry points' k)",
        tuple(
            Crossing(entry, 3, leak=_TOO_FEW, fast=True)
            for entry in ("dpkmeans", "baseline dplloyd", "cli kmeans csv")
        ),
    ),
    "metadata read off the table": SizeBranch(
        (P + "tabular.metadata._MAX_INTEGER_LEVELS",),
        "an integer column with at most _MAX_INTEGER_LEVELS distinct values, fewer than its "
        "rows, becomes categorical (metadata_from_data)",
        "the private table itself (exact values and n): not DP by design",
        ("tabular memory (metadata=None)", "cli synth-table csv (no --metadata)"),
        "not replayed: metadata_from_data warns PrivacyLeakWarning and every fit with it reports "
        "guarantee_holds: false (docs/privacy.md, threat model); no entry point here uses it",
    ),
    "heartbeat lines while a command runs": SizeBranch(
        (P + "cli.publishing._HEARTBEAT_SECONDS",),
        "one stderr line per _HEARTBEAT_SECONDS of run time off a terminal: their number grows "
        "with the run time, hence with n",
        "run time (a timing side channel, outside the guarantee: docs/privacy.md)",
        ("cli synth csv", "cli kmeans csv", "cli synth-table csv", "cli synth-text"),
        "not replayed: the lines say no time and no count, only how many appear depends on "
        "time; docs/privacy.md lists time side channels as not covered",
    ),
}


NOT_SIZE_BRANCHES: dict[str, str] = {
    P + "names.EPSILON_MIN": "bound on the public ε",
    P + "names.EPSILON_MAX": "bound on the public ε",
    P + "_validation.DELTA_MIN": "bound on the public δ",
    P + "names.MAX_ROUNDS": "bound on the public number of rounds",
    P + "accounting._MU_MAX": "root-finding bracket of μ(ε, δ): public inputs only",
    P + "accounting._EPS_MARGIN": "round-off margin of the accounting root-finding",
    P + "accounting._MU_MARGIN": "round-off margin of the accounting root-finding",
    P + "accounting._GL_NODES": "Gauss-Legendre nodes of the accounting integrals",
    P + "accounting._GL_WEIGHTS": "Gauss-Legendre weights of the accounting integrals",
    P + "accounting._TWO_OVER_SQRT_PI": "a mathematical constant",
    P + "accounting._SAFE": "σ rounding factor of a budget split: public inputs only",
    P + "audit.statistics._SELECT_ALPHA_FACTOR": "audit's threshold search on its own samples",
    P + "audit.table_releases.BINS": "audit's fixed table shape on its own generated data",
    P + "audit.table_releases.LEVELS": "audit's fixed table shape on its own generated data",
    P + "audit.table_releases.PAIR_BINS": "audit's fixed table shape on its own generated data",
    P + "audit.table_releases._N_PUBLIC": "audit's public row count of its expected tables",
    P + "baselines.fastlloyd.ALPHA": "FastLloyd's radius factor from k and d (public)",
    P + "budget._TOLERANCE": "relative slack of the budget comparisons (public inputs only)",
    P + "cli.EXIT_ERROR": "an exit status",
    P + "cli.EXIT_INTERRUPTED": "an exit status",
    P + "cli.EXIT_TERMINATED": "an exit status",
    P + "cli.options.SCALE_MAX": "bound on public scales and coordinates",
    P + "cli.options.SCALE_MIN": "bound on public scales and coordinates",
    P + "cli.synth_text.LOOKAHEAD_MAX": "bound on a public option",
    P + "cli.synth_text.VARIATIONS_MAX": "bound on a public option",
    P + "cli.synth_text.DEFAULT_EMBEDDING_DIM": "public default of the embedding dimension",
    P + "cli.table._CELL_BYTES": "memory check of the public --rows/--population × columns",
    P + "cli.text.THREADS_PER_CORE": "bound on --threads from the machine's cores",
    P + "cli.text.MAX_TOKENS_MAX": "bound on a public option",
    P + "cli.text.API_WORKERS_MAX": "bound on the public --batch-size's requests in flight",
    P + "text.apis.EXAMPLES_PER_PROMPT": "public examples shown in one completion prompt",
    P + "text.gate.MAX_EMOJI": "a rule on one public candidate's characters",
    P + "text.serving.CACHE_BLOCKS": "the server's KV cache size; public prompts only",
    P + "text.serving.BLOCK_TOKENS": "the server's KV cache block; public prompts only",
    P + "text.serving.BATCH_TOKENS": "the server's tokens per batch; public prompts only",
    P + "text.serving.SAMPLING": "the served model's sampling settings (public)",
    P + "demo.KMEANS_EPSILONS": "the demo's public budgets",
    P + "demo.MIXTURE_EPSILONS": "the demo's public budgets",
    P + "demo.MIXTURE_START": "the demo's public starting points",
    P + "demo.DIGITS_N": "row count of scikit-learn's public digits (δ = n^−1.1 there)",
    P + "_validation.RUN_CONSTRAINTS": "parameter constraints (public)",
    P + "_validation.ROUNDS": "the constraint on T, a public parameter",
    P + "kmeans.plan.PE_MEANS_RECOVER_SHARE": "budget share (public)",
    P + "kmeans.plan.HDPE_RECOVER_SHARE": "budget share (public)",
    P + "kmeans.plan.RECOVER_STEPS": "number of recover steps (public)",
    P + "kmeans.plan.RECOVER_SHARE_MIN": "bound on the public recover share",
    P + "kmeans.recover.RECOVER_RADIUS": "clip radius in anchor distances (released centres only)",
    P + "private.flat._U32": "float32 unit roundoff (the exact fix-up's bound)",
    P + "private.lowd.MAX_DIM": "bound on the public dimension d",
    P + "private.lowd.AUTO_MAX_DIM": "kernel choice by the public dimension d",
    P + "private.lowd._PADDED": "padded widths by the public dimension d",
    P + "private.lowd.TREE_MAX_DIM": "tree path by the public dimension d",
    P + "private.lowd.TREE_MIN_CANDIDATES": "tree path by the number of public candidates",
    P + "private.lowd.TREE_LEAF": "candidates per leaf of the public candidate tree",
    P + "private.noise._BITS": "bits per uniform draw of the noise sampler",
    P + "private.readers._MAX_LISTED": "how many column names a message lists (public header)",
    P + "selection._lsobj._SUPPLY_SCALE": "integer scaling of the noisy counts (post-processing)",
    P + "selection._lsobj._COST_SCALE": "integer scaling of the public R",
    P + "tabular.encoding._ONE_HOT": "embedding geometry (public metadata)",
    P + "tabular.encoding._MISSING_FLAG": "embedding geometry (public metadata)",
    P + "tabular.plan.PAIR_SELECTION": "budget share (public)",
    P + "tabular.plan.ADAPTIVE_SELECTION": "budget share (public)",
    P + "tabular.adaptive.MAX_CLIQUE_CELLS": "candidate cliques by their public cell counts",
    P + "tabular.adaptive.MODEL_ROWS": "rows of the public model sample (post-processing)",
    P + "tabular.adaptive.MODEL_SWEEPS": "IPF sweeps of the public model (post-processing)",
    P + "tabular.adaptive.MODEL_FLOOR": "share of the public model's cells a fit keeps",
    P + "tabular.estimator.GAPE_R": "GAPE's public R for tables",
    P + "tabular.estimator.GROW_MUTATION": "mutation probability of the public pool's variations",
    P + "tabular.pool.POOL_SUPPORT": "share of the public output pool drawn column by column",
    P + "tabular.pool.REPEAT_LIMIT": "repeat share of a trial draw from the public pool",
    P + "tabular.pool.TRIAL_ROWS": "size of a trial draw of the public n_rows (post-processing)",
    P + "tabular.pairs.SPARSE_KEPT": "post-processing of a released 2-way table (no size branch)",
    P + "tabular.fine.BRANCHING": "refinement tree of a column's public domain",
    P + "tabular.structure.EMPTY_Z": "z of 'may be empty', against the release's public σ",
    P + "tabular.derived.FUNCTIONS": "argument counts of a public expression's functions",
    P + "tabular.marginals._MISSING": "embedding geometry (public metadata)",
    P + "tabular.marginals._EDGE_SHIFT": "bin-edge shift of the public domain",
    P + "text.intrinsic.TEMPERATURES": "public sampling temperatures",
    P + "text.labels.LABEL_SCALE": "label block scale (public label names)",
    P + "text.validity._ECHO_NGRAM": "check of generated (public) replies",
}


def crossings() -> list[tuple[str, int, Crossing]]:
    """(branch, index, crossing) of every replay, in the order of :data:`SIZE_BRANCHES`."""
    return [
        (name, i, c)
        for name, branch in SIZE_BRANCHES.items()
        for i, c in enumerate(branch.crossings)
    ]
