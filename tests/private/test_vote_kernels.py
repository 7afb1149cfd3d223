"""The vote histogram's kernels (numpy, faiss, the fused low-d kernel and its tree): counts
equal the float64 brute force, ties go to the lowest index, chunks and threads change nothing."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from helpers import slow_unless
from privevo.private import flat, nn_histogram, reference_assign
from privevo.private import kernel as histogram
from privevo.private import lowd as _lowd_kernel

BACKENDS = histogram.available_backends()


LOCAL = [b for b in BACKENDS if b in ("numpy", "faiss", "lowd")]


ISAS = (
    ["scalar", "avx2", "avx512"][: _lowd_kernel._ISAS.index(_lowd_kernel.isa()) + 1]
    if _lowd_kernel.available()
    else []
)


needs_lowd = pytest.mark.skipif(not _lowd_kernel.available(), reason="compiled kernel not built")


def reference_counts(X, C):
    return np.bincount(reference_assign(X, C), minlength=len(C))


def clustered(rng, n, m, d, spread=0.3):
    centers = rng.standard_normal((8, d))
    X = centers[rng.integers(8, size=n)] + spread * rng.standard_normal((n, d))
    C = centers[rng.integers(8, size=m)] + spread * rng.standard_normal((m, d))
    return X, C


@pytest.mark.parametrize("backend", LOCAL)
@pytest.mark.parametrize("n,m,d", [(1, 1, 1), (500, 7, 2), (3000, 300, 16), (2000, 150, 300)])
def test_counts_equal_float64_brute_force(backend, n, m, d):
    if backend == "lowd" and d > _lowd_kernel.MAX_DIM:
        pytest.skip("the fused kernel handles d <= 32")
    X, C = clustered(np.random.default_rng(n + m + d), n, m, d)
    counts = nn_histogram(X, C, backend=backend)
    assert counts.dtype == np.int64 and counts.sum() == n
    np.testing.assert_array_equal(counts, reference_counts(X, C))


@pytest.mark.parametrize("backend", LOCAL)
def test_ties_go_to_lowest_index(backend):
    # integer grid: many exact ties; duplicated candidates
    rng = np.random.default_rng(0)
    X = rng.integers(-2, 3, size=(4000, 3)).astype(float)
    C = rng.integers(-2, 3, size=(40, 3)).astype(float)
    C = np.vstack([C, C[:10]])  # duplicates: the first copy keeps every vote
    counts = nn_histogram(X, C, backend=backend)
    np.testing.assert_array_equal(counts, reference_counts(X, C))
    assert counts[40:].sum() == 0


def test_equidistant_point_votes_for_lower_index():
    C = np.array([[1.0, 0.0], [-1.0, 0.0]])
    assert nn_histogram(np.zeros((3, 2)), C).tolist() == [3, 0]
    assert nn_histogram(np.zeros((3, 2)), C[::-1]).tolist() == [3, 0]


@pytest.mark.parametrize("backend", LOCAL)
def test_large_offset_data_stays_exact(backend):
    # far from the origin: float32 magnitudes would swamp the differences without the shift
    X, C = clustered(np.random.default_rng(3), 2000, 50, 8)
    X, C = X + 1e4, C + 1e4
    np.testing.assert_array_equal(nn_histogram(X, C, backend=backend), reference_counts(X, C))


@pytest.mark.parametrize("chunk_size", [1, 7, 64, 10_000])
def test_chunk_size_and_threads_do_not_change_counts(chunk_size):
    X, C = clustered(np.random.default_rng(1), 1000, 40, 5)
    expected = reference_counts(X, C)
    for threads in (1, 2, 3):
        np.testing.assert_array_equal(
            nn_histogram(X, C, chunk_size=chunk_size, n_threads=threads), expected
        )


def test_memmap_and_float32_inputs(tmp_path):
    X, C = clustered(np.random.default_rng(2), 5000, 30, 4)
    path = tmp_path / "x.npy"
    np.save(path, X)
    mm = np.load(path, mmap_mode="r")
    np.testing.assert_array_equal(nn_histogram(mm, C, chunk_size=512), reference_counts(X, C))
    X32 = X.astype(np.float32)
    np.testing.assert_array_equal(nn_histogram(X32, C), reference_counts(X32.astype(float), C))


def test_cosine_metric_uses_angles():
    C = np.array([[1.0, 0.0], [0.0, 1.0]])
    X = np.array([[10.0, 1.0], [0.1, 0.2], [5.0, 4.0]])
    assert nn_histogram(X, C, metric="cosine").tolist() == [2, 1]
    # scale-invariant, unlike euclidean
    assert nn_histogram(X * 100, C * 0.01, metric="cosine").tolist() == [2, 1]
    with pytest.raises(ValueError, match="nonzero"):
        nn_histogram(np.zeros((1, 2)), C, metric="cosine")


@pytest.mark.parametrize(
    "private,candidates,match",
    [
        (np.array([[np.nan, 0.0]]), np.zeros((2, 2)), "NaN"),
        (np.array([[np.inf, 0.0]]), np.zeros((2, 2)), "NaN"),
        (np.zeros((3, 2)), np.array([[0.0, np.nan]]), "candidates"),
        (np.zeros(3), np.zeros((2, 1)), "2-D"),
        (np.zeros((0, 2)), np.zeros((2, 2)), "empty"),
        (np.zeros((3, 2)), np.zeros((0, 2)), "candidates"),
        (np.zeros((3, 2)), np.zeros((2, 3)), "features"),
        ([["a", "b"]], np.zeros((2, 2)), "numeric"),
    ],
)
def test_bad_input(private, candidates, match):
    with pytest.raises(ValueError, match=match):
        nn_histogram(private, candidates)


def test_map_reduce_equals_whole():
    X, C = clustered(np.random.default_rng(5), 3000, 25, 6)
    prepared = histogram.prepare_candidates(C)
    parts = [histogram.partial_counts(block, prepared) for block in np.array_split(X, 7)]
    np.testing.assert_array_equal(histogram.expand_counts(prepared, sum(parts)), nn_histogram(X, C))


@needs_lowd
@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("d", [1, 2, 3, 4, 5, 7, 8, 11, 16, 23, 32])
def test_lowd_kernel_every_width_and_instruction_set_is_exact(isa, d):
    # every zero-padded width (1, 2, 3, 4, 6, 8, 12, 16, 24, 32) and each ISA the CPU has;
    # m = 301 leaves a tail after the blocks of 8 candidates, n = 1001 a tail of rows
    X, C = clustered(np.random.default_rng(d), 1001, 301, d)
    prepared = histogram.prepare_candidates(C)
    labels = _lowd_kernel.assign(X, prepared, which_isa=isa)
    counts = histogram.expand_counts(prepared, np.bincount(labels, minlength=len(prepared.unique)))
    np.testing.assert_array_equal(counts, reference_counts(X, C))


@needs_lowd
@pytest.mark.parametrize("isa", ISAS)
def test_lowd_kernel_ties_float32_input_and_threads(isa):
    rng = np.random.default_rng(0)
    X = rng.integers(-2, 3, size=(5000, 3)).astype(np.float32)  # exact ties everywhere
    C = rng.integers(-2, 3, size=(700, 3)).astype(float)
    prepared = histogram.prepare_candidates(C)
    expected = reference_assign(X.astype(float), prepared.unique)
    for chunk, threads in [(None, 1), (333, 3)]:
        np.testing.assert_array_equal(
            _lowd_kernel.assign(X, prepared, chunk, threads, which_isa=isa), expected
        )


@needs_lowd
def test_auto_picks_the_fused_kernel_by_dimension(monkeypatch):
    calls = []
    monkeypatch.setitem(
        histogram._BACKENDS, "lowd", lambda *a: calls.append(a) or histogram._numpy_kernel(*a)
    )
    monkeypatch.setattr(_lowd_kernel, "lowd_kernel", histogram._BACKENDS["lowd"])
    X, C = clustered(np.random.default_rng(0), 50, 5, 3)
    nn_histogram(X, C)
    assert len(calls) == (1 if _lowd_kernel.uses_lowd(3) else 0)
    assert not _lowd_kernel.uses_lowd(_lowd_kernel.AUTO_MAX_DIM + 1)


@needs_lowd
def test_lowd_kernel_rejects_wide_data_and_reports_nonfinite_rows():
    X, C = clustered(np.random.default_rng(0), 10, 3, 33)
    with pytest.raises(ValueError, match="d <= 32"):
        nn_histogram(X, C, backend="lowd")
    X, C = clustered(np.random.default_rng(0), 10, 3, 2)
    X[4, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        nn_histogram(X, C, backend="lowd")
    X[4, 1] = 1e300  # finite, but beyond float32: decided by the float64 fix-up path like numpy's
    with pytest.raises(ValueError, match="NaN"):
        nn_histogram(X, C, backend="numpy")
    with pytest.raises(ValueError, match="NaN"):
        nn_histogram(X, C, backend="lowd")


def _tree_and_flat(X, prepared, isa, **kw):
    """Labels from the candidate-tree path and from the flat scan (both exact)."""
    tree = _lowd_kernel.assign(X, prepared, which_isa=isa, **kw)
    saved = _lowd_kernel.TREE_MAX_DIM
    _lowd_kernel.TREE_MAX_DIM = 0
    try:
        flat = _lowd_kernel.assign(X, prepared, which_isa=isa, **kw)
    finally:
        _lowd_kernel.TREE_MAX_DIM = saved
    return tree, flat


@needs_lowd
@pytest.mark.parametrize(
    "isa, leaf, d",
    # test-fast: this CPU's own instruction set, leaves of 1 and 8 rows, every width
    slow_unless(
        lambda isa, leaf, d: isa == ISAS[-1] and leaf in (1, 8),
        itertools.product(ISAS, [1, 3, 8, 64], [1, 2, 3, 4]),
    ),
)
def test_lowd_tree_ties_duplicates_and_near_ties(isa, leaf, d, monkeypatch):
    # the tree path (d <= TREE_MAX_DIM, u >= TREE_MIN_CANDIDATES; forced down to u = 1 here)
    # equals the float64 brute force: exact ties (integer grid, duplicate candidates, rows
    # on midpoints), near ties (1e-9 off a midpoint), far rows, float32 input, threads
    monkeypatch.setattr(_lowd_kernel, "TREE_LEAF", leaf)
    monkeypatch.setattr(_lowd_kernel, "TREE_MIN_CANDIDATES", dict.fromkeys(range(1, 5), 1))
    rng = np.random.default_rng(10 * d + leaf)
    C = rng.integers(-6, 7, size=(400, d)).astype(float)  # duplicates, merged by prepare
    X = np.concatenate(
        [
            rng.integers(-7, 8, size=(700, d)) + 0.5 * rng.integers(0, 2, size=(700, d)),
            rng.integers(-6, 7, size=(300, d)) + 0.5 + 1e-9 * rng.standard_normal((300, d)),
            50.0 * rng.standard_normal((40, d)),
        ]
    )
    X = np.repeat(X, 17, axis=0)[rng.permutation(17 * len(X))[: 17 * len(X) // 2]]
    X = np.concatenate([X, np.repeat(X[:200], 20, axis=0)])  # whole groups of equal rows
    prepared = histogram.prepare_candidates(C)
    expected = reference_assign(X, prepared.unique)
    for kw in [{}, {"chunk_size": 97, "n_threads": 3}]:
        tree, flat = _tree_and_flat(X, prepared, isa, **kw)
        np.testing.assert_array_equal(tree, expected)
        np.testing.assert_array_equal(flat, expected)
    X32 = X.astype(np.float32)
    np.testing.assert_array_equal(
        _lowd_kernel.assign(X32, prepared, which_isa=isa),
        reference_assign(X32.astype(float), prepared.unique),
    )


@needs_lowd
@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("m", [1, 2, 5, 300, 3000])
def test_lowd_tree_sizes_and_empty_input(isa, m, monkeypatch):
    monkeypatch.setattr(_lowd_kernel, "TREE_MIN_CANDIDATES", dict.fromkeys(range(1, 5), 1))
    X, C = clustered(np.random.default_rng(m), 2000, m, 2)
    prepared = histogram.prepare_candidates(C)
    tree, flat = _tree_and_flat(X, prepared, isa)
    np.testing.assert_array_equal(tree, reference_assign(X, prepared.unique))
    np.testing.assert_array_equal(flat, tree)
    assert _lowd_kernel.assign(X[:0], prepared, which_isa=isa).shape == (0,)


@needs_lowd
def test_lowd_tree_degenerate_candidates_and_nonfinite_rows():
    # all candidates on a line (zero extent in one coordinate), and one on the far side
    C = np.c_[np.linspace(-1, 1, 500), np.zeros(500)]
    C = np.vstack([C, [[0.0, 1e6]]])
    X = np.random.default_rng(0).standard_normal((3000, 2)) * [1.0, 1e3]
    np.testing.assert_array_equal(nn_histogram(X, C, backend="lowd"), reference_counts(X, C))
    assert len(C) >= _lowd_kernel.TREE_MIN_CANDIDATES[2]
    X[17, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        nn_histogram(X, C, backend="lowd")
    X[17, 0] = 1e300
    with pytest.raises(ValueError, match="NaN"):
        nn_histogram(X, C, backend="lowd")


@pytest.mark.parametrize("backend", LOCAL)
def test_small_calls_equal_the_chunked_path(backend, monkeypatch):
    X, C = clustered(np.random.default_rng(6), 200, 2, 2)
    small = nn_histogram(X, C, backend=backend)
    monkeypatch.setattr(flat, "SMALL_WORK", 0)  # force the threaded, chunked path
    np.testing.assert_array_equal(nn_histogram(X, C, backend=backend), small)
    np.testing.assert_array_equal(small, reference_counts(X, C))


@pytest.mark.parametrize(
    "rows", [3, 1000]
)  # few rows: exact among near pairs; many: the numpy fix-up
def test_lowd_fix_up_with_hundreds_of_near_ties_per_row(rows):
    angle = np.linspace(0, 2 * np.pi, 400, endpoint=False)
    C = np.c_[np.cos(angle), np.sin(angle)]  # all (almost) equidistant from the origin
    X = np.zeros((rows, 2))
    X[::2] = 1e-9
    for backend in LOCAL:
        np.testing.assert_array_equal(nn_histogram(X, C, backend=backend), reference_counts(X, C))


@pytest.mark.parametrize("d", [1, 2, 5, 64])
def test_candidate_dedup_matches_numpy_unique_with_signed_zeros(d):
    # the byte-string dedup of prepare_candidates against np.unique(axis=0): same first copies,
    # and -0.0 counts as 0.0 (equal floats, different bytes)
    rng = np.random.default_rng(d)
    C = rng.integers(-2, 3, size=(300, d)).astype(float)  # many exact duplicates
    C[rng.random(C.shape) < 0.2] = -0.0
    C[200:] = C[:100] + 0.0  # copies of earlier rows, +0.0 where those have -0.0
    C[7] = C[3]
    C[7, -1] = np.nextafter(C[3, -1], np.inf)  # distinct from row 3 by one ulp
    expected = np.sort(np.unique(C, axis=0, return_index=True)[1])
    assert np.array_equal(flat.prepare_candidates(C).first_index, expected)
    assert 7 in expected and len(expected) < 300
