"""GAPE: geometry-aware selection (GAPE paper §3).

Per round, from the candidates V (m_V of them) and their noisy counts w:

1. threshold τ = σ·√(2·log(6·T·m_V/β)); keep the candidates with w > τ;
2. if none passes or Σw < 0, return one candidate (the largest count);
3. otherwise start from the min(m, #kept) kept candidates with the largest
   counts and apply 1-swaps (selected z ↔ kept unselected x) that strictly
   lower LSObj until none does (see :mod:`privevo.selection._lsobj`).

Everything is post-processing of the noisy counts and the public candidates.

Choosing R (public): R is a lower bound on the distance between clusters you
want kept apart, in the units of the data. Pick it from public knowledge —
the domain (e.g. a fraction of the public data radius), the scale of the
embedding model on public text (typical distance between unrelated public
documents), or the variation API's own step sizes — never from the private
data. Costs are truncated at R/3, so a too large R makes GAPE behave like a
weighted k-median on the votes; a too small R makes every candidate "far".

Improvements beyond the paper (off by default; pure post-processing, no extra
budget): ``aggregate="neighbourhood"`` also thresholds each candidate on the
sums of the noisy counts within radii ``agg_radius``·2^−i (default R/3, 4 radii)
of it, each against τ·√(number of counts summed) for the summed noise, with the
union bound widened to every test, so a cluster whose votes are split between a
point and its variations still passes; ``refill=True`` asks
the variation API for more variations per point when fewer than m points are
selected, so the population keeps its size m_V.
"""

from __future__ import annotations

import math

import numpy as np

from .._params import Plugin
from .._validation import check_positive_int, check_positive_real
from ._base import Selection, SelectionContext, subset
from ._lsobj import (
    LSInstance,
    flow_duals,
    near_pairs,
    removal_losses,
    solve_flow,
    swap_deltas,
    swap_table,
)

__all__ = ["GAPE", "gape_threshold"]


def gape_threshold(sigma: float, iterations: int, n_candidates: int, beta: float) -> float:
    """τ = σ·√(2·log(6·T·m_V/β)) (GAPE paper §3)."""
    return float(sigma * math.sqrt(2.0 * math.log(6.0 * iterations * n_candidates / beta)))


