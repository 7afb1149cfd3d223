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
