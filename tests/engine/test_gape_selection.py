"""GAPE: exact LSObj (against a dense LP), swap bounds, local search optimality, selector."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import linprog

from privevo import PrivateEvolution
from privevo.selection import GAPE, Rank, SelectionContext
from privevo.selection._lsobj import flow_duals, solve_flow, swap_deltas, swap_table
from privevo.selection.gape import build_instance, gape_threshold, local_search
from privevo.variation import GaussianVariation, MultiScaleVariation

try:
    import ortools.graph.python.min_cost_flow  # noqa: F401

    SOLVERS = ["ortools", "highs"]
except ImportError:  # pragma: no cover
    SOLVERS = ["highs"]


def dense_lsobj(X, w, centres, R):
    """LSObj straight from its definition: a dense LP over every pair (scipy linprog)."""
    r3 = R / 3
    P, N = np.flatnonzero(w > 0), np.flatnonzero(w < 0)
    p, q, m = len(P), len(N), len(centres)

    def cost(A, B):
        return np.minimum(np.linalg.norm(A[:, None] - B[None], axis=2), r3)

    c = np.concatenate([cost(X[P], X[N]).ravel(), cost(X[P], X[centres]).ravel()])
    A = np.zeros((p + q, p * q + p * m))
    for i in range(p):
        A[i, i * q : (i + 1) * q] = 1
        A[i, p * q + i * m : p * q + (i + 1) * m] = 1
    for j in range(q):
        A[p + j, j : p * q : q] = 1
    res = linprog(c, A_eq=A, b_eq=np.concatenate([w[P], -w[N]]), bounds=(0, None), method="highs")
    assert res.status == 0
    return res.fun


def random_instance(rng, n_max=22):
    n = int(rng.integers(3, n_max))
    X = rng.normal(size=(n, int(rng.integers(1, 4))))
    w = rng.normal(2.0, 5.0, size=n)
    if w.sum() < 0:
        w = -w
    return X, w, float(rng.uniform(0.5, 6.0))


@pytest.mark.parametrize("solver", SOLVERS)
def test_lsobj_equals_dense_lp_on_random_instances(solver):
    rng = np.random.default_rng(0)
    checked = 0
    while checked < 120:
        X, w, R = random_instance(rng)
        above = rng.permutation(np.flatnonzero(w > 0))
        if above.size == 0:
            continue
        inst = build_instance(X, w, above, R / 3)
        sel = np.arange(int(rng.integers(1, above.size + 1)))
        got = solve_flow(inst, sel, solver).objective
        assert got == pytest.approx(dense_lsobj(X, w, above[sel], R), rel=1e-6, abs=1e-9)
        checked += 1


def instances(rng, count: int, n_max: int, min_above: int):
    """Of ``count`` random instances (fewer than ``n_max`` points), those with at least
    ``min_above`` positive weights: (X, w, R, the indices above 0, the flow instance)."""
    for _ in range(count):
        X, w, R = random_instance(rng, n_max)
        above = np.flatnonzero(w > 0)
        if above.size >= min_above:
            yield X, w, R, above, build_instance(X, w, above, R / 3)


def test_swap_bounds_bracket_the_exact_objective():
    rng = np.random.default_rng(1)
    for X, w, R, above, inst in instances(rng, 25, 16, min_above=2):
        sel = np.arange(max(1, above.size // 2))
        out = np.setdiff1d(np.arange(above.size), sel)
        sol = solve_flow(inst, sel, "highs")
        h, dual = flow_duals(inst, sel)  # HiGHS potentials
        assert (
            dual == pytest.approx(sol.objective, rel=1e-6, abs=1e-9)
            and dual <= sol.objective + 1e-7
        )
        if "ortools" in SOLVERS:  # potentials from the optimal flow's support: also tight
            h2, dual2 = flow_duals(inst, sel, solve_flow(inst, sel, "ortools"))
            assert dual2 == pytest.approx(sol.objective, rel=1e-6, abs=1e-9)
            h, dual = (h, dual) if rng.random() < 0.5 else (h2, dual2)
        upper = sol.objective + swap_table(inst, sel, sol.g, None, out)
        lower = dual + swap_table(inst, sel, inst.w, h, out)
        best, _ = swap_deltas(inst, sel, sol.g)
        np.testing.assert_allclose(
            best[out], (upper - sol.objective).min(axis=0), rtol=1e-9, atol=1e-9
        )
        for r in range(len(sel)):
            for c, j in enumerate(out):
                trial = sel.copy()
                trial[r] = j
                exact = solve_flow(inst, trial, "highs").objective
                assert lower[r, c] - 1e-7 <= exact <= upper[r, c] + 1e-7


@pytest.mark.parametrize("exhaustive", [10_000, 0])
def test_local_search_ends_without_an_improving_swap(exhaustive):
    rng = np.random.default_rng(2)
    opts = GAPE(1.0, exhaustive_swaps=exhaustive)
    for X, w, R, above, inst in instances(rng, 12, 20, min_above=3):
        k = int(rng.integers(1, above.size))
        res = local_search(inst, np.arange(k), opts)
        sel, obj = res["selected"], res["objective"]
        assert res["certified"]
        assert obj <= res["initial_objective"] + 1e-12
        assert obj == pytest.approx(dense_lsobj(X, w, above[sel], R), rel=1e-6, abs=1e-9)
        for r in range(k):
            for j in np.setdiff1d(np.arange(above.size), sel):
                trial = sel.copy()
                trial[r] = j
                assert dense_lsobj(X, w, above[trial], R) >= obj - 1e-6 * abs(obj) - 1e-9


def _context(sigma=1.0, m=2, T=10):
    return SelectionContext(sigma, 0, T, m, 100, np.random.default_rng(0))


def test_threshold_formula_and_degenerate_cases():
    assert gape_threshold(2.0, 10, 50, 0.05) == pytest.approx(
        2.0 * math.sqrt(2 * math.log(6 * 10 * 50 / 0.05))
    )
    X = np.array([[0.0, 0.0], [1.0, 0.0], [5.0, 0.0]])
    low = GAPE(1.0).select(X, np.array([3.0, 1.0, 2.0]), _context())  # τ ≈ 8.9: none passes
    assert low.info["degenerate"] and low.indices.tolist() == [0]
    negative = GAPE(1.0).select(X, np.array([-40.0, 30.0, -5.0]), _context())  # Σw < 0
    assert negative.info["degenerate"] and len(negative.points) == 1
    one = GAPE(1.0).select(X, np.array([50.0, -3.0, 2.0]), _context(m=2))  # one above τ → one point
    assert one.indices.tolist() == [0] and not one.info["degenerate"]


def test_gape_keeps_a_far_cluster_that_rank_drops():
    # big cluster split over 3 near-duplicates, small cluster far away: rank takes the 3 duplicates
    X = np.array([[0.0, 0.0], [0.01, 0.0], [0.0, 0.01], [3.0, 0.0]])
    w = np.array([400.0, 390.0, 380.0, 150.0])
    ctx = _context(sigma=1.0, m=3)
    assert 3 not in Rank().select(X, w, ctx).indices
    sel = GAPE(1.0).select(X, w, ctx)
    assert sorted(sel.indices.tolist()) == [0, 1, 3]  # (0, 0.01) is then 0.01 from (0, 0)
    assert sel.info["objective"] == pytest.approx(380 * 0.01, rel=1e-6)


def test_invalid_parameters_raise_one_line_errors():
    X, w = np.zeros((2, 2)), np.array([50.0, 50.0])
    with pytest.raises(ValueError, match="R must be"):
        GAPE(0.0).select(X, w, _context())
    with pytest.raises(ValueError, match="beta"):
        GAPE(1.0, beta=2.0).select(X, w, _context())
    with pytest.raises(ValueError, match="aggregate"):
        GAPE(1.0, aggregate="family").select(X, w, _context())


def test_neighbourhood_threshold_passes_split_votes():
    # 4 near-duplicates with 3 votes each: each is below τ, their sum is above τ·√4
    X = np.vstack([np.zeros((4, 2)) + 0.01 * np.arange(4)[:, None], [[5.0, 5.0]]])
    w = np.array([3.0, 3.0, 3.0, 3.0, 0.0])
    ctx = _context(sigma=1.0, m=1)
    tau = gape_threshold(1.0, 10, 5, 0.05)
    assert 3 < tau < 12 / 2
    assert GAPE(1.0).select(X, w, ctx).info["degenerate"]
    plus = GAPE(1.0, aggregate="neighbourhood").select(X, w, ctx)
    assert not plus.info["degenerate"] and plus.indices[0] < 4


def test_refill_keeps_the_population_size():
    X = np.array([[0.0, 0.0], [3.0, 0.0], [6.0, 0.0], [9.0, 0.0]])
    sel = GAPE(1.0, refill=True).select(X, np.array([80.0, 1.0, 0.0, 0.0]), _context(m=2))
    assert len(sel.points) == 1 and sel.variations_per_point == 3


def test_fill_completes_to_m_with_the_largest_remaining_counts():
    X = np.array([[0.0, 0.0], [3.0, 0.0], [6.0, 0.0], [9.0, 0.0]])
    w = np.array([80.0, 1.0, 3.0, -2.0])  # τ ≈ 4.1: only the first passes
    assert GAPE(1.0).select(X, w, _context(m=3)).indices.tolist() == [0]
    assert GAPE(1.0, fill=True).select(X, w, _context(m=3)).indices.tolist() == [0, 2, 1]
    low = GAPE(1.0, fill=True).select(X, w / 40, _context(m=3))  # degenerate: none passes
    assert low.info["degenerate"] and low.indices.tolist() == [0, 2, 1]


def test_multiscale_variation_levels_and_scales():
    var = MultiScaleVariation(R=1.0, max_level=4, per_scale=2)
    assert var.levels.tolist() == [0, 1, 2, 3, 4]  # ℓ_min = ⌈−log₂ R²⌉ = 0
    assert var.per_point == 10
    assert MultiScaleVariation(R=2.0, max_level=0).levels[0] == -2
    out = var.vary(np.zeros((200, 3)), np.random.default_rng(0)).reshape(200, 10, 3)
    std = out.std(axis=(0, 2))
    np.testing.assert_allclose(std, np.repeat(2.0 ** (-np.arange(5) / 2), 2), rtol=0.1)


def test_gape_keeps_the_small_cluster_in_the_engine_loop():
    """The GAPE paper's 2-D check, 3 seeds at ε = 4: GAPE covers (1, 0) more often than rank."""
    rng = np.random.default_rng(0)
    label = rng.random(2000) < 0.1
    X = np.where(label[:, None], [1.0, 0.0], [-1.0, 0.0]) + 0.1 * rng.standard_normal((2000, 2))
    start = np.array([[0.0, -2.0], [0.0, 0.0], [0.0, 2.0]])

    def hits(selector):
        out = 0
        for seed in range(3):
            pe = PrivateEvolution(
                start, GaussianVariation(0.1, 2), selector, 3, 20, 4.0, 1e-5, random_state=seed
            ).fit(X)
            out += int(np.linalg.norm(pe.synthetic_ - [1.0, 0.0], axis=1).min() <= 0.3)
        return out

    assert hits(GAPE(1.0)) > hits(Rank()) == 0


def test_without_ortools_auto_falls_back_to_highs(monkeypatch):
    import sys

    rng = np.random.default_rng(4)
    X = rng.normal(size=(40, 2))
    w = rng.normal(5.0, 8.0, size=40)
    ctx = _context(sigma=1.0, m=4)
    reference = GAPE(2.0, solver="highs").select(X, w, ctx)
    monkeypatch.setitem(sys.modules, "ortools.graph.python.min_cost_flow", None)  # import now fails
    fallback = GAPE(2.0).select(X, w, ctx)
    assert fallback.info["solver"] == "highs"
    assert sorted(fallback.indices.tolist()) == sorted(reference.indices.tolist())
    assert fallback.info["objective"] == pytest.approx(reference.info["objective"], rel=1e-9)