class GAPE(Plugin):
    """Geometry-aware selection: thresholded histogram + 1-swap local search on LSObj.

    Parameters
    ----------
    R : public lower bound on the separation of clusters (costs truncated at R/3)
    beta : failure probability of the threshold
    aggregate : None (paper) or ``"neighbourhood"`` (threshold neighbourhood sums)
    agg_radius : largest radius of the public neighbourhoods (default R/3)
    n_radii : number of neighbourhood radii agg_radius·2^−i tested besides the count itself
    refill : keep the population size when fewer than m points are selected
    fill : when fewer than m points are selected (also in the degenerate case),
        complete the selection to m with the largest remaining noisy counts
        (Aug-PE's rule; the search itself is unchanged)
    solver : ``"auto"`` (ortools if installed, else scipy HiGHS), ``"ortools"``, ``"highs"``
    exhaustive_swaps : evaluate every swap exactly when there are at most this many
    max_exact_checks : exact evaluations allowed per certification step
    rtol : a swap must lower LSObj by more than rtol·LSObj (and the solver error)
    """

    def __init__(
        self,
        R: float,
        beta: float = 0.05,
        *,
        aggregate: str | None = None,
        agg_radius: float | None = None,
        n_radii: int = 4,
        refill: bool = False,
        fill: bool = False,
        solver: str = "auto",
        exhaustive_swaps: int = 64,
        max_exact_checks: int = 64,
        max_passes: int = 100_000,
        rtol: float = 1e-9,
    ):
        self.R = R
        self.beta = beta
        self.aggregate = aggregate
        self.agg_radius = agg_radius
        self.n_radii = n_radii
        self.refill = refill
        self.fill = fill
        self.solver = solver
        self.exhaustive_swaps = exhaustive_swaps
        self.max_exact_checks = max_exact_checks
        self.max_passes = max_passes
        self.rtol = rtol

    def select(
        self, candidates: np.ndarray, noisy_counts: np.ndarray, context: SelectionContext
    ) -> Selection:
        R = check_positive_real(self.R, "R")
        if not 0 < self.beta < 1:
            raise ValueError(f"beta must be in (0, 1), got {self.beta}")
        if self.aggregate not in (None, "neighbourhood"):
            raise ValueError(f"aggregate must be None or 'neighbourhood', got {self.aggregate!r}")
        X = np.asarray(candidates, dtype=np.float64)
        w = np.asarray(noisy_counts, dtype=np.float64)
        score, passes, tau = self._scores(X, w, context.sigma, context.iterations, R)
        above = np.flatnonzero(passes)
        info = {"threshold": tau, "n_above": int(above.size), "aggregate": self.aggregate}
        if above.size == 0 or w.sum() < 0:
            idx = np.array([int(np.argmax(w))])
            if self.fill:
                idx = _filled(idx, w, context.n_select)
            return subset(X, idx, w[idx], degenerate=True, objective=None, **info)
        above = above[np.argsort(-score[above], kind="stable")]
        k = min(context.n_select, above.size)
        inst = build_instance(X, w, above, R / 3.0)
        result = local_search(inst, np.arange(k), self)
        idx = above[result.pop("selected")]
        if self.fill and idx.size < context.n_select:
            idx = _filled(idx, w, context.n_select)
        sel = subset(X, idx, w[idx], degenerate=False, filled=bool(self.fill), **info, **result)
        return self._refilled(sel, len(X), context.n_select)

    # -- steps ----------------------------------------------------------------

    def _scores(self, X, w, sigma, iterations, R):
        """Scores and the pass mask.

        ``aggregate="neighbourhood"``: for each candidate, the sums S_i of the noisy
        counts within radii r_i = agg_radius·2^−i (i = 0..n_radii−1) and its own
        count (k_i counts summed, noise σ√k_i); it passes if some S_i > τ'·√k_i,
        τ' the paper's τ with the union bound over (n_radii + 1)·T·m_V tests.
        """
        if self.aggregate is None:
            tau = gape_threshold(sigma, iterations, len(X), self.beta)
            return w, w > tau, tau
        r = (
            R / 3.0
            if self.agg_radius is None
            else check_positive_real(self.agg_radius, "agg_radius")
        )
        n_radii = check_positive_int(self.n_radii, "n_radii")
        tau = gape_threshold(sigma, iterations, len(X) * (n_radii + 1), self.beta)
        i, j, dist = near_pairs(X, X, r)
        score = w / 1.0
        for level in range(n_radii):
            inside = dist < r * 2.0**-level
            total = np.bincount(i[inside], weights=w[j[inside]], minlength=len(X))
            size = np.maximum(np.bincount(i[inside], minlength=len(X)), 1)
            score = np.maximum(score, total / np.sqrt(size))
        return score, score > tau, tau

    def _refilled(self, sel: Selection, n_candidates: int, m: int) -> Selection:
        k = len(sel.points)
        if not self.refill or k >= m:
            return sel
        per_point = max(1, math.ceil(n_candidates / k) - 1)
        return Selection(sel.points, sel.indices, sel.weights, per_point, sel.info)


def _filled(idx: np.ndarray, w: np.ndarray, m: int) -> np.ndarray:
    """``idx`` plus the largest remaining counts, m in all (or every candidate)."""
    rest = np.setdiff1d(np.argsort(-w, kind="stable"), idx, assume_unique=True)
    rest = rest[np.argsort(-w[rest], kind="stable")]
    return np.concatenate([idx, rest[: m - idx.size]])


def build_instance(X: np.ndarray, w: np.ndarray, above: np.ndarray, r3: float) -> LSInstance:
    """Sparse LSObj data: positives, negatives and pairs closer than R/3."""
    pos, neg = np.flatnonzero(w > 0), np.flatnonzero(w < 0)
    ei, ej, ec = near_pairs(X[pos], X[neg], r3)
    ci, cj, cc = near_pairs(X[pos], X[above], r3)
    return LSInstance(r3, w[pos], -w[neg], ei, ej, ec, ci, cj, cc, len(above))


