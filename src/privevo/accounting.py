"""Exact privacy accounting for repeated Gaussian releases (Gaussian DP).

A Gaussian mechanism with L2 sensitivity Δ and noise σ is μ-GDP with
μ = Δ/σ; T of them compose exactly to μ = √T·Δ/σ, and heterogeneous ones to
μ = √(Σ μ_i²) (Dong, Roth & Su 2019). μ-GDP is (ε, δ(ε))-DP for every ε ≥ 0
with the analytic-Gaussian curve of Balle & Wang (2018)::

    δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2)

Both directions are solved by root finding on that curve. Every figure is
cross-checked in the tests against Google's ``dp-accounting`` PLD accountant,
and :func:`dp_event` describes a run as a ``dp_accounting`` event.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy import optimize, special

from ._validation import check_delta, check_epsilon, check_positive_int, check_positive_real

__all__ = [
    "delta_of_mu",
    "mu_of_epsilon",
    "epsilon_of_mu",
    "gaussian_sigma",
    "epsilon_of",
    "compose_mu",
    "classical_sigma",
    "dp_event",
    "zcdp_rho",
    "epsilon_of_rho",
    "discrete_gaussian_sigma",
    "discrete_gaussian_epsilon",
    "discrete_gaussian_dp_event",
    "is_discrete_gaussian",
]

_MU_MAX = 1e4


def delta_of_mu(epsilon: float, mu: float) -> float:
    """δ(ε) of μ-GDP: Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2), computed in log space."""
    if mu <= 0:
        return 0.0
    a = -epsilon / mu + mu / 2
    b = -epsilon / mu - mu / 2
    return max(0.0, float(special.ndtr(a) - np.exp(epsilon + special.log_ndtr(b))))


def mu_of_epsilon(epsilon: float, delta: float) -> float:
    """The largest μ whose μ-GDP guarantee implies (ε, δ)-DP."""
    epsilon, delta = check_epsilon(epsilon), check_delta(delta)
    f = lambda log_mu: math.log(delta_of_mu(epsilon, math.exp(log_mu)) + 1e-300) - math.log(delta)
    lo, hi = math.log(1e-8), math.log(_MU_MAX)
    if f(hi) < 0:
        return _MU_MAX
    return math.exp(optimize.brentq(f, lo, hi, xtol=1e-14, rtol=1e-13, maxiter=500))


def epsilon_of_mu(mu: float, delta: float) -> float:
    """The smallest ε ≥ 0 with δ(ε) ≤ δ for μ-GDP."""
    delta = check_delta(delta)
    mu = check_positive_real(mu, "mu")
    if delta_of_mu(0.0, mu) <= delta:
        return 0.0
    hi = max(1.0, mu * mu / 2 + mu * 10)
    while delta_of_mu(hi, mu) > delta:
        hi *= 2
    return float(optimize.brentq(lambda e: delta_of_mu(e, mu) - delta, 0.0, hi, xtol=1e-12, rtol=1e-13, maxiter=500))


def gaussian_sigma(epsilon: float, delta: float, steps: int, sensitivity: float = 1.0) -> float:
    """Noise σ so that ``steps`` Gaussian releases of L2 sensitivity Δ are (ε, δ)-DP.

    σ = √T·Δ / μ(ε, δ), exact under GDP composition.
    """
    steps = check_positive_int(steps, "steps")
    sensitivity = check_positive_real(sensitivity, "sensitivity")
    return math.sqrt(steps) * sensitivity / mu_of_epsilon(epsilon, delta)


def epsilon_of(sigma: float, delta: float, steps: int, sensitivity: float = 1.0) -> float:
    """ε spent by ``steps`` Gaussian releases with noise σ and sensitivity Δ at δ."""
    sigma = check_positive_real(sigma, "sigma")
    steps = check_positive_int(steps, "steps")
    sensitivity = check_positive_real(sensitivity, "sensitivity")
    return epsilon_of_mu(math.sqrt(steps) * sensitivity / sigma, delta)


def compose_mu(*mus: float) -> float:
    """μ of the composition of μ_i-GDP mechanisms: √(Σ μ_i²)."""
    return math.sqrt(sum(m * m for m in mus))


def classical_sigma(epsilon: float, delta: float, steps: int, sensitivity: float = 1.0) -> float:
    """The classical bound σ = 2·Δ·√(T·log(1.25/δ))/ε used by the GAPE paper.

    Looser than :func:`gaussian_sigma` (more noise for the same ε); offered for
    comparison only.
    """
    epsilon, delta = check_epsilon(epsilon), check_delta(delta)
    steps = check_positive_int(steps, "steps")
    return 2.0 * sensitivity * math.sqrt(steps * math.log(1.25 / delta)) / epsilon


def dp_event(sigma: float, steps: int, sensitivity: float = 1.0):
    """The run as a ``dp_accounting`` event: T self-composed Gaussian releases.

    ``SelfComposedDpEvent(GaussianDpEvent(σ/Δ), T)``; feed it to any
    ``dp_accounting`` accountant to check a privevo figure independently.
    """
    import dp_accounting

    return dp_accounting.SelfComposedDpEvent(
        dp_accounting.GaussianDpEvent(noise_multiplier=sigma / sensitivity), int(steps)
    )


# --------------------------------------------------------------------------
# discrete Gaussian noise: zero-concentrated DP (Canonne, Kamath & Steinke 2020)
#
# One coordinate: adding N_Z(0, σ²) to an integer query of sensitivity Δ is
# Δ²/(2σ²)-zCDP (CKS20, Thm. 4). A histogram adds independent noise to every
# count and Rényi divergences of product distributions add up, so a change of
# the count vector by an integer vector v costs Σ_j v_j²/(2σ²) = ‖v‖²/(2σ²):
# ρ = Δ²/(2σ²) with Δ² = 1 (add/remove) or 2 (replace). T releases compose to
# ρ = T·Δ²/(2σ²) (zCDP composition). (ε, δ) follows from the conversion of
# CKS20 Cor. 13: δ = inf_{α>1} exp((α−1)(αρ−ε))/(α−1)·(1−1/α)^α, i.e.
# ε(δ) = min_{α>1} αρ + log(1−1/α) − (log δ + log α)/(α−1).
# This is what dp_accounting's RDP accountant computes for a ZCDpEvent (on a
# grid of orders α); its PLD accountant for the discrete Gaussian itself
# (``from_discrete_gaussian_mechanism``) gives a tighter ε, which the tests
# use to check that this bound is never below the truth.


def is_discrete_gaussian(noise: str) -> bool:
    """Whether a ``noise`` name of :func:`privevo.histogram.noisy_nn_histogram` is a discrete Gaussian."""
    return noise.startswith("discrete_gaussian")


def zcdp_rho(sigma: float, steps: int = 1, sensitivity: float = 1.0) -> float:
    """ρ of ``steps`` discrete Gaussian releases: T·Δ²/(2σ²) (CKS20 Thm. 4 + zCDP composition)."""
    sigma = check_positive_real(sigma, "sigma")
    steps = check_positive_int(steps, "steps")
    return steps * sensitivity**2 / (2.0 * sigma**2)


def epsilon_of_rho(rho: float, delta: float) -> float:
    """The smallest ε with ρ-zCDP ⇒ (ε, δ)-DP by CKS20 Cor. 13 (optimised over α > 1)."""
    delta = check_delta(delta)
    rho = check_positive_real(rho, "rho")
    log_delta = math.log(delta)

    def eps(log_am1: float) -> float:
        a = 1.0 + math.exp(log_am1)
        return a * rho + math.log1p(-1.0 / a) - (log_delta + math.log(a)) / (a - 1.0)

    # ε(α) is unimodal in log(α − 1); bracket its minimum on a grid, then refine.
    grid = np.linspace(-12.0, 20.0, 641)
    a = 1.0 + np.exp(grid)
    values = a * rho + np.log1p(-1.0 / a) - (log_delta + np.log(a)) / (a - 1.0)
    i = int(np.argmin(values))
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]
    best = optimize.minimize_scalar(eps, bounds=(lo, hi), method="bounded", options={"xatol": 1e-10})
    return max(0.0, float(min(best.fun, values[i])))


def discrete_gaussian_epsilon(sigma: float, delta: float, steps: int, sensitivity: float = 1.0) -> float:
    """ε spent by ``steps`` discrete Gaussian releases with parameter σ and L2 sensitivity Δ."""
    return epsilon_of_rho(zcdp_rho(sigma, steps, sensitivity), delta)


@functools.lru_cache(maxsize=256)
def discrete_gaussian_sigma(epsilon: float, delta: float, steps: int, sensitivity: float = 1.0) -> float:
    """σ so that ``steps`` discrete Gaussian releases are (ε, δ)-DP under the zCDP bound.

    σ = Δ·√(T/(2ρ*)) with ρ* the largest ρ whose CKS20 conversion gives ≤ ε at δ
    (root finding, rounded so that the σ returned is never below the exact root).
    """
    epsilon, delta = check_epsilon(epsilon), check_delta(delta)
    steps = check_positive_int(steps, "steps")
    sensitivity = check_positive_real(sensitivity, "sensitivity")
    f = lambda log_rho: epsilon_of_rho(math.exp(log_rho), delta) - epsilon
    lo, hi = math.log(1e-12), math.log(1e6)
    if f(hi) < 0:
        raise ValueError(f"epsilon={epsilon} is too large for the discrete Gaussian accountant; lower epsilon")
    log_rho = optimize.brentq(f, lo, hi, xtol=1e-13, rtol=1e-13, maxiter=500)
    sigma = sensitivity * math.sqrt(steps / (2.0 * math.exp(log_rho)))
    while discrete_gaussian_epsilon(sigma, delta, steps, sensitivity) > epsilon:  # never undershoot
        sigma = math.nextafter(sigma, math.inf) * (1 + 1e-12)
    return sigma


def discrete_gaussian_dp_event(sigma: float, steps: int, sensitivity: float = 1.0):
    """The run as a ``dp_accounting`` event: T self-composed ZCDpEvent(ρ = Δ²/(2σ²)).

    dp_accounting (0.6) has no discrete Gaussian event; its RDP accountant
    accepts this zCDP event and reproduces :func:`discrete_gaussian_epsilon`.
    """
    import dp_accounting

    return dp_accounting.SelfComposedDpEvent(dp_accounting.ZCDpEvent(rho=zcdp_rho(sigma, 1, sensitivity)), int(steps))
