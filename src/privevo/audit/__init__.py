"""Empirical privacy audit: are privevo's releases as indistinguishable as claimed?

Neighbouring data sets D and D′ differ by one *canary* point: D′ = D ∪ {canary}
(``adjacency="add_remove"``) or D with one row replaced by the canary
(``"replace"``). The mechanism is run many times on each; a distinguisher
(a threshold on a test statistic) says "D′" or "D". Any (ε, δ)-DP mechanism
satisfies, for every test with false-positive rate FPR and false-negative
rate FNR (Kairouz, Oh & Viswanath 2015),

    ε ≥ max( log((1 − δ − FNR)/FPR), log((1 − δ − FPR)/FNR) ).

Plugging in Clopper–Pearson upper bounds on FPR and FNR (each at 1 − α/2, so
jointly at 1 − α) gives a (1 − α)-confidence *lower bound* on the ε the
mechanism really spends. If that lower bound exceeds the claimed ε, the claim
is false (up to probability α). The threshold (and the statistic) is chosen
on the first half of the samples and the bound is computed on the second
half only, so choosing the best test does not bias the bound.

Settings, each a function (``privevo audit`` runs every one but the second moment, the
recover step and whole TabularPE fits; :func:`run_audit`):

Single releases

* :func:`audit_release` — one release of the noisy histogram. Exact counts are
  computed once per data set by the histogram code; each release is the
  noise of :func:`privevo.private.noisy_nn_histogram` (:func:`privevo.private.release_noise`)
  applied to them (``noisy_nn_histogram = noise(nn_histogram)``, checked in the
  tests). The statistic is the canary's candidate count (add/remove) or the
  difference of the two changed counts (replace): the likelihood-ratio test,
  since log-likelihood ratios of (discrete) Gaussians are linear in it.
* :func:`audit_cluster_sums` — one release of DPKMeans' recover step,
  :func:`privevo.private.noisy_cluster_sums` itself (noisy per-cluster sums
  and counts, σ's from :func:`privevo.kmeans.recover_noise`). Statistics: the
  likelihood-ratio statistic, the count residual alone, and the sum residual
  along the part of the canary orthogonal to (1, …, 1) — the last catches
  one scalar of noise added to every coordinate (a flaw of the public
  HDPE-means code).
* :func:`audit_second_moment` — one release of HDPE-means' private-PCA input,
  :func:`privevo.private.noisy_second_moment` itself (Σx̄x̄ᵀ with symmetric
  Gaussian noise). Statistics: the likelihood-ratio statistic on the upper
  triangle, and its diagonal and off-diagonal parts alone.
* :func:`audit_count` — the noisy row count (:func:`privevo.private.noisy_count`,
  DPKMeans under add/remove); the statistic is the noisy count itself.
* :func:`audit_dplloyd` — one DPLloyd iteration (Laplace sums, geometric
  counts, pure ε-DP) in a box that excludes 0; statistics: the canary
  cluster's sum residual along the change, and the count residual.
* :func:`audit_user_votes` — user-level (``groups``) k-neighbour votes: the
  canary is a user of several rows; the likelihood-ratio statistic.
* :func:`audit_label_votes` — text PE's label-restricted votes on stand-in
  embeddings (random unit vectors with label blocks), the real
  ``noisy_nn_histogram`` called once per release; the likelihood-ratio
  statistic, v from a float64 reference run label by label.
* :func:`audit_table_release` — one release of each TabularPE family
  (:data:`TABLE_FAMILIES`: 1-way marginals, the numeric columns' tree levels,
  pair dependence scores, 2-way pair tables, a target's 2-way tables, PE votes), the real release
  function called once per release on a public table and its neighbour; the
  claim is the release's own ledger entry. Statistics: the sum of the parts'
  log-likelihood ratios and each part's alone.
* :func:`audit_marginal_choice` — one adaptive choice of TabularPE (the real
  ``exponential_choice``, zCDP-calibrated), public estimates that move half the
  qualities up and half down by Δ; the statistic is the chosen clique's
  log-probability ratio.

Whole runs (every release of a run observed)

* :func:`audit_runs` — whole :class:`~privevo.PrivateEvolution` runs of T
  rounds, every round's noisy counts observed. The auditor knows D, the
  canary and each round's public candidates, so it computes the per-round
  log-likelihood ratio llr_t = ((y_t − h_t)·v_t − ‖v_t‖²/2)/σ² (h_t the exact
  counts of D, v_t the change a canary makes in round t; exact for both
  noises). Statistics: Σ_t llr_t (the optimal test for the claimed mechanism)
  and each llr_t alone (it catches a round released with too little noise).
  Also runs stopped and resumed from a checkpoint (``resume_after``).
* :func:`audit_tabular` — whole :class:`~privevo.TabularPE` fits: the LLR of
  every PE round and of the 1-way marginals, their sum and each alone.

The exact counts the auditor uses come from the float64 brute force
:func:`privevo.private.reference_assign`, independent of the backends.
"""

from __future__ import annotations

from .releases import (
    audit_cluster_sums,
    audit_count,
    audit_dplloyd,
    audit_release,
    audit_second_moment,
)
from .runs import audit_runs, default_model
from .scenarios import CanaryScenario, canary_scenario
from .statistics import AuditResult, clopper_pearson_upper, epsilon_lower_bound, threshold_audit
from .suite import format_table, run_audit
from .table_releases import (
    TABLE_FAMILIES,
    audit_marginal_choice,
    audit_table_release,
    table_scenario,
)
from .tabular import _tabular_model, audit_tabular  # noqa: F401  (_tabular_model: tests)
from .votes import audit_label_votes, audit_user_votes, label_scenario

__all__ = [
    "AuditResult",
    "audit_release",
    "audit_cluster_sums",
    "audit_second_moment",
    "audit_dplloyd",
    "audit_count",
    "audit_user_votes",
    "audit_label_votes",
    "audit_tabular",
    "audit_table_release",
    "audit_marginal_choice",
    "TABLE_FAMILIES",
    "table_scenario",
    "label_scenario",
    "audit_runs",
    "run_audit",
    "clopper_pearson_upper",
    "epsilon_lower_bound",
    "threshold_audit",
    "canary_scenario",
    "CanaryScenario",
    "default_model",
    "format_table",
]
