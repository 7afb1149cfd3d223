"""Exact discrete Gaussian noise: certified bounds, both samplers against the exact PMF,
random sources and the integer-valued histogram release."""

from __future__ import annotations

import math
import secrets
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from privevo.private import nn_histogram, noise, noisy_nn_histogram
from privevo.private.noise import (
    DiscreteGaussianSampler,
    _resolve_exp_bernoulli,
    _Source,
    discrete_gaussian,
    discrete_gaussian_pmf,
    exp_neg_bounds,
)

GAMMAS = [
    Fraction(1, 3),
    Fraction(1),
    Fraction(7, 2),
    Fraction(123456789, 1000),
    Fraction(25, 7) ** 2,
    Fraction(2**70 + 1, 2**69),
]


@pytest.mark.parametrize("gamma", GAMMAS)
@pytest.mark.parametrize("bits", [63, 126, 400])
def test_exp_neg_bounds_bracket_the_true_value(gamma, bits):
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.prec = bits + 200
    L, H = exp_neg_bounds(gamma, bits)
    true = mpmath.exp(-mpmath.mpf(gamma.numerator) / gamma.denominator) * mpmath.mpf(2) ** bits
    assert L <= true <= H
    assert H - L <= 2


def test_exp_neg_bounds_exact_at_zero():
    assert exp_neg_bounds(Fraction(0), 63) == (2**63, 2**63)


def test_lazy_refinement_matches_the_conditional_probability():
    """For k in the ambiguous band, P[accept] = clip(2^63·e^{−γ} − k, 0, 1) (the extra bits of
    U)."""
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.prec = 300
    gamma = Fraction(1, 3)
    L, H = exp_neg_bounds(gamma, 63)
    assert _resolve_exp_bernoulli(gamma, L - 1, _Source(np.random.default_rng(0)))  # k < L: always
    assert not _resolve_exp_bernoulli(gamma, H, _Source(np.random.default_rng(0)))  # k ≥ H: never
    source = _Source(np.random.default_rng(1))
    for k in range(L, H):
        p = float(min(max(mpmath.exp(-mpmath.mpf(1) / 3) * mpmath.mpf(2) ** 63 - k, 0), 1))
        hits = sum(_resolve_exp_bernoulli(gamma, k, source) for _ in range(2000))
        assert abs(hits - 2000 * p) <= 5 * math.sqrt(2000 * p * (1 - p)) + 1


def _chi2_pvalue(samples: np.ndarray, sigma: float) -> float:
    """Goodness of fit to N_Z(0, σ²), tails pooled so every cell expects ≥ 5."""
    lim = int(np.ceil(4 * sigma)) + 1
    cells = np.arange(-lim, lim + 1)
    p = discrete_gaussian_pmf(cells, sigma)
    p[0] += discrete_gaussian_pmf(np.arange(-60 * lim, -lim), sigma).sum()
    p[-1] += discrete_gaussian_pmf(np.arange(lim + 1, 60 * lim), sigma).sum()
    obs = np.bincount(np.clip(samples, -lim, lim) + lim, minlength=len(cells))
    keep = p * len(samples) >= 5
    exp = p[keep] * len(samples)
    return float(stats.chisquare(obs[keep], exp * obs[keep].sum() / exp.sum()).pvalue)


@pytest.mark.parametrize("sigma", [0.6, 2.5, 40.0])
def test_batched_sampler_fits_the_pmf(sigma):
    x = discrete_gaussian(sigma, 200_000, np.random.default_rng(7))
    assert x.dtype == np.int64
    assert _chi2_pvalue(x, sigma) > 1e-4
    var = (
        discrete_gaussian_pmf(np.arange(-50 * int(sigma + 1), 50 * int(sigma + 1) + 1), sigma)
        * np.arange(-50 * int(sigma + 1), 50 * int(sigma + 1) + 1) ** 2
    ).sum()
    assert x.var() == pytest.approx(var, rel=0.02)


def test_scalar_cks_sampler_fits_the_pmf():
    rng = np.random.default_rng(3)
    x = np.array([noise.discrete_gaussian_scalar(1.5, rng) for _ in range(3000)])
    assert _chi2_pvalue(x, 1.5) > 1e-4


def test_scalar_bernoulli_exp_and_laplace():
    rng = np.random.default_rng(4)
    hits = sum(noise.bernoulli_exp_scalar(Fraction(17, 10), rng) for _ in range(4000))
    p = math.exp(-1.7)
    assert abs(hits - 4000 * p) <= 5 * math.sqrt(4000 * p * (1 - p))
    lap = np.array([noise.discrete_laplace_scalar(2, rng) for _ in range(4000)])
    # P[|Y| = 0] = (1 − e^{−1/2}) / (1 + e^{−1/2})
    p0 = (1 - math.exp(-0.5)) / (1 + math.exp(-0.5))
    assert abs((lap == 0).sum() - 4000 * p0) <= 5 * math.sqrt(4000 * p0 * (1 - p0))


def test_seeded_draws_are_reproducible_and_shaped():
    a = discrete_gaussian(3.0, (4, 5), np.random.default_rng(9))
    b = discrete_gaussian(3.0, (4, 5), np.random.default_rng(9))
    assert a.shape == (4, 5)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, discrete_gaussian(3.0, (4, 5), np.random.default_rng(10)))


def test_exact_rational_sigma_squared_is_accepted():
    s = DiscreteGaussianSampler(Fraction(9, 4))  # σ = 9/4 given exactly
    assert s.sigma2 == Fraction(81, 16) and s.t == 3
    assert _chi2_pvalue(s.sample(50_000, np.random.default_rng(2)), 2.25) > 1e-4


def test_secure_source():
    x = discrete_gaussian(5.0, 50_000, secrets.SystemRandom())
    assert x.dtype == np.int64 and x.shape == (50_000,)
    assert abs(x.mean()) < 0.2 and x.var() == pytest.approx(25.0, rel=0.05)
    assert isinstance(noise.discrete_gaussian_scalar(2.0, secrets.SystemRandom()), int)
    src = _Source(secrets.SystemRandom())
    u = src.integers(7, 20_000)
    assert u.min() == 0 and u.max() == 6 and abs(np.bincount(u).min() - 20_000 / 7) < 300


@pytest.mark.parametrize("bad", [None, 3, np.random.RandomState(0)])
def test_bad_rng_is_rejected(bad):
    with pytest.raises(ValueError, match="rng must be"):
        discrete_gaussian(1.0, 3, bad)


@pytest.mark.parametrize("sigma", [0.0, -1.0, float("nan")])
def test_bad_sigma_is_rejected(sigma):
    with pytest.raises(ValueError, match="sigma"):
        discrete_gaussian(sigma, 3, np.random.default_rng(0))


@pytest.mark.parametrize("name", ["discrete_gaussian", "discrete_gaussian_secure"])
def test_histogram_release_is_integer_valued(name):
    rng = np.random.default_rng(0)
    X, C = rng.normal(size=(300, 3)), rng.normal(size=(7, 3))
    noisy = noisy_nn_histogram(X, C, 4.0, np.random.default_rng(1), noise=name).value
    assert noisy.dtype == np.float64 and np.array_equal(noisy, np.round(noisy))
    exact = nn_histogram(X, C)
    if name == "discrete_gaussian":
        np.testing.assert_array_equal(
            noisy - exact, discrete_gaussian(4.0, 7, np.random.default_rng(1))
        )
