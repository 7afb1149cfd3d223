"""GAPE's local-search objective (LSObj) as a sparse min-cost flow, and swap bounds.

LSObj(z) (GAPE paper §3): every candidate x with noisy weight
w_x > 0 sends exactly w_x, either to candidates y with w_y < 0 (each absorbs
exactly a_y = −w_y) or to the selected points z_1..z_m (uncapacitated), at
cost c(x, y) = min(ρ(x, y), R/3) per unit.

Exact sparse network (no approximation): centres are uncapacitated, so x's
route to "the centres" is one arc x→C of cost d_x = min_l c(x, z_l); a pair
with ρ(x, y) ≥ R/3 costs exactly R/3, the same as the two arcs x→F (R/3) and
F→y (0) through one hub F, so only pairs with ρ < R/3 get a direct arc.
Positives with no direct arc ("isolated") can only pay d_x (to C) or R/3 (to
F); at most Σa units pass F, so only the isolated positives with the largest
d_x up to that much weight need nodes, the others pay w_x·d_x outright.

Swap bounds for the local search (z leaves, j enters; d → d'):

- upper bound (fixed flow): LSObj(z') ≤ LSObj(z) + Σ_x g_x (d'_x − d_x), g_x the
  optimal flow x→C; a negative bound is a guaranteed improvement.
- lower bound (LP duality): with optimal potentials v_y, π of the negatives
  and the hub, h_x = min(R/3 − π, min_y (c(x, y) − v_y)) and
  LSObj(z') ≥ Σ_x w_x min(d'_x, h_x) + Σ_y a_y v_y. A swap whose lower bound
  does not beat the current value cannot improve.

Both are weighted truncated k-median swap deltas, evaluated for every swap
at once with FastPAM's nearest / second-nearest bookkeeping (Schubert &
Rousseeuw 2021) over the sparse pairs with ρ < R/3.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "LSInstance",
    "FlowSolution",
    "near_pairs",
    "solve_flow",
    "flow_duals",
    "swap_deltas",
    "swap_table",
    "removal_losses",
    "nearest_two",
]

_SUPPLY_SCALE = 2.0**35  # ortools: total supply scaled to about this many integer units
_COST_SCALE = 2.0**26  # ortools: R/3 scaled to this many integer units


@dataclass
class LSInstance:
    """Public data of one LSObj family: positives, negatives, sparse pairs (ρ < R/3)."""

    r3: float  # R/3, the truncation
    w: np.ndarray  # (p,) positive weights
    a: np.ndarray  # (q,) amounts the negatives absorb (−w_y > 0)
    ei: np.ndarray  # positive → negative pairs with ρ < R/3: positive index
    ej: np.ndarray  # ... negative index
    ec: np.ndarray  # ... distance
    ci: np.ndarray  # positive → centre-candidate pairs with ρ < R/3: positive index
    cj: np.ndarray  # ... centre-candidate index (into the above-τ list)
    cc: np.ndarray  # ... distance
    n_centres: int  # number of centre candidates (above τ)


@dataclass
class FlowSolution:
    objective: float  # LSObj
    d: np.ndarray  # (p,) truncated distance of each positive to the selection
    g: np.ndarray  # (p,) optimal flow of each positive to the selection
    solver: str
    error_bound: float = 0.0  # |reported − exact| bound from integer scaling (ortools)
    net: dict | None = None  # the network that was solved (None: closed form)
    flows: np.ndarray | None = None  # its optimal arc flows


def near_pairs(
    X: np.ndarray, Y: np.ndarray, r: float, chunk_bytes: int = 2**25
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """All (i, j, ρ(X_i, Y_j)) with ρ < r: float32 GEMM screen, exact float64 distances."""
    if len(X) == 0 or len(Y) == 0:
        e = np.empty(0, dtype=np.int64)
        return e, e, np.empty(0)
    X32, Y32 = X.astype(np.float32), Y.astype(np.float32)
    xsq, ysq = np.einsum("ij,ij->i", X, X), np.einsum("ij,ij->i", Y, Y)
    # float32 rounding of ‖x‖² + ‖y‖² − 2x·y: ≤ γ_{d+8}(‖x‖² + ‖y‖²) (Higham Thm 3.5), ×4 margin
    slack = 4.0 * (X.shape[1] + 8) * 2.0**-24 * (xsq.max() + ysq.max()) + 1e-12
    rows = max(1, chunk_bytes // (4 * len(Y)))
    out_i, out_j = [], []
    for s in range(0, len(X), rows):
        d2 = xsq[s : s + rows, None] + ysq[None, :] - 2.0 * (X32[s : s + rows] @ Y32.T)
        i, j = np.nonzero(d2 < r * r + slack)
        out_i.append(i + s)
        out_j.append(j)
    i, j = np.concatenate(out_i), np.concatenate(out_j)
    dist = np.sqrt(np.einsum("ij,ij->i", X[i] - Y[j], X[i] - Y[j])) if len(i) else np.empty(0)
    keep = dist < r
    return i[keep], j[keep], dist[keep]


def nearest_two(inst: LSInstance, selected: np.ndarray, cap: np.ndarray | None = None):
    """Per positive: (d1, n1, d2) — truncated distance to the nearest and second-nearest
    selected point (n1 = −1 when none is closer than the cap)."""
    p = len(inst.w)
    cap = np.full(p, inst.r3) if cap is None else cap
    in_sel = np.zeros(inst.n_centres, dtype=bool)
    in_sel[selected] = True
    mask = in_sel[inst.cj] & (inst.cc < cap[inst.ci])
    ci, cj, cc = inst.ci[mask], inst.cj[mask], inst.cc[mask]
    order = np.lexsort((cj, cc, ci))
    ci, cj, cc = ci[order], cj[order], cc[order]
    first = np.ones(len(ci), dtype=bool)
    first[1:] = ci[1:] != ci[:-1]
    second = np.zeros(len(ci), dtype=bool)
    second[1:] = first[:-1] & ~first[1:]
    d1, d2, n1 = cap.copy(), cap.copy(), np.full(p, -1, dtype=np.int64)
    d1[ci[first]], n1[ci[first]] = cc[first], cj[first]
    d2[ci[second]] = cc[second]
    return d1, n1, d2


def _swap_parts(inst: LSInstance, selected: np.ndarray, weight: np.ndarray, cap: np.ndarray | None):
    """FastPAM pieces of Δ(z, j) = A_j + L_z + corr(z, j) for e_x = min(cap_x, d_x).

    A_j: gain of adding j; L_z: loss of removing z; corr: sparse (z, j) fix-up
    for points whose nearest z is removed while j is near them.
    """
    p, nc = len(inst.w), inst.n_centres
    cap = np.full(p, inst.r3) if cap is None else np.minimum(cap, inst.r3)
    d1, n1, d2 = nearest_two(inst, selected, cap)
    L = np.zeros(nc)
    has = n1 >= 0
    np.add.at(L, n1[has], weight[has] * (d2[has] - d1[has]))
    pair = inst.cc < cap[inst.ci]
    x, j, c = inst.ci[pair], inst.cj[pair], inst.cc[pair]
    wx = weight[x]
    A = np.bincount(j, weights=wx * (np.minimum(c, d1[x]) - d1[x]), minlength=nc)
    corr = wx * (np.minimum(c, d2[x]) - np.minimum(c, d1[x]) - (d2[x] - d1[x]))
    z = n1[x]
    ok = (z >= 0) & (corr != 0)
    key = z[ok] * nc + j[ok]
    ukey, inv = np.unique(key, return_inverse=True)
    return A, L, ukey // nc, ukey % nc, np.bincount(inv, weights=corr[ok], minlength=len(ukey))


def removal_losses(
    inst: LSInstance, selected: np.ndarray, weight: np.ndarray, cap: np.ndarray | None = None
) -> np.ndarray:
    """L_z = Σ_{x: nearest is z} weight_x (e2_x − e1_x), e = min(cap, d): the cost of removing z
    under a fixed flow (weight = g, upper bound) or fixed duals (weight = w, cap = h, lower
    bound)."""
    cap = None if cap is None else np.minimum(cap, inst.r3)
    d1, n1, d2 = nearest_two(inst, selected, cap)
    has = n1 >= 0
    return np.bincount(n1[has], weights=weight[has] * (d2[has] - d1[has]), minlength=inst.n_centres)


def swap_deltas(
    inst: LSInstance, selected: np.ndarray, weight: np.ndarray, cap: np.ndarray | None = None
):
    """Best swap per entering centre j: (delta (n_centres,), leaving centre (n_centres,)).

    delta[j] = min over selected z of Σ_x weight_x (e'_x − e_x), e_x = min(cap_x, d_x).
    Since corr ≤ 0, min_z = min(min_L, min over corr entries of L_z + corr). Entries
    for already selected j are +inf.
    """
    A, L, cz, cjj, cv = _swap_parts(inst, selected, weight, cap)
    sel = np.asarray(selected, dtype=np.int64)
    zbest = sel[int(np.argmin(L[sel]))]
    best = np.full(inst.n_centres, L[zbest])
    leave = np.full(inst.n_centres, zbest)
    if len(cz):
        val = cv + L[cz]
        order = np.lexsort((val, cjj))  # per j, smallest value first
        jj, vv, zz = cjj[order], val[order], cz[order]
        head = np.ones(len(jj), dtype=bool)
        head[1:] = jj[1:] != jj[:-1]
        jh, vh, zh = jj[head], vv[head], zz[head]
        better = vh < best[jh]
        best[jh[better]], leave[jh[better]] = vh[better], zh[better]
    delta = A + best
    delta[sel] = np.inf
    return delta, leave


def swap_table(
    inst: LSInstance,
    selected: np.ndarray,
    weight: np.ndarray,
    cap: np.ndarray | None,
    entering: np.ndarray,
):
    """Dense Δ(z, j) for every selected z (rows, in ``selected`` order) and the given j
    (columns)."""
    A, L, cz, cjj, cv = _swap_parts(inst, selected, weight, cap)
    sel = np.asarray(selected, dtype=np.int64)
    table = A[entering][None, :] + L[sel][:, None]
    row = np.full(inst.n_centres, -1)
    row[sel] = np.arange(len(sel))
    col = np.full(inst.n_centres, -1)
    col[entering] = np.arange(len(entering))
    keep = (row[cz] >= 0) & (col[cjj] >= 0)
    table[row[cz[keep]], col[cjj[keep]]] += cv[keep]
    return table


def centre_distances(inst: LSInstance, selected: np.ndarray) -> np.ndarray:
    """d_x = min(R/3, min_l ρ(x, z_l)) for every positive."""
    return nearest_two(inst, selected)[0]


def solve_flow(inst: LSInstance, selected: np.ndarray, solver: str = "auto") -> FlowSolution:
    """Exact LSObj for the selection (indices into the centre candidates)."""
    d = centre_distances(inst, selected)
    if len(inst.a) == 0:  # no negatives: everything goes to the centres
        return FlowSolution(float(inst.w @ d), d, inst.w.copy(), "closed-form")
    net = _network(inst, d)
    name = _solver_name(solver)
    flows, objective, err = _ortools(net) if name == "ortools" else _highs(net)[:3]
    g = inst.w.copy()
    g[net["kept"]] = flows[net["to_c"]]
    return FlowSolution(objective + net["constant"], d, g, name, err, net, flows)


def flow_duals(
    inst: LSInstance, selected: np.ndarray, solution: FlowSolution | None = None
) -> tuple[np.ndarray, float]:
    """Dual-feasible caps h_x and the dual value D ≤ LSObj for the selection.

    Potentials come from the optimal flow of ``solution`` (zero reduced cost on
    every arc that carries flow, propagated over the flow's support) or, without
    one, from HiGHS; either way they are repaired into a feasible dual
    (v_y ≤ π, u_x = min(d_x, h_x)), so D is a valid lower bound.
    """
    d = centre_distances(inst, selected)
    if len(inst.a) == 0:
        return np.full(len(inst.w), np.inf), float(inst.w @ d)
    if solution is not None and solution.net is not None:
        net, pot = solution.net, _support_potentials(solution.net, solution.flows, d)
    else:
        net = _network(inst, d)
        pot = _highs(net)[3]
    p, q = net["n_pos_nodes"], len(inst.a)
    pot = pot - pot[net["C"]]
    pi = -pot[net["F"]]
    v = np.minimum(-pot[p : p + q], pi)  # repair F→y: v_y ≤ π
    h = np.full(len(inst.w), inst.r3 - pi)
    if len(inst.ei):
        np.minimum.at(h, inst.ei, inst.ec - v[inst.ej])
    dual = float(inst.w @ np.minimum(d, h) + inst.a @ v)
    return h, dual


def _support_potentials(net: dict, flows: np.ndarray, d: np.ndarray) -> np.ndarray:
    """Node potentials with π_tail − π_head = cost on every arc carrying flow.

    Propagated level by level over a BFS forest of the flow's support; C's
    component is pinned by π_C = 0, any other component is shifted so that its
    positives' potentials are as large as their arcs to C allow.
    """
    import scipy.sparse as sp
    from scipy.sparse.csgraph import breadth_first_order, connected_components

    n = len(net["supply"])
    used = flows > 0
    t, h, c = net["tails"][used], net["heads"][used], net["cost"][used]
    fwd = sp.csr_matrix((c + 1.0, (t, h)), shape=(n, n))  # +1: keep zero costs stored
    graph = (fwd != 0).astype(np.int8)
    n_comp, label = connected_components(graph, directed=False)
    pred = np.full(n, -9999)
    for root in _roots(label, n_comp, net["C"]):
        order, p = breadth_first_order(graph, root, directed=False, return_predecessors=True)
        pred[order] = p[order]
    pot = np.full(n, np.nan)
    is_root = pred < 0
    pot[is_root] = 0.0
    todo = np.flatnonzero(~is_root)
    while todo.size:
        ready = todo[~np.isnan(pot[pred[todo]])]
        a, b = pred[ready], ready
        forward = np.asarray(fwd[a, b]).ravel()  # arc a→b: π_b = π_a − c
        backward = np.asarray(fwd[b, a]).ravel()  # arc b→a: π_b = π_a + c
        pot[b] = np.where(forward != 0, pot[a] - (forward - 1.0), pot[a] + (backward - 1.0))
        todo = todo[np.isnan(pot[todo])]
    return _shift_components(net, pot, label, d)


def _roots(label: np.ndarray, n_comp: int, sink: int) -> np.ndarray:
    first = np.full(n_comp, -1)
    first[label[::-1]] = np.arange(len(label))[::-1]
    first[label[sink]] = sink
    return first


def _shift_components(net: dict, pot: np.ndarray, label: np.ndarray, d: np.ndarray) -> np.ndarray:
    """Shift every component other than C's so its positives are tight to C or F at best."""
    k = net["n_pos_nodes"]
    room = d[net["kept"]] - pot[:k]  # π_x ≤ d_x (with π_C = 0 before the global shift)
    shift = np.full(label.max() + 1, np.inf)
    np.minimum.at(shift, label[:k], room)
    shift[label[net["C"]]] = 0.0
    shift[~np.isfinite(shift)] = 0.0
    pot = pot + shift[label]
    F = net["F"]
    if np.count_nonzero(label == label[F]) == 1:  # no flow through F: any π in [max v, R/3 − max u]
        v_max = -pot[k:F].min()
        u_max = pot[:k].max() if k else -np.inf
        pot[F] = -min(v_max, net["r3"] - u_max)
    return pot


# -- the network ---------------------------------------------------------------


def _network(inst: LSInstance, d: np.ndarray) -> dict:
    """Arcs and supplies of the reduced exact network for centre distances ``d``."""
    p, q = len(inst.w), len(inst.a)
    linked = np.zeros(p, dtype=bool)
    linked[inst.ei] = True
    iso = np.flatnonzero(~linked)
    iso = iso[np.argsort(-d[iso], kind="stable")]
    cum = np.cumsum(inst.w[iso]) - inst.w[iso]
    drop = iso[cum >= inst.a.sum()]  # never needed at F: they pay w·d
    keep_mask = np.ones(p, dtype=bool)
    keep_mask[drop] = False
    kept = np.flatnonzero(keep_mask)
    node = np.full(p, -1, dtype=np.int64)
    node[kept] = np.arange(len(kept))
    k = len(kept)
    F, C = k + q, k + q + 1
    kk = np.arange(k)
    tails = np.concatenate([node[inst.ei], kk, kk, np.full(q, F)])
    heads = np.concatenate([k + inst.ej, np.full(k, C), np.full(k, F), k + np.arange(q)])
    cost = np.concatenate([inst.ec, d[kept], np.full(k, inst.r3), np.zeros(q)])
    supply = np.concatenate([inst.w[kept], -inst.a, [0.0, inst.a.sum() - inst.w[kept].sum()]])
    return {
        "tails": tails,
        "heads": heads,
        "cost": cost,
        "supply": supply,
        "kept": kept,
        "to_c": len(inst.ei) + kk,
        "constant": float(inst.w[drop] @ d[drop]),
        "n_pos_nodes": k,
        "F": F,
        "C": C,
        "r3": inst.r3,
    }


def _solver_name(solver: str) -> str:
    if solver == "auto":
        try:
            import ortools.graph.python.min_cost_flow  # noqa: F401

            return "ortools"
        except ImportError:
            return "highs"
    if solver not in ("ortools", "highs"):
        raise ValueError(f"solver must be 'auto', 'ortools' or 'highs', got {solver!r}")
    return solver


def _ortools(net: dict) -> tuple[np.ndarray, float, float]:
    """Network simplex-class min-cost flow on integers (costs and supplies scaled).

    The reported objective is the integer flow rescaled and priced at the exact
    float costs; ``error_bound`` bounds its distance to the exact optimum.
    """
    from ortools.graph.python import min_cost_flow

    supply, cost = net["supply"], net["cost"]
    total = supply[supply > 0].sum()
    qs = _SUPPLY_SCALE / total
    kc = _COST_SCALE / net["r3"]
    si = np.round(supply * qs).astype(np.int64)
    si[net["C"]] -= si.sum()  # keep the integer supplies balanced at the sink
    if si[net["C"]] > 0:  # rounding made the sink a source: move it to the largest supplier
        big = int(np.argmax(si[: net["C"]]))
        si[big] += si[net["C"]]
        si[net["C"]] = 0
    ci = np.round(cost * kc).astype(np.int64)
    smcf = min_cost_flow.SimpleMinCostFlow()
    cap = np.full(len(ci), int(si[si > 0].sum()), dtype=np.int64)
    arcs = smcf.add_arcs_with_capacity_and_unit_cost(net["tails"], net["heads"], cap, ci)
    smcf.set_nodes_supplies(np.arange(len(si)), si)
    status = smcf.solve()
    if status != smcf.OPTIMAL:
        raise RuntimeError(f"min-cost flow failed with status {status}")
    flows = smcf.flows(arcs) / qs
    objective = float(flows @ cost)
    # supplies moved by ≤ n_nodes/qs in all (≤ 2·R/3 per unit); costs by ≤ ½/kc on ≤ 2·total units
    # each way
    err = 2.0 * net["r3"] * len(si) / qs + 2.0 * total / kc
    return flows, objective, float(err)


def _highs(net: dict):
    """The same network as an LP (scipy HiGHS): flows, objective, 0, node potentials."""
    import scipy.sparse as sp
    from scipy.optimize import linprog

    tails, heads = net["tails"], net["heads"]
    n_arcs, n_nodes = len(tails), len(net["supply"])
    rows = np.concatenate([tails, heads])
    cols = np.concatenate([np.arange(n_arcs), np.arange(n_arcs)])
    vals = np.concatenate([np.ones(n_arcs), -np.ones(n_arcs)])
    A = sp.csr_matrix((vals, (rows, cols)), shape=(n_nodes, n_arcs))
    res = linprog(net["cost"], A_eq=A, b_eq=net["supply"], bounds=(0, None), method="highs")
    if res.status != 0:
        raise RuntimeError(f"LSObj LP failed: {res.message}")
    return res.x, float(res.fun), 0.0, np.asarray(res.eqlin.marginals)
