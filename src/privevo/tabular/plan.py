"""TabularPE's budget plan: shares of μ², the noise of each release family, the rounds.

Everything here reads public inputs only (the parameters and the metadata's public
``n_rows`` and columns), before any release. The budget B is μ(ε, δ)² under GDP, or 2ρ(ε, δ)
under zCDP for the discrete Gaussians (:func:`privevo.accounting.quadratic_budget`); releases
that take shares s_i of B with Σ s_i ≤ 1 compose to at most B (docs/privacy.md,
"Accounting")::

    refinements = refine_share                    (numeric tree levels; 0 without numerics)
    pair scores = PAIR_SELECTION · pair_share     (MST's selection, McKenna et al. 2021 §4)
    pair tables = (1 − PAIR_SELECTION) · pair_share
        or, with ``pair_selection="adaptive"``, C rounds of AIM's (McKenna et al. 2022):
    choices     = ADAPTIVE_SELECTION · pair_share  (C exponential-mechanism choices)
    cliques     = (1 − ADAPTIVE_SELECTION) · pair_share  (C chosen 2- or 3-way tables)
    rest        = 1 − refinements − pairs
    1-way marginals = rest · marginal_share,  PE rounds = rest · (1 − marginal_share)

With a declared ``target`` (a categorical column), its C − 1 two-way tables with every other
column are measured first, with share ``s_t`` (:func:`target_share`), and the shares above
split the remaining 1 − s_t.

A release family of c releases of sensitivity Δ taking share s has σ = Δ·√(c/(s·B))
(:func:`privevo.accounting.share_sigma`). The adaptive selection's exponential mechanism is
accounted by zCDP (ε²/8 per choice of ε, :class:`privevo.private.Release`), so with it B is
2ρ(ε, δ) for every release and a choice taking share s has ε = 2√(s·B) (rounded down).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from .. import accounting
from ..adjacency import vote_sensitivity
from .fine import tree_levels
from .metadata import TableMetadata

__all__ = ["Plan", "make_plan", "default_delta", "population"]

ROUND_BUDGET = 60  # μ_round²·N of one round under iterations="auto" (Tab-PE's adult setting)
MAX_AUTO_ROUNDS = 3  # iterations="auto" at most: T = 10 lost 1-way fit on gss_wages (dev seeds)
MIN_MARGINAL_SHARE = 0.5  # marginal_share="auto" at least (less lost 1-way fit at ε = 4)
MAX_MARGINAL_SHARE = 0.9  # marginal_share="auto" at most: the rounds keep ≥ 10 % of μ²
PAIR_SELECTION = 0.25  # of pair_share: the dependence scores (the rest: the chosen 2-way tables)
ADAPTIVE_SELECTION = 0.1  # of pair_share, adaptive: the C choices (AIM's α = 0.9 on tables)
TARGET_NOISE = 0.01  # σ of a target table's cells at most this share of the public n_rows …
TARGET_SHARE = (0.3, 0.6)  # … within these shares of B (0.45 without n_rows)


@dataclasses.dataclass(frozen=True)
class Plan:
    """The public plan of one fit: its budget, shares, and the parameters of every release."""

    epsilon: float
    delta: float
    noise: str
    adjacency: str
    bins: int
    levels: int
    pair_bins: int
    threshold: float
    measured: bool  # the 1-way marginals (and everything built on them) are measured
    shares: dict
    marginal_share: float
    iterations: int
    pair_selection: str = "tree"

    @property
    def budget(self) -> float:
        """B, the additive budget every share splits (module docstring): 2ρ(ε, δ) under zCDP
        (discrete noise, or the adaptive selection's exponential mechanism), else μ(ε, δ)²."""
        zcdp = self.pair_selection == "adaptive" and self.noise == "gaussian"
        noise = "discrete_gaussian" if zcdp else self.noise  # zCDP's B: 2ρ(ε, δ)
        return accounting.quadratic_budget(self.epsilon, self.delta, noise)

    def selection_epsilon(self, count: int) -> float:
        """ε of each of ``count`` exponential-mechanism choices sharing the adaptive selection's
        share: 2Δ/σ with σ the Gumbel scale whose ρ = Δ²/(2σ²) takes its part of the share
        (Δ = 1 or 2, the L1 distances' sensitivity; σ rounded up, so ε down)."""
        sigma = self.sigma(self.shares["pair_selection"], count, score=True)
        return 2.0 * self.sensitivity**2 / sigma

    @property
    def sensitivity(self) -> float:
        """Δ of one count histogram: 1 (add/remove) or √2 (replace)."""
        return vote_sensitivity(self.adjacency)

    def sigma(self, share: float, count: int, score: bool = False) -> float:
        """σ of ``count`` releases taking ``share`` of B; ``score``: the pair scores, whose
        sensitivity is 1 (add/remove) or 2 (replace) instead of 1 or √2."""
        sensitivity = self.sensitivity**2 if score else self.sensitivity
        return accounting.share_sigma(self.budget, share, sensitivity, count)

    def marginal_sigma(self, n_columns: int) -> float:
        """σ of the C marginal releases: √C·Δ/μ_m with μ_m² = share·B (rounded up)."""
        share = self.shares["rest"] * self.marginal_share
        return accounting.share_sigma(self.budget, share, self.sensitivity, n_columns)

    def pe_sigma(self) -> float | None:
        """σ of each of the T rounds: √T·Δ/μ_PE with μ_PE² = (1 − share)·B (exact GDP split,
        rounded up; no ε round trip, so it holds down to ε = 1e-6). None: the engine's own."""
        if not self.measured:
            return None
        share = self.shares["rest"] * (1.0 - self.marginal_share)
        return accounting.share_sigma(self.budget, share, self.sensitivity, self.iterations)


def default_delta(delta: float | None, metadata: TableMetadata | None) -> float:
    """δ from public inputs: given, or the default for the metadata's public ``n_rows``."""
    if delta is not None:
        return float(delta)
    return accounting.default_delta(metadata.n_rows if metadata is not None else None)


def make_plan(params: dict, metadata: TableMetadata, delta: float) -> Plan:
    """The plan of a fit from TabularPE's parameters (``params``: its constructor's) and the
    public metadata."""
    measured = params["marginal_share"] != 0 and params["epsilon"] != math.inf
    selection = _pair_selection(params, metadata, measured)
    base = dict(
        epsilon=params["epsilon"],
        delta=delta,
        noise=params["noise"],
        adjacency=params["adjacency"],
        bins=params["bins"],
        levels=params["levels"],
        pair_bins=params["pair_bins"],
        threshold=params["threshold"],
        measured=measured,
        pair_selection=selection,
    )
    shares = _shares(params, metadata, measured, selection)
    budget = Plan(**base, shares=shares, marginal_share=0.0, iterations=0).budget
    if measured and params.get("target") is not None and len(metadata.columns) > 1:
        share = target_share(params, metadata, budget)
        shares = {k: v * (1.0 - share) for k, v in shares.items()}
        shares["target_pairs"] = share
    share = _marginal_share(params, metadata, shares["rest"] * budget)
    rounds = _rounds(params, metadata, shares["rest"] * (1.0 - share * measured) * budget)
    return Plan(**base, shares=shares, marginal_share=share, iterations=rounds)


def _pair_selection(params: dict, metadata: TableMetadata, measured: bool) -> str:
    """The selection the fit runs: ``"adaptive"`` only with pairs measured, else ``"tree"``."""
    adaptive = params.get("pair_selection", "tree") == "adaptive"
    pairs = measured and params["pair_share"] > 0 and len(metadata.columns) > 1
    return "adaptive" if adaptive and pairs else "tree"


def target_share(params: dict, metadata: TableMetadata, budget: float) -> float:
    """s_t, the share of B on the target's C − 1 tables: the least that keeps each cell's
    σ_t = Δ·√((C − 1)/(s_t·B)) at most ``TARGET_NOISE``·N (N the public ``n_rows``), clipped
    to ``TARGET_SHARE``. At N = 2380, C = 14, ε = 1: σ_t ≈ 22 counts, so a target rate in a
    feature cell of 250 rows is resolved to about ±0.1 (docs/tabular.md, "A declared
    target")."""
    low, high = TARGET_SHARE
    n, c = metadata.n_rows, len(metadata.columns)
    if not n or params["epsilon"] == math.inf:
        return (low + high) / 2
    sensitivity = vote_sensitivity(params["adjacency"])
    share = (c - 1) * sensitivity**2 / (budget * (TARGET_NOISE * n) ** 2)
    return float(np.clip(share, low, high))


def _shares(params: dict, metadata: TableMetadata, measured: bool, selection: str) -> dict:
    """Shares of B: refinements and pairs first, then the rest (module docstring)."""
    levels = sum(tree_levels(s, params["bins"], params["levels"]) for s in metadata.columns)
    refine = float(params["refine_share"]) if measured and levels > 0 else 0.0
    pair = float(params["pair_share"]) if measured and len(metadata.columns) > 1 else 0.0
    chosen = ADAPTIVE_SELECTION if selection == "adaptive" else PAIR_SELECTION
    return {
        "refinements": refine,
        "pair_selection": chosen * pair,
        "pairs": (1 - chosen) * pair,
        "rest": 1.0 - refine - pair,
    }


def _marginal_share(params: dict, metadata: TableMetadata, mu2: float) -> float:
    """The share of the rest (μ² = ``mu2``) spent on the marginals: ``marginal_share``, or
    for ``"auto"`` enough for each column's noise variance to be half the sampling variance
    of a bin with N/B rows: share = 2B·C·Δ²/(μ²·N), clipped to [0.5, 0.9] (0.5 without
    ``n_rows``)."""
    if params["marginal_share"] != "auto":
        return float(params["marginal_share"])
    n, n_columns = metadata.n_rows, len(metadata.columns)
    if not n or params["epsilon"] == math.inf:
        return 0.5
    sensitivity = vote_sensitivity(params["adjacency"])
    share = 2 * params["bins"] * n_columns * sensitivity**2 / (mu2 * n)
    return float(np.clip(share, MIN_MARGINAL_SHARE, MAX_MARGINAL_SHARE))


def _rounds(params: dict, metadata: TableMetadata, mu_pe2: float) -> int:
    """T: ``iterations``, or ⌊μ_PE²·N/60⌋ clipped to [1, 3] (2 without public n_rows)."""
    if params["iterations"] != "auto":
        return params["iterations"]
    n = metadata.n_rows
    if not n:
        return 2
    if params["epsilon"] == math.inf:
        return MAX_AUTO_ROUNDS
    return int(np.clip(mu_pe2 * n // ROUND_BUDGET, 1, MAX_AUTO_ROUNDS))


def population(n_synthetic, metadata: TableMetadata) -> int:
    """m: ``n_synthetic``, or for ``"auto"`` N/30 clipped to [50, 3000] with N the public
    ``n_rows`` (else 300): about 10 votes per candidate of a round."""
    if n_synthetic != "auto":
        return n_synthetic
    return int(np.clip(metadata.n_rows // 30, 50, 3000)) if metadata.n_rows else 300
