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

Three settings:

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
* :func:`audit_runs` — whole :class:`~privevo.PrivateEvolution` runs of T
  rounds, every round's noisy counts observed. The auditor knows D, the
  canary and each round's public candidates, so it computes the per-round
  log-likelihood ratio llr_t = ((y_t − h_t)·v_t − ‖v_t‖²/2)/σ² (h_t the exact
  counts of D, v_t the change a canary makes in round t; exact for both
  noises). Statistics: Σ_t llr_t (the optimal test for the claimed mechanism)
  and each llr_t alone (it catches a round released with too little noise).

The exact counts the auditor uses come from the float64 brute force
:func:`privevo.private.reference_assign`, independent of the backends.
"""

from __future__ import annotations

import functools
import math
from dataclasses import asdict, dataclass
from functools import partial
from typing import Callable, Sequence

import numpy as np
from scipy import stats

from . import accounting
from ._validation import (
    check_adjacency,
    check_delta,
    check_epsilon,
    check_positive_int,
    check_random_state,
)

__all__ = [
    "AuditResult",
    "audit_release",
    "audit_cluster_sums",
    "audit_second_moment",
    "audit_dplloyd",
    "audit_count",
    "audit_user_votes",
    "audit_label_votes",
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


# ---------------------------------------------------------------- statistics


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


# ---------------------------------------------------------------- scenario


@dataclass(frozen=True)
class CanaryScenario:
    """D, D′ and what the auditor knows: the canary, the replaced row (replace adjacency)."""

    D: np.ndarray
    D_prime: np.ndarray
    canary: np.ndarray
    replaced: np.ndarray | None  # the row of D that D′ replaces by the canary
    candidates: np.ndarray  # public candidates of the single-release audit


def canary_scenario(
    adjacency: str = "add_remove", n: int = 60, seed: int = 2026, canary=(0.9, 0.9)
) -> CanaryScenario:
    """A fixed public test scenario in 2-D: two clusters in the unit ball, a canary at (0.9, 0.9).

    The canary sits away from the data; for a vote histogram any point is a
    worst case (every point changes one count by one). Candidates: 8 points of
    a public grid; the default canary stands on candidate 0 so it votes for it.
    Under ``"replace"`` D′ replaces D's first row (which votes for candidate 1).
    """
    check_adjacency(adjacency)
    rng = np.random.default_rng(seed)
    D = np.vstack(
        [rng.normal([-0.5, 0.0], 0.1, (n - n // 4, 2)), rng.normal([0.4, -0.4], 0.1, (n // 4, 2))]
    )
    canary = np.asarray(canary, dtype=np.float64)
    grid = np.array(
        [
            [0.9, 0.9],
            [-0.5, 0.0],
            [0.4, -0.4],
            [0.0, 0.5],
            [-0.6, -0.6],
            [0.6, 0.0],
            [0.0, -0.8],
            [-0.8, 0.6],
        ]
    )
    if adjacency == "add_remove":
        return CanaryScenario(D, np.vstack([D, canary]), canary, None, grid)
    D_prime = D.copy()
    D_prime[0] = canary
    return CanaryScenario(D, D_prime, canary, D[0].copy(), grid)


def _claimed_epsilon(
    sigma: float, delta: float, steps: int, sensitivity: float, noise: str
) -> float:
    if accounting.is_discrete_gaussian(noise):
        return accounting.discrete_gaussian_epsilon(sigma, delta, steps, sensitivity)
    return accounting.epsilon_of(sigma, delta, steps, sensitivity)


def _reference_counts(points: np.ndarray, candidates: np.ndarray) -> np.ndarray:
    from .private import reference_assign

    return np.bincount(reference_assign(points, candidates), minlength=len(candidates))


def _canary_vector(scenario: CanaryScenario, candidates: np.ndarray) -> np.ndarray:
    """v = counts(D′) − counts(D) on these candidates, by the float64 reference."""
    from .private import reference_assign

    v = np.zeros(len(candidates))
    v[reference_assign(scenario.canary[None, :], candidates)[0]] += 1
    if scenario.replaced is not None:
        v[reference_assign(scenario.replaced[None, :], candidates)[0]] -= 1
    return v


# ---------------------------------------------------------------- single release


def _single_release_arguments(epsilon, delta, n_releases, random_state):
    """Checked (ε, δ, n_releases, Generator) of a single-release audit."""
    epsilon, delta = check_epsilon(epsilon), check_delta(delta)
    n_releases = check_positive_int(n_releases, "n_releases", minimum=4)
    return epsilon, delta, n_releases, check_random_state(random_state)


def _release_statistics(
    sc: CanaryScenario, n_releases: int, statistics: Callable
) -> list[np.ndarray]:
    """For D, then D′: ``n_releases`` rows of ``statistics(data)``, one fresh release each."""
    return [np.array([statistics(data) for _ in range(n_releases)]) for data in (sc.D, sc.D_prime)]


def audit_release(
    epsilon: float,
    delta: float = 1e-5,
    *,
    noise: str = "gaussian",
    adjacency: str = "add_remove",
    n_releases: int = 100_000,
    alpha: float = 0.05,
    random_state=None,
    histogram: Callable | None = None,
    add_noise: Callable | None = None,
    scenario: CanaryScenario | None = None,
) -> AuditResult:
    """Audit one noisy-histogram release with σ calibrated for (ε, δ) and one step.

    ``histogram(private, candidates) → counts`` (default
    :func:`privevo.private.nn_histogram`) and ``add_noise(counts, σ, rng)``
    (default: the registered ``noise``) are the mechanism's two halves; tests
    pass deliberately broken ones.
    """
    from .private import nn_histogram, release_noise

    epsilon, delta, n_releases, rng = _single_release_arguments(
        epsilon, delta, n_releases, random_state
    )
    sensitivity = check_adjacency(adjacency)
    sc = scenario or canary_scenario(adjacency)
    histogram = histogram or nn_histogram
    add_noise = add_noise or (lambda counts, sigma, rng: release_noise(counts, sigma, rng, noise))
    sigma = accounting.calibrate(epsilon, delta, 1, sensitivity, noise)
    v = _canary_vector(sc, sc.candidates)
    watched = np.flatnonzero(v)  # the canary's candidate (and the replaced row's)
    scores = []
    for data in (sc.D, sc.D_prime):
        exact = np.asarray(histogram(data, sc.candidates))[watched]
        noisy = add_noise(np.repeat(exact[None, :], n_releases, axis=0), sigma, rng)
        scores.append(noisy @ v[watched])  # the LR statistic
    test = threshold_audit(
        scores[0],
        scores[1],
        delta,
        alpha,
        ["canary count" if len(watched) == 1 else "count difference"],
    )
    return AuditResult(
        setting="single release",
        noise=noise,
        adjacency=adjacency,
        claimed_epsilon=_claimed_epsilon(sigma, delta, 1, sensitivity, noise),
        delta=delta,
        sigma=sigma,
        steps=1,
        n_samples=n_releases,
        alpha=alpha,
        **test,
    )


# ---------------------------------------------------------------- recover step


def audit_cluster_sums(
    epsilon: float,
    delta: float = 1e-5,
    *,
    adjacency: str = "add_remove",
    n_releases: int = 20_000,
    alpha: float = 0.05,
    random_state=None,
    release: Callable | None = None,
    canary=(0.6, -0.8),
) -> AuditResult:
    """Audit one release of noisy per-cluster sums and counts, σ's calibrated for (ε, δ).

    D is :func:`canary_scenario`'s data; D′ adds ``canary`` (or replaces D's
    first row by it); the public centres are the two cluster locations.
    ``release(private, centers, σ_sum, σ_count, rng) → (sums, counts)``
    (default :func:`privevo.private.noisy_cluster_sums`) is called once per
    sample; tests pass broken ones.
    """
    from .kmeans import recover_noise
    from .private import cluster_sums, noisy_cluster_sums

    epsilon, delta, n_releases, rng = _single_release_arguments(
        epsilon, delta, n_releases, random_state
    )
    release = release or (
        lambda *args, **kw: tuple(r.value for r in noisy_cluster_sums(*args, **kw))
    )
    sc = canary_scenario(adjacency, canary=canary)
    centers = sc.candidates[1:3]
    noise = recover_noise(
        math.sqrt(accounting.quadratic_budget(epsilon, delta)), sc.D.shape[1], adjacency
    )
    s_sum, s_count = noise["sigma_sum"], noise["sigma_count"]
    sums0, counts0 = cluster_sums(sc.D, centers)
    sums1, counts1 = cluster_sums(sc.D_prime, centers)
    d_sums, d_counts = sums1 - sums0, counts1 - counts0
    ones = np.ones(sc.D.shape[1]) / np.sqrt(sc.D.shape[1])
    off_diagonal = d_sums - np.outer(
        d_sums @ ones, ones
    )  # the change orthogonal to (1, …, 1) per cluster

    def statistics(data):
        sums, counts = release(data, centers, s_sum, s_count, rng)
        r_sums, r_counts = sums - sums0, counts - counts0
        llr = np.sum(r_sums * d_sums) / s_sum**2 + np.dot(r_counts, d_counts) / s_count**2
        return [llr, np.dot(r_counts, d_counts), np.sum(r_sums * off_diagonal)]

    scores = _release_statistics(sc, n_releases, statistics)
    test = threshold_audit(
        scores[0],
        scores[1],
        delta,
        alpha,
        ["likelihood ratio", "count residual", "sum residual off (1, …, 1)"],
    )
    mu_claimed = np.sqrt(
        (noise["sum_sensitivity"] / s_sum) ** 2 + (noise["count_sensitivity"] / s_count) ** 2
    )
    return AuditResult(
        setting="recover step (cluster sums + counts)",
        noise="gaussian",
        adjacency=adjacency,
        claimed_epsilon=accounting.epsilon_of_mu(mu_claimed, delta),
        delta=delta,
        sigma=s_sum,
        steps=1,
        n_samples=n_releases,
        alpha=alpha,
        **test,
    )


def audit_second_moment(
    epsilon: float,
    delta: float = 1e-5,
    *,
    adjacency: str = "add_remove",
    n_releases: int = 20_000,
    alpha: float = 0.05,
    random_state=None,
    release: Callable | None = None,
    canary=(1.0, 0.0),
) -> AuditResult:
    """Audit one release of the noisy second moment, σ calibrated for (ε, δ).

    D is :func:`canary_scenario`'s data; D′ adds ``canary`` (or replaces D's
    first row by it). ``release(private, σ, rng) → (d, d) matrix`` (default
    :func:`privevo.private.noisy_second_moment`) is called once per sample;
    tests pass broken ones.
    """
    from .private import noisy_second_moment, second_moment

    epsilon, delta, n_releases, rng = _single_release_arguments(
        epsilon, delta, n_releases, random_state
    )
    release = release or (lambda *args, **kw: noisy_second_moment(*args, **kw).value)
    sc = canary_scenario(adjacency, canary=canary)
    sensitivity = check_adjacency(adjacency)
    sigma = accounting.share_sigma(accounting.quadratic_budget(epsilon, delta), 1.0, sensitivity)
    upper = np.triu_indices(sc.D.shape[1])
    on_diagonal = upper[0] == upper[1]
    base = second_moment(sc.D)[upper]
    change = second_moment(sc.D_prime)[upper] - base

    def statistics(data):
        r = (release(data, sigma, rng)[upper] - base) * change
        return [r.sum(), r[on_diagonal].sum(), r[~on_diagonal].sum()]

    scores = _release_statistics(sc, n_releases, statistics)
    test = threshold_audit(
        scores[0],
        scores[1],
        delta,
        alpha,
        ["likelihood ratio", "diagonal residual", "off-diagonal residual"],
    )
    return AuditResult(
        setting="HDPE projection (second moment)",
        noise="gaussian",
        adjacency=adjacency,
        claimed_epsilon=accounting.epsilon_of_mu(sensitivity / sigma, delta),
        delta=delta,
        sigma=sigma,
        steps=1,
        n_samples=n_releases,
        alpha=alpha,
        **test,
    )


# ---------------------------------------------------------------- the noisy row count


def audit_count(
    epsilon: float,
    delta: float = 1e-5,
    *,
    noise: str = "gaussian",
    n_releases: int = 100_000,
    alpha: float = 0.05,
    random_state=None,
    release: Callable | None = None,
) -> AuditResult:
    """Audit the noisy row count (DPKMeans under add/remove), σ calibrated for (ε, δ), one step.

    ``release(private, σ, rng, noise) → ñ`` (default
    :func:`privevo.private.noisy_count`) is called once per sample on D and
    on D plus one row; the statistic is ñ itself (the likelihood-ratio test).
    """
    from .private import noisy_count

    epsilon, delta, n_releases, rng = _single_release_arguments(
        epsilon, delta, n_releases, random_state
    )
    release = release or (lambda *args, **kw: float(noisy_count(*args, **kw).value[0]))
    sc = canary_scenario("add_remove")
    sigma = accounting.calibrate(epsilon, delta, 1, 1.0, noise)
    scores = [
        np.array([[release(x, sigma, rng, noise)] for _ in range(n_releases)])
        for x in (sc.D, sc.D_prime)
    ]
    test = threshold_audit(scores[0], scores[1], delta, alpha, ["noisy count"])
    return AuditResult(
        setting="noisy row count",
        noise=noise,
        adjacency="add_remove",
        claimed_epsilon=_claimed_epsilon(sigma, delta, 1, 1.0, noise),
        delta=delta,
        sigma=sigma,
        steps=1,
        n_samples=n_releases,
        alpha=alpha,
        **test,
    )


# ---------------------------------------------------------------- DPLloyd (a baseline)


def audit_dplloyd(
    epsilon: float,
    delta: float = 1e-5,
    *,
    n_releases: int = 20_000,
    alpha: float = 0.05,
    random_state=None,
    release: Callable | None = None,
    bounds=(10.0, 12.0),
    canary=(11.9, 11.9),
) -> AuditResult:
    """Audit one DPLloyd iteration (Laplace sums + geometric counts, pure ε-DP) in a box.

    D is :func:`canary_scenario`'s data moved into ``bounds`` (default a box
    that excludes 0, where raw sums have a larger sensitivity than the range),
    D′ adds ``canary``. ``release(X, centers, lo, hi, split, rng) → (sums,
    counts)`` (default :func:`privevo.baselines.dplloyd.dplloyd_release`);
    tests pass the raw-sum version. Statistics: the canary cluster's sum
    residual along the change, and the count residual.
    """
    from .baselines.dplloyd import dplloyd_release, split_epsilon

    epsilon, delta, n_releases, rng = _single_release_arguments(
        epsilon, delta, n_releases, random_state
    )
    release = release or (lambda *args: tuple(r.value for r in dplloyd_release(*args)))
    sc = canary_scenario("add_remove")
    lo, hi = np.full(2, float(bounds[0])), np.full(2, float(bounds[1]))
    mid = (lo + hi) / 2
    D, D_prime = (np.clip(x + mid, lo, hi) for x in (sc.D, sc.D_prime))
    D_prime[-1] = canary
    centers = sc.candidates[1:3] + mid
    split = split_epsilon(epsilon, 2)
    exact = [_exact_dplloyd(x, centers, mid) for x in (D, D_prime)]
    d_sums, d_counts = exact[1][0] - exact[0][0], exact[1][1] - exact[0][1]

    def statistics(
        data,
    ):  # a constant offset (raw instead of centred sums) does not change the test
        sums, counts = release(data, centers, lo, hi, split, rng)
        return [np.sum((sums - exact[0][0]) * d_sums), np.dot(counts - exact[0][1], d_counts)]

    scores = [np.array([statistics(x) for _ in range(n_releases)]) for x in (D, D_prime)]
    test = threshold_audit(scores[0], scores[1], delta, alpha, ["sum residual", "count residual"])
    return AuditResult(
        setting="DPLloyd iteration (box without 0)",
        noise="laplace",
        adjacency="add_remove",
        claimed_epsilon=epsilon,
        delta=delta,
        sigma=float(2.0 / split.feature_sum),
        steps=1,
        n_samples=n_releases,
        alpha=alpha,
        **test,
    )


def _exact_dplloyd(X, centers, mid):
    from .private import cluster_statistics

    return cluster_statistics(X - mid, centers - mid)


# ---------------------------------------------------------------- whole runs


def default_model(
    epsilon: float, delta: float, iterations: int, noise: str, adjacency: str, rng, cls=None
):
    """The audited PE configuration: rank selection, Gaussian variation, 4 points, 12 candidates.

    ``cls`` (default :class:`~privevo.PrivateEvolution`) lets tests audit a subclass.
    """
    from .evolution import PrivateEvolution
    from .selection import Rank
    from .variation import GaussianVariation, UniformBall

    return (cls or PrivateEvolution)(
        UniformBall(1.0),
        GaussianVariation(0.2, per_point=2, radius=1.0),
        Rank(),
        n_synthetic=4,
        iterations=iterations,
        epsilon=epsilon,
        delta=delta,
        adjacency=adjacency,
        noise=noise,
        random_state=rng,
        keep_candidates=True,
    )


def _run_llrs(model, scenario: CanaryScenario) -> np.ndarray:
    """Per-round log-likelihood ratios llr_t = ((y_t − h_t)·v_t − ‖v_t‖²/2)/σ² of one fitted run."""
    out = np.empty(len(model.history_))
    for t, record in enumerate(model.history_):
        cands = record.candidates
        v = _canary_vector(scenario, cands)
        resid = record.noisy_counts - _reference_counts(scenario.D, cands)
        out[t] = (resid @ v - 0.5 * (v @ v)) / record.sigma**2
    return out


def audit_runs(
    epsilon: float,
    delta: float = 1e-5,
    *,
    noise: str = "gaussian",
    adjacency: str = "add_remove",
    n_runs: int = 1000,
    iterations: int = 5,
    alpha: float = 0.05,
    random_state=None,
    make_model: Callable | None = None,
    scenario: CanaryScenario | None = None,
    progress: bool = False,
    resume_after: int | None = None,
) -> AuditResult:
    """Audit whole :class:`~privevo.PrivateEvolution` runs of T rounds, every round observed.

    ``make_model(epsilon, delta, iterations, noise, adjacency, rng)`` builds an
    unfitted model (default :func:`default_model`; it must keep candidates).
    Every run is a real ``fit`` with its own generator, ``n_runs`` on D and as
    many on D′. With ``resume_after=k`` every run is checkpointed, stopped
    after round k and resumed from its checkpoint by a new model (the rounds
    observed are the resumed run's ``history_``).
    """
    epsilon, delta = check_epsilon(epsilon), check_delta(delta)
    n_runs = check_positive_int(n_runs, "n_runs", minimum=4)
    iterations = check_positive_int(iterations, "iterations")
    check_adjacency(adjacency)
    seeds = np.random.SeedSequence(check_random_state(random_state).integers(2**63)).spawn(
        2 * n_runs
    )
    sc = scenario or canary_scenario(adjacency)
    make_model = make_model or default_model
    llrs, model = [], None
    bar = _progress(2 * n_runs, progress)
    for i, data in enumerate([sc.D] * n_runs + [sc.D_prime] * n_runs):
        make = partial(
            make_model,
            epsilon,
            delta,
            iterations,
            noise,
            adjacency,
            np.random.default_rng(seeds[i]),
        )
        model = make().fit(data) if resume_after is None else _resumed_fit(make, data, resume_after)
        llrs.append(_run_llrs(model, sc))
        bar.update(1)
    bar.close()
    llrs = np.asarray(llrs)
    scores = np.column_stack([llrs.sum(axis=1), llrs])
    names = ["sum of LLRs"] + [f"LLR of round {t + 1}" for t in range(iterations)]
    test = threshold_audit(scores[:n_runs], scores[n_runs:], delta, alpha, names)
    report = model.privacy_report_
    return AuditResult(
        setting=f"PE run ({iterations} rounds)"
        + ("" if resume_after is None else f", resumed after round {resume_after}"),
        noise=noise,
        adjacency=adjacency,
        claimed_epsilon=float(report["epsilon"]),
        delta=delta,
        sigma=float(model.sigma_),
        steps=iterations,
        n_samples=n_runs,
        alpha=alpha,
        **test,
    )


class _Interrupt(Exception):
    pass


def _resumed_fit(make: Callable, data: np.ndarray, stop_after: int):
    """fit with a checkpoint, interrupted after round ``stop_after``, then resumed by a new
    model."""
    import tempfile
    from pathlib import Path

    def interrupt(record):
        if record.iteration + 1 == stop_after:
            raise _Interrupt

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "run.ckpt"
        first = make()
        first.checkpoint, first.callbacks = path, [interrupt]
        try:
            first.fit(data)
        except _Interrupt:
            pass
        resumed = make()
        resumed.checkpoint = path
        return resumed.fit(data)


class _NoBar:
    def update(self, n: int) -> None:
        pass

    def close(self) -> None:
        pass


def _progress(total: int, enabled: bool):
    if not enabled:
        return _NoBar()
    from tqdm.auto import tqdm

    return tqdm(total=total, desc="PE runs", leave=False)


# ---------------------------------------------------------------- the full audit


def run_audit(
    epsilons: Sequence[float] = (0.5, 1.0, 4.0),
    delta: float = 1e-5,
    *,
    noises: Sequence[str] = ("gaussian", "discrete_gaussian"),
    adjacencies: Sequence[str] = ("add_remove", "replace"),
    n_releases: int = 100_000,
    n_runs: int = 1000,
    iterations: int = 5,
    alpha: float = 0.05,
    seed: int = 0,
    progress: bool = False,
) -> list[AuditResult]:
    """Every (setting, noise, adjacency, ε): single releases, then whole runs (``n_runs=0`` skips
    them)."""
    if not (isinstance(alpha, (int, float)) and 0 < alpha < 1):
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    if not (isinstance(n_runs, (int, np.integer)) and n_runs >= 0):
        raise ValueError(
            f"the number of runs must be an integer >= 0 (0 skips whole runs), got {n_runs!r}"
        )
    results = []
    for noise in noises:
        for adjacency in adjacencies:
            runs = functools.partial(
                audit_runs,
                delta=delta,
                noise=noise,
                adjacency=adjacency,
                n_runs=n_runs,
                iterations=iterations,
                alpha=alpha,
                progress=progress,
            )
            for i, eps in enumerate(epsilons):
                rs = [seed, i, len(results)]
                results.append(
                    audit_release(
                        eps,
                        delta,
                        noise=noise,
                        adjacency=adjacency,
                        n_releases=n_releases,
                        alpha=alpha,
                        random_state=np.random.default_rng(rs),
                    )
                )
                if n_runs:
                    results.append(runs(eps, random_state=np.random.default_rng(rs + [1])))
            if adjacency != "add_remove":  # the noisy row count exists under add/remove only
                continue
            for i, eps in enumerate(epsilons):
                rs = [seed, i, len(results)]
                results.append(
                    audit_count(
                        eps,
                        delta,
                        noise=noise,
                        n_releases=n_releases,
                        alpha=alpha,
                        random_state=np.random.default_rng(rs),
                    )
                )
                if n_runs:  # runs stopped half-way and resumed from a checkpoint
                    rng = np.random.default_rng([seed, i, len(results), 2])
                    results.append(
                        runs(eps, resume_after=max(1, iterations // 2), random_state=rng)
                    )
    for i, eps in enumerate(epsilons):  # one user of 4 rows added or removed, k = 1 and 3 votes
        for k in (1, 3):
            results.append(
                audit_user_votes(
                    eps,
                    delta,
                    n_neighbors=k,
                    n_releases=n_releases,
                    alpha=alpha,
                    random_state=np.random.default_rng([seed, i, len(results)]),
                )
            )
    for i, eps in enumerate(epsilons):  # a baseline (pure ε-DP, Laplace): in a box that excludes 0
        results.append(
            audit_dplloyd(
                eps,
                delta,
                n_releases=max(4, n_releases // 20),
                alpha=alpha,
                random_state=np.random.default_rng([seed, i, len(results)]),
            )
        )
    return results


def format_table(results: Sequence[AuditResult]) -> str:
    """A Markdown table: setting, noise, adjacency, claimed ε, lower bound, ratio, samples, test."""
    rows = [
        "| setting | noise | adjacency | σ | claimed ε | ε lower bound (95%) | lower/claimed | "
        "samples per data set | best test |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        rows.append(
            f"| {r.setting} | {r.noise} | {r.adjacency} | {r.sigma:.4g} "
            f"| {r.claimed_epsilon:.4g} | "
            ""
            ""
            ""
            ""
            ""
            ""
            f"{r.epsilon_lower:.4g} | {r.epsilon_lower / r.claimed_epsilon:.3f} | {r.n_samples} | "
            f"{_test_text(r)} (FPR {r.fpr:.2g}, FNR {r.fnr:.2g}) |"
        )
    return "\n".join(rows)


def _test_text(r: AuditResult) -> str:
    name = r.statistic.replace(" (reversed)", "")
    return f"{name} {'≤' if name != r.statistic else '≥'} {r.threshold:.4g} ⇒ D′"


# ---------------------------------------------------------------- user-level and k-neighbour votes


def audit_user_votes(
    epsilon: float,
    delta: float = 1e-5,
    *,
    n_neighbors: int = 1,
    rows_per_user: int = 4,
    adjacency: str = "add_remove",
    n_releases: int = 100_000,
    alpha: float = 0.05,
    random_state=None,
    histogram: Callable | None = None,
) -> AuditResult:
    """Audit one release of user-level (``groups``) k-neighbour votes: the canary is a *user*.

    D is :func:`canary_scenario`'s data with user ids: its first
    ``rows_per_user`` rows are one user, every other row its own user. D′ adds
    a canary user of ``rows_per_user`` rows at and around the canary (or, under
    ``"replace"``, gives those rows to D's first user instead of its own).
    ``histogram(private, candidates, groups) → votes`` (default
    :func:`privevo.private.nn_histogram` with ``n_neighbors`` and ``groups``);
    tests pass a row-level one. Gaussian noise with σ calibrated for sensitivity
    1 (√2 under replace); the statistic is the likelihood-ratio test
    (y − votes(D))·v, v = votes(D′) − votes(D) from the float64 reference
    :func:`privevo.private.reference_votes`.
    """
    from .private import nn_histogram, reference_votes, release_noise

    epsilon, delta, n_releases, rng = _single_release_arguments(
        epsilon, delta, n_releases, random_state
    )
    rows_per_user = check_positive_int(rows_per_user, "rows_per_user")
    sensitivity = check_adjacency(adjacency)
    base = canary_scenario("add_remove")
    D, cands = base.D, base.candidates
    offsets = 0.02 * np.arange(rows_per_user)[:, None] * np.array([[-1.0, 0.5]])
    user_rows = base.canary[None, :] + offsets
    groups = np.r_[
        np.zeros(rows_per_user, dtype=np.int64), np.arange(1, len(D) - rows_per_user + 1)
    ]
    if adjacency == "add_remove":
        D_prime = np.vstack([D, user_rows])
        groups_prime = np.r_[groups, np.full(rows_per_user, groups.max() + 1)]
    else:
        D_prime = D.copy()
        D_prime[:rows_per_user] = user_rows
        groups_prime = groups
    if histogram is None:

        def histogram(x, c, g):
            return nn_histogram(x, c, n_neighbors=n_neighbors, groups=g)

    sigma = accounting.calibrate(epsilon, delta, 1, sensitivity, "gaussian")
    exact0 = reference_votes(D, cands, n_neighbors, groups)
    v = reference_votes(D_prime, cands, n_neighbors, groups_prime) - exact0
    scores = []
    for data, g in ((D, groups), (D_prime, groups_prime)):
        votes = np.asarray(histogram(data, cands, g), dtype=np.float64)
        noisy = release_noise(np.repeat(votes[None, :], n_releases, axis=0), sigma, rng)
        scores.append((noisy - exact0) @ v)
    test = threshold_audit(scores[0], scores[1], delta, alpha, ["likelihood ratio"])
    return AuditResult(
        setting=f"user-level votes (k = {n_neighbors}, {rows_per_user} rows per user)",
        noise="gaussian",
        adjacency=adjacency,
        claimed_epsilon=_claimed_epsilon(sigma, delta, 1, sensitivity, "gaussian"),
        delta=delta,
        sigma=sigma,
        steps=1,
        n_samples=n_releases,
        alpha=alpha,
        **test,
    )


# ---------------------------------------------------------------- label-restricted votes


def audit_label_votes(
    epsilon: float,
    delta: float = 1e-5,
    *,
    noise: str = "gaussian",
    adjacency: str = "add_remove",
    n_releases: int = 100_000,
    alpha: float = 0.05,
    random_state=None,
    histogram: Callable | None = None,
) -> AuditResult:
    """Audit one release of label-restricted votes (text PE's ``fit(texts, labels=y)``).

    :func:`canary_scenario`'s data get public labels: the first cluster ``"a"``,
    the second ``"b"``; its candidates alternate ``"a"``, ``"b"``. The canary
    (label ``"b"``) stands on candidate 0 (label ``"a"``), so the restriction
    moves its vote to its nearest ``"b"`` candidate; under ``"replace"`` it
    replaces D's first row (label ``"a"``). ``histogram(points, labels,
    candidates, candidate_labels) → counts`` defaults to the mechanism text PE
    runs: :func:`privevo.private.nn_histogram` on the vectors with their label
    blocks (:func:`privevo.text.labels.with_labels`); tests pass a broken one.
    v = counts(D′) − counts(D) comes from the float64 reference run per label
    (each point's nearest candidate among its own label's), an independent
    computation. σ is calibrated for the unlabelled sensitivity (1, √2 under
    replace): the claim is that the restriction changes nothing.
    """
    from .private import nn_histogram, reference_assign, release_noise
    from .text.labels import with_labels

    epsilon, delta, n_releases, rng = _single_release_arguments(
        epsilon, delta, n_releases, random_state
    )
    sensitivity = check_adjacency(adjacency)
    sc = canary_scenario(adjacency)
    cands = sc.candidates
    names = ["a", "b"]
    cand_labels = [names[j % 2] for j in range(len(cands))]
    n_first = len(sc.D) - len(sc.D) // 4  # canary_scenario's first cluster
    labels = ["a"] * n_first + ["b"] * (len(sc.D) - n_first)
    if adjacency == "add_remove":
        labels_prime = [*labels, "b"]
    else:
        labels_prime = ["b", *labels[1:]]
    if histogram is None:

        def histogram(x, lab, c, c_lab):
            return nn_histogram(with_labels(x, lab, names), with_labels(c, c_lab, names))

    def reference(x, lab):
        counts = np.zeros(len(cands))
        for name in names:
            rows = [i for i, v in enumerate(lab) if v == name]
            own = np.flatnonzero(np.asarray(cand_labels) == name)
            if rows:
                np.add.at(counts, own[reference_assign(x[rows], cands[own])], 1.0)
        return counts

    sigma = accounting.calibrate(epsilon, delta, 1, sensitivity, noise)
    exact0 = reference(sc.D, labels)
    v = reference(sc.D_prime, labels_prime) - exact0
    scores = []
    for data, lab in ((sc.D, labels), (sc.D_prime, labels_prime)):
        counts = np.asarray(histogram(data, lab, cands, cand_labels), dtype=np.float64)
        noisy = release_noise(np.repeat(counts[None, :], n_releases, axis=0), sigma, rng, noise)
        scores.append((noisy - exact0) @ v)
    test = threshold_audit(scores[0], scores[1], delta, alpha, ["likelihood ratio"])
    return AuditResult(
        setting="label-restricted votes (2 labels)",
        noise=noise,
        adjacency=adjacency,
        claimed_epsilon=_claimed_epsilon(sigma, delta, 1, sensitivity, noise),
        delta=delta,
        sigma=sigma,
        steps=1,
        n_samples=n_releases,
        alpha=alpha,
        **test,
    )


# ---------------------------------------------------------------- tabular PE


def _tabular_scenario(adjacency: str):
    """A small public table D (3 columns, 40 rows), its metadata, the canary row, and D′."""
    import pandas as pd

    from .tabular import ColumnSpec, TableMetadata

    meta = TableMetadata(
        (
            ColumnSpec("kind", "categorical", categories=("a", "b", "c")),
            ColumnSpec("size", "numeric", lower=0.0, upper=10.0, integer=True, nullable=True),
            ColumnSpec("flag", "boolean"),
        )
    )
    rng = np.random.default_rng(2026)
    D = pd.DataFrame(
        {
            "kind": rng.choice(["a", "b"], 40),
            "size": rng.integers(0, 5, 40).astype(float),
            "flag": rng.random(40) < 0.3,
        }
    )
    canary = pd.DataFrame({"kind": ["c"], "size": [np.nan], "flag": [True]})  # a rare row
    if adjacency == "add_remove":
        return meta, D, pd.concat([D, canary], ignore_index=True)
    return meta, D, pd.concat([canary, D.iloc[1:]], ignore_index=True)


def _tabular_model(epsilon: float, delta: float, adjacency: str, metadata, rng):
    """The audited TabularPE configuration: 2 rounds, 4 rows selected, 2 children each (no output
    pool: it is post-processing and does not change the releases)."""
    from .tabular import TabularPE

    return TabularPE(
        epsilon,
        delta,
        metadata,
        iterations=2,
        n_synthetic=4,
        variations=2,
        pool=0,
        adjacency=adjacency,
        random_state=rng,
    )


def _tabular_llrs(model, D, D_prime) -> np.ndarray:
    """LLR of every release of one fit: each PE round, then the C column marginals together."""
    from .private import reference_assign
    from .tabular import encode_table
    from .tabular.marginals import cell_candidates

    emb = model.embedding_
    X0, X1 = (
        emb.embed(encode_table(D, emb.metadata)),
        emb.embed(encode_table(D_prime, emb.metadata)),
    )
    pe = getattr(model, "pe_embedding_", emb)  # the rounds' space (target-weighted if set)
    P0, P1 = pe.embed(encode_table(D, emb.metadata)), pe.embed(encode_table(D_prime, emb.metadata))

    def llr(y, candidates, sigma, block=slice(None), X0=X0, X1=X1):
        def counts(X):
            return np.bincount(reference_assign(X[:, block], candidates), minlength=len(candidates))

        h0, v = counts(X0), counts(X1) - counts(X0)
        return ((y - h0) @ v - 0.5 * (v @ v)) / sigma**2

    history = model.engine_.history_
    out = [llr(r.noisy_counts, r.candidates, r.sigma, X0=P0, X1=P1) for r in history]
    sigma_m = next(
        r["sigma"] for r in model.privacy_report_["releases"] if r["name"] == "column_marginals"
    )
    out.append(
        sum(
            llr(y, cell_candidates(spec, model.bins) * 1.0, sigma_m, cols)
            for y, spec, cols in zip(model.marginal_counts_, emb.metadata.columns, emb.slices)
        )
    )
    return np.asarray(out)


def audit_tabular(
    epsilon: float,
    delta: float = 1e-5,
    *,
    adjacency: str = "add_remove",
    n_runs: int = 500,
    alpha: float = 0.05,
    random_state=None,
    make_model: Callable | None = None,
) -> AuditResult:
    """Audit whole :class:`~privevo.TabularPE` fits: every PE round and the 1-way marginals.

    D is a fixed 40-row, 3-column public table; D′ adds a canary row (or
    replaces D's first row by it). The auditor knows D, D′ and each round's
    public candidates, so it computes every release's log-likelihood ratio
    (as in :func:`audit_runs`); statistics: their sum (the optimal test for
    the claimed mechanism) and each release alone. ``make_model(epsilon,
    delta, adjacency, metadata, rng)`` builds an unfitted model (default: 2
    rounds, 4 rows selected); tests pass broken ones.
    """
    epsilon, delta = check_epsilon(epsilon), check_delta(delta)
    n_runs = check_positive_int(n_runs, "n_runs", minimum=4)
    check_adjacency(adjacency)
    metadata, D, D_prime = _tabular_scenario(adjacency)
    seeds = np.random.SeedSequence(check_random_state(random_state).integers(2**63)).spawn(
        2 * n_runs
    )
    make_model = make_model or _tabular_model
    llrs, model = [], None
    for i, data in enumerate([D] * n_runs + [D_prime] * n_runs):
        model = make_model(
            epsilon, delta, adjacency, metadata, np.random.default_rng(seeds[i])
        ).fit(data)
        llrs.append(_tabular_llrs(model, D, D_prime))
    llrs = np.asarray(llrs)
    rounds = llrs.shape[1] - 1
    names = (
        ["sum of LLRs"]
        + [f"LLR of round {t + 1}" for t in range(rounds)]
        + ["LLR of the marginals"]
    )
    test = threshold_audit(
        np.column_stack([llrs.sum(1), llrs])[:n_runs],
        np.column_stack([llrs.sum(1), llrs])[n_runs:],
        delta,
        alpha,
        names,
    )
    return AuditResult(
        setting=f"TabularPE fit ({rounds} rounds + 1-way marginals)",
        noise="gaussian",
        adjacency=adjacency,
        claimed_epsilon=float(model.privacy_report_["epsilon"]),
        delta=delta,
        sigma=float(model.engine_.sigma_),
        steps=rounds + 1,
        n_samples=n_runs,
        alpha=alpha,
        **test,
    )
