"""Exact discrete Gaussian noise: certified bounds, both samplers against the exact PMF,
random sources, the histogram release, and the zCDP accounting against dp_accounting."""

from __future__ import annotations

import math
import secrets
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from privevo import PrivateEvolution, accounting
from privevo.private import nn_histogram, noise, noisy_nn_histogram
from privevo.private.noise import (
    DiscreteGaussianSampler,
    _resolve_exp_bernoulli,
    _Source,
    discrete_gaussian,
    discrete_gaussian_pmf,
    exp_neg_bounds,
)
from privevo.selection import Rank
from privevo.variation import GaussianVariation, UniformBall

GAMMAS = [
    Fraction(1, 3),
    Fraction(1),
    Fraction(7, 2),
    Fraction(123456789, 1000),
    Fraction(25, 7) ** 2,
    Fraction(2**70 + 1, 2**69),
]


# ---------------------------------------------------------------- certified bounds


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


# ---------------------------------------------------------------- samplers vs the exact PMF


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


# ---------------------------------------------------------------- the release


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


# ---------------------------------------------------------------- accounting


@pytest.mark.parametrize("epsilon", [0.5, 1.0, 4.0])
@pytest.mark.parametrize("steps", [1, 10])
@pytest.mark.parametrize("adjacency", ["add_remove", "replace"])
def test_zcdp_accounting_against_dp_accounting(epsilon, steps, adjacency):
    """Ours = dp_accounting's RDP accountant on the ZCDpEvent (minus its order grid), and ≥ the
    tight PLD of the discrete Gaussian itself (so the bound is sound)."""
    import dp_accounting
    from dp_accounting.pld import privacy_loss_distribution as pld

    delta, sens = 1e-5, (1.0 if adjacency == "add_remove" else math.sqrt(2))
    sigma = accounting.discrete_gaussian_sigma(epsilon, delta, steps, sens)
    ours = accounting.discrete_gaussian_epsilon(sigma, delta, steps, sens)
    assert epsilon - 1e-6 <= ours <= epsilon
    rdp = dp_accounting.rdp.RdpAccountant()
    rdp.compose(accounting.discrete_gaussian_dp_event(sigma, steps, sens))
    assert ours <= rdp.get_epsilon(delta) + 1e-9
    assert rdp.get_epsilon(delta) <= ours * 1.001
    # replace: the count vector moves by (+1, −1): two unit-sensitivity coordinates
    tight = pld.from_discrete_gaussian_mechanism(sigma, sensitivity=1).self_compose(
        steps * (1 if sens == 1 else 2)
    )
    assert tight.get_epsilon_for_delta(delta) <= ours
    # the discrete Gaussian needs a little more σ than the continuous one under this bound
    assert 1.0 < sigma / accounting.gaussian_sigma(epsilon, delta, steps, sens) < 1.12


def test_zcdp_conversion_closed_form():
    rho, delta = 0.05, 1e-6
    alphas = np.linspace(1.01, 200, 200_000)
    brute = (
        alphas * rho + np.log1p(-1 / alphas) - (np.log(delta) + np.log(alphas)) / (alphas - 1)
    ).min()
    assert accounting.epsilon_of_rho(rho, delta) == pytest.approx(brute, rel=1e-6)
    assert accounting.zcdp_rho(4.0, 8, math.sqrt(2)) == pytest.approx(8 * 2 / 32)


@pytest.mark.parametrize("adjacency", ["add_remove", "replace"])
def test_private_evolution_discrete_gaussian_report(adjacency):
    X = np.random.default_rng(0).normal(size=(200, 2))
    pe = PrivateEvolution(
        UniformBall(3.0),
        GaussianVariation(0.2, 2, radius=3.0),
        Rank(),
        n_synthetic=5,
        iterations=4,
        epsilon=1.0,
        delta=1e-5,
        adjacency=adjacency,
        noise="discrete_gaussian",
        random_state=0,
    ).fit(X)
    rep = pe.privacy_report_
    sens2 = 1.0 if adjacency == "add_remove" else 2.0
    assert rep["accountant"] == "zcdp" and rep["mu"] is None and rep["noise"] == "discrete_gaussian"
    assert rep["rho"] == pytest.approx(4 * sens2 / (2 * pe.sigma_**2), rel=1e-12)
    assert rep["epsilon"] == pytest.approx(1.0, abs=1e-6) and rep["epsilon"] <= 1.0
    assert pe.sigma_ == pytest.approx(
        accounting.discrete_gaussian_sigma(1.0, 1e-5, 4, math.sqrt(sens2))
    )
    assert rep["dp_event"]["event"]["type"] == "ZCDpEvent" and rep["dp_event"]["count"] == 4
    assert rep["releases"][0]["noise"] == "discrete_gaussian"
    for record in pe.history_:
        assert np.array_equal(record.noisy_counts, np.round(record.noisy_counts))


def test_gaussian_report_unchanged_and_unknown_noise_rejected():
    X = np.random.default_rng(0).normal(size=(50, 2))
    args = (UniformBall(3.0), GaussianVariation(0.2, 2, radius=3.0), Rank())
    pe = PrivateEvolution(
        *args, n_synthetic=3, iterations=2, epsilon=1.0, delta=1e-5, random_state=0
    ).fit(X)
    assert pe.privacy_report_["accountant"] == "gdp" and pe.privacy_report_["rho"] is None
    assert "noise" not in pe.privacy_report_["releases"][0]
    with pytest.raises(
        ValueError, match="The 'noise' parameter of PrivateEvolution must be a str among"
    ):
        PrivateEvolution(
            *args, n_synthetic=3, iterations=2, epsilon=1.0, delta=1e-5, noise="laplace"
        ).fit(X)


def test_cli_account_discrete_gaussian(cli):
    import json

    tail = ["--delta", "1e-5", "--steps", "10", "--noise", "discrete_gaussian", "--json"]
    code, out, err = cli(["account", "--epsilon", "1", *tail])
    assert code == 0, err
    out = json.loads(out)
    assert out["sigma"] == pytest.approx(accounting.discrete_gaussian_sigma(1.0, 1e-5, 10))
    assert out["rho"] == pytest.approx(10 / (2 * out["sigma"] ** 2)) and "mu" not in out
    code, back, err = cli(["account", "--sigma", str(out["sigma"]), *tail])
    assert code == 0, err
    assert json.loads(back)["epsilon"] == pytest.approx(1.0, abs=1e-6)