def local_search(inst: LSInstance, start: np.ndarray, opts: GAPE) -> dict:
    """1-swap local search on the exact LSObj until no swap strictly improves it.

    Few swaps: every swap is solved exactly (best improvement). Many swaps:
    FastPAM deltas with the optimal flow to the centres propose swaps that are
    guaranteed to improve (upper bound); when none is left, dual lower bounds
    rule out the rest and the swaps they cannot rule out are solved exactly.
    ``certified`` is False only if ``max_exact_checks`` ran out first.
    """
    sel = np.asarray(start, dtype=np.int64).copy()
    sol = solve_flow(inst, sel, opts.solver)
    stats = {
        "swaps": 0,
        "exact_evaluations": 1,
        "certified": True,
        "initial_objective": sol.objective,
    }
    for _ in range(check_positive_int(opts.max_passes, "max_passes")):
        out = np.setdiff1d(np.arange(inst.n_centres), sel)
        if out.size == 0:
            break
        tol = opts.rtol * abs(sol.objective) + 2.0 * sol.error_bound
        if sel.size * out.size <= opts.exhaustive_swaps:
            step = _exhaustive_step(inst, sel, sol, out, tol, opts, stats)
        else:
            step = _bounded_step(inst, sel, sol, tol, opts, stats)
        if step is None:
            break
        sel, sol = step
        stats["swaps"] += 1
    return {
        "selected": sel,
        "objective": sol.objective,
        "solver": sol.solver,
        "objective_error_bound": sol.error_bound,
        **stats,
    }


def _swapped(sel: np.ndarray, leave: int, enter: int) -> np.ndarray:
    out = sel.copy()
    out[out == leave] = enter
    return out


def _exhaustive_step(inst, sel, sol, out, tol, opts, stats):
    best = None
    for z in sel:
        for j in out:
            trial = _swapped(sel, z, j)
            cand = solve_flow(inst, trial, opts.solver)
            stats["exact_evaluations"] += 1
            if cand.objective < sol.objective - tol and (
                best is None or cand.objective < best[1].objective
            ):
                best = (trial, cand)
    return best


def _bounded_step(inst, sel, sol, tol, opts, stats):
    delta, leave = swap_deltas(inst, sel, sol.g)
    j = int(np.argmin(delta))
    if delta[j] < -tol:  # fixed-flow upper bound: LSObj(new) ≤ LSObj + delta < LSObj
        trial = _swapped(sel, leave[j], j)
        cand = solve_flow(inst, trial, opts.solver)
        stats["exact_evaluations"] += 1
        if cand.objective < sol.objective - tol:
            return trial, cand
    return _certify(inst, sel, sol, tol, opts, stats)


def _certify(inst, sel, sol, tol, opts, stats):
    """Settle every swap the dual lower bound cannot rule out, with few exact solves.

    For an entering j: LSObj(z + j) ≤ LSObj(z − z_l + j) for every z_l, so one
    exact solve of the m + 1 points rules j out when it does not improve. Else
    the flow and the duals of z + j bound each removal from above and below,
    and the swaps of j still undecided are solved exactly (best first).
    """
    h, dual = flow_duals(inst, sel, sol)
    lb, _ = swap_deltas(inst, sel, inst.w, cap=h)
    entering = np.flatnonzero(dual + lb < sol.objective - tol)
    entering = entering[np.argsort(lb[entering])]
    budget = check_positive_int(opts.max_exact_checks, "max_exact_checks")
    for j in entering:
        if budget <= 0:
            stats["certified"] = False
            return None
        plus = np.append(sel, j)
        grown = solve_flow(inst, plus, opts.solver)
        stats["exact_evaluations"] += 1
        budget -= 1
        if grown.objective >= sol.objective - tol:
            continue
        h_plus, dual_plus = flow_duals(inst, plus, grown)
        upper = grown.objective + removal_losses(inst, plus, grown.g)[sel]
        lower = np.maximum(
            dual + swap_table(inst, sel, inst.w, h, np.array([j]))[:, 0],
            dual_plus + removal_losses(inst, plus, inst.w, h_plus)[sel],
        )
        for r in np.argsort(upper):
            if lower[r] >= sol.objective - tol:
                continue
            if budget <= 0:
                stats["certified"] = False
                return None
            trial = _swapped(sel, sel[r], j)
            cand = solve_flow(inst, trial, opts.solver)
            stats["exact_evaluations"] += 1
            budget -= 1
            if cand.objective < sol.objective - tol:
                return trial, cand
    return None
