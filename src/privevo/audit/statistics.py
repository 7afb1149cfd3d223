"""The audit's statistics: lower bounds on ε from a threshold test (Kairouz, Oh & Viswanath 2015)
with Clopper–Pearson bounds on its error rates, the test chosen on half the samples."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Sequence

import numpy as np
from scipy import stats


@dataclass(frozen=True)
class AuditResult:
    """One audited setting: the (1 − α) lower bound on ε beside the claimed ε."""

    setting: str  # "single release" or "PE run (T rounds)"
    noise: str
    adjacency: str
    claimed_epsilon: float
    delta: float
    sigma: float
    steps: int
    n_samples: int  # releases (or runs) per data set; half of them certify the bound
    epsilon_lower: float
    statistic: str
    threshold: float
    fpr: float  # on the certifying half
    fnr: float
    alpha: float

    @property
    def consistent(self) -> bool:
        """The lower bound does not exceed the claim (what a correct mechanism shows w.p. ≥ 1 −
        α)."""
        return self.epsilon_lower <= self.claimed_epsilon

    def as_dict(self) -> dict:
        return {**asdict(self), "consistent": self.consistent}


def clopper_pearson_upper(k, n, alpha: float):
    """One-sided (1 − α) Clopper–Pearson upper bound on a rate from k successes in n trials."""
    k, n = np.asarray(k, dtype=float), np.asarray(n, dtype=float)
    with np.errstate(invalid="ignore"):
        upper = stats.beta.ppf(1.0 - alpha, k + 1.0, np.maximum(n - k, 1e-300))
    return np.where(k >= n, 1.0, upper)


def epsilon_lower_bound(fp, n0, fn, n1, delta: float, alpha: float = 0.05):
    """(1 − α) lower bound on ε from a test's false positives/negatives (KOV15 + Clopper–Pearson).

    ``fp`` of ``n0`` samples under D called D′, ``fn`` of ``n1`` under D′ called D.
    Each rate gets a Clopper–Pearson upper bound at 1 − α/2 (union bound).
    """
    fpr = clopper_pearson_upper(fp, n0, alpha / 2)
    fnr = clopper_pearson_upper(fn, n1, alpha / 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.log(np.maximum(1.0 - delta - fnr, 0.0) / fpr)
        b = np.log(np.maximum(1.0 - delta - fpr, 0.0) / fnr)
    return np.maximum(np.nan_to_num(np.maximum(a, b), nan=0.0, neginf=0.0), 0.0)


_SELECT_ALPHA_FACTOR = 1e-3


def _best_thresholds(s0: np.ndarray, s1: np.ndarray, delta: float, alpha: float, levels: int = 512):
    """For one statistic (larger = more D′-like): the threshold τ of "s ≥ τ ⇒ D′", best bound.

    Thresholds are ranked by the bound at a stricter confidence (α/1000): it
    prefers tails with enough events to hold up on the certifying half, where
    the plain bound often picks a tail that won on the first half by chance.
    """
    alpha = alpha * _SELECT_ALPHA_FACTOR
    pooled = np.concatenate([s0, s1])
    taus = np.unique(np.quantile(pooled, np.linspace(0.0, 1.0, levels), method="nearest"))
    s0, s1 = np.sort(s0), np.sort(s1)
    fp = len(s0) - np.searchsorted(s0, taus, side="left")
    fn = np.searchsorted(s1, taus, side="left")
    bounds = epsilon_lower_bound(fp, len(s0), fn, len(s1), delta, alpha)
    i = int(np.argmax(bounds))
    return float(bounds[i]), float(taus[i])


def threshold_audit(
    scores0: np.ndarray,
    scores1: np.ndarray,
    delta: float,
    alpha: float = 0.05,
    names: Sequence[str] | None = None,
) -> dict:
    """Pick the best (statistic, direction, threshold) on the first half, certify on the second.

    ``scores0`` (N0, S) under D, ``scores1`` (N1, S) under D′. Returns the
    lower bound on ε from the second half and the test that gave it.
    """
    s0, s1 = (
        np.atleast_2d(np.asarray(scores0, float).T).T,
        np.atleast_2d(np.asarray(scores1, float).T).T,
    )
    names = list(names) if names is not None else [f"s{j}" for j in range(s0.shape[1])]
    h0, h1 = len(s0) // 2, len(s1) // 2
    best = (-1.0, 0, 1.0, 0.0)
    for j in range(s0.shape[1]):
        for sign in (1.0, -1.0):
            bound, tau = _best_thresholds(sign * s0[:h0, j], sign * s1[:h1, j], delta, alpha)
            if bound > best[0]:
                best = (bound, j, sign, tau)
    _, j, sign, tau = best
    c0, c1 = sign * s0[h0:, j], sign * s1[h1:, j]
    fp, fn = int((c0 >= tau).sum()), int((c1 < tau).sum())
    eps = float(epsilon_lower_bound(fp, len(c0), fn, len(c1), delta, alpha))
    return {
        "epsilon_lower": eps,
        "statistic": names[j] + ("" if sign > 0 else " (reversed)"),
        "threshold": sign * tau,
        "fpr": fp / len(c0),
        "fnr": fn / len(c1),
    }


def audit_result(
    scores: Sequence[np.ndarray],
    names: Sequence[str],
    *,
    delta: float,
    alpha: float,
    steps: int = 1,
    **setting,
) -> AuditResult:
    """The threshold test on (scores under D, scores under D′) as the result of one setting.

    ``setting``: the :class:`AuditResult` fields that describe it (``setting``, ``noise``,
    ``adjacency``, ``claimed_epsilon``, ``sigma``); ``n_samples`` is the number of samples
    per data set.
    """
    test = threshold_audit(scores[0], scores[1], delta, alpha, names)
    return AuditResult(
        delta=delta, steps=steps, n_samples=len(scores[0]), alpha=alpha, **setting, **test
    )


def llr_statistics(llrs, n_runs: int, releases: Sequence[str]) -> tuple[list, list[str]]:
    """Whole-run statistics from per-release log-likelihood ratios (rows: ``n_runs`` runs on D,
    then as many on D′): their sum (the optimal test of the claimed mechanism) and each
    release's alone, split by data set, with their names."""
    llrs = np.asarray(llrs)
    scores = np.column_stack([llrs.sum(axis=1), llrs])
    names = ["sum of LLRs"] + [f"LLR of {release}" for release in releases]
    return [scores[:n_runs], scores[n_runs:]], names
