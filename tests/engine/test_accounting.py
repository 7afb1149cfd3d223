"""Gaussian (GDP/PLD) and discrete Gaussian (zCDP) accounting against dp_accounting and
closed forms; the δ default."""

from __future__ import annotations

import math

import dp_accounting
import numpy as np
import pytest

from privevo import accounting


def pld_epsilon(
    sigma: float, steps: int, delta: float, sensitivity: float = 1.0, scale: float = 1.0
) -> float:
    """Google's PLD accountant; its grid step grows with the ε being checked (relative accuracy)."""
    acc = dp_accounting.pld.PLDAccountant(value_discretization_interval=1e-4 * max(1.0, scale))
    acc.compose(accounting.dp_event(sigma, steps, sensitivity))
    return acc.get_epsilon(delta)


def test_headline_sigma_matches_pld_accountant():
    sigma = accounting.gaussian_sigma(1.0, 1e-5, 10)
    assert 0.99 <= pld_epsilon(sigma, 10, 1e-5) <= 1.01


GRID = [
    (eps, delta, steps)
    for eps in (0.1, 1.0, 10.0, 100.0)
    for delta in (1e-3, 1e-6, 1e-10)
    for steps in (1, 10, 100)
    if not (eps == 100.0 and delta == 1e-10 and steps == 100)  # covered in test_extreme_corner
]


@pytest.mark.parametrize("eps,delta,steps", GRID)
def test_sigma_grid_against_pld(eps, delta, steps):
    sigma = accounting.gaussian_sigma(eps, delta, steps)
    assert pld_epsilon(sigma, steps, delta, scale=eps) == pytest.approx(eps, rel=0.01)


def test_extreme_corner():
    sigma = accounting.gaussian_sigma(100.0, 1e-10, 100)
    assert pld_epsilon(sigma, 100, 1e-10, scale=100.0) == pytest.approx(100.0, rel=0.01)


@pytest.mark.parametrize("adjacency_sensitivity", [1.0, math.sqrt(2)])
def test_sensitivity_scales_sigma_and_matches_pld(adjacency_sensitivity):
    sigma = accounting.gaussian_sigma(2.0, 1e-6, 20, adjacency_sensitivity)
    assert sigma == pytest.approx(adjacency_sensitivity * accounting.gaussian_sigma(2.0, 1e-6, 20))
    assert pld_epsilon(sigma, 20, 1e-6, adjacency_sensitivity) == pytest.approx(2.0, rel=0.01)


@pytest.mark.parametrize("eps,delta,steps", [(0.3, 1e-4, 3), (1.0, 1e-5, 10), (8.0, 1e-9, 50)])
def test_epsilon_of_inverts_gaussian_sigma(eps, delta, steps):
    sigma = accounting.gaussian_sigma(eps, delta, steps)
    assert accounting.epsilon_of(sigma, delta, steps) == pytest.approx(eps, rel=1e-9)


def test_delta_curve_is_the_analytic_gaussian():
    # single Gaussian mechanism, sigma = 1: delta(eps) = Phi(-eps + 1/2) - e^eps Phi(-eps - 1/2)
    from scipy.stats import norm

    for eps in (0.0, 0.5, 2.0):
        expected = norm.cdf(-eps + 0.5) - math.exp(eps) * norm.cdf(-eps - 0.5)
        assert accounting.delta_of_mu(eps, 1.0) == pytest.approx(expected, rel=1e-12)


def test_composition_is_sqrt_of_sum_of_squares():
    assert accounting.compose_mu(0.3, 0.4) == pytest.approx(0.5)
    # T equal releases == one release with sqrt(T) times the mu
    assert accounting.epsilon_of(5.0, 1e-5, 4) == pytest.approx(accounting.epsilon_of(2.5, 1e-5, 1))


def test_classical_bound_is_looser():
    exact = accounting.gaussian_sigma(1.0, 1e-5, 10)
    classical = accounting.classical_sigma(1.0, 1e-5, 10)
    assert classical == pytest.approx(2 * math.sqrt(10 * math.log(1.25 / 1e-5)))
    assert classical > exact
    assert accounting.epsilon_of(classical, 1e-5, 10) < 1.0


def test_more_steps_more_noise():
    sigmas = [accounting.gaussian_sigma(1.0, 1e-5, t) for t in (1, 4, 16)]
    assert sigmas[1] == pytest.approx(2 * sigmas[0]) and sigmas[2] == pytest.approx(4 * sigmas[0])


@pytest.mark.parametrize(
    "kwargs,match",
    [
        (dict(epsilon=0.0, delta=1e-5, steps=1), "epsilon"),
        (dict(epsilon=-1.0, delta=1e-5, steps=1), "epsilon"),
        (dict(epsilon=float("nan"), delta=1e-5, steps=1), "epsilon"),
        (dict(epsilon=1.0, delta=0.0, steps=1), "delta"),
        (dict(epsilon=1.0, delta=1.0, steps=1), "delta"),
        (dict(epsilon=1.0, delta=1e-5, steps=0), "steps"),
        (dict(epsilon=1.0, delta=1e-5, steps=2.5), "steps"),
        (dict(epsilon=1.0, delta=1e-5, steps=1, sensitivity=0.0), "sensitivity"),
    ],
)
def test_bad_parameters(kwargs, match):
    with pytest.raises(ValueError, match=match):
        accounting.gaussian_sigma(**kwargs)


def test_epsilon_of_bad_sigma():
    with pytest.raises(ValueError, match="sigma"):
        accounting.epsilon_of(0.0, 1e-5, 3)
    with pytest.raises(ValueError, match="sigma"):
        accounting.epsilon_of(-2.0, 1e-5, 3)


mpmath = pytest.importorskip("mpmath")


def mp_delta(epsilon: float, mu: float):
    """δ(ε) of μ-GDP in 60-digit arithmetic (mpmath: no underflow, no cancellation)."""
    with mpmath.workdps(60):
        eps, mu = mpmath.mpf(epsilon), mpmath.mpf(mu)

        def phi(x):
            return mpmath.erfc(-x / mpmath.sqrt(2)) / 2

        return phi(-eps / mu + mu / 2) - mpmath.exp(eps) * phi(-eps / mu - mu / 2)


WIDE = [(e, d) for e in (1e-6, 1e-3, 0.1, 1.0, 10.0, 1e3, 1e6) for d in (0.5, 1e-5, 1e-100, 1e-300)]


@pytest.mark.parametrize("eps,delta", WIDE)
def test_sigma_is_right_and_safe_over_the_whole_range(eps, delta):
    for steps in (1, 10, 1000):
        sigma = accounting.gaussian_sigma(eps, delta, steps)
        mu = math.sqrt(steps) / sigma
        assert mp_delta(eps, mu) <= delta  # the (ε, δ) promised truly holds
        assert mp_delta(eps, mu * (1 + 1e-6)) > delta  # ... and σ is not needlessly large
        reported = accounting.epsilon_of(sigma, delta, steps)
        assert reported <= eps  # rounded to the safe side: never above the target
        assert reported >= eps * (1 - 1e-5)


@pytest.mark.parametrize("eps,delta", WIDE[::3])
def test_epsilon_of_mu_is_an_upper_bound_and_tight(eps, delta):
    mu = accounting.mu_of_epsilon(eps, delta) * 1.01
    reported = accounting.epsilon_of_mu(mu, delta)
    assert mp_delta(reported, mu) <= delta
    assert mp_delta(reported * (1 - 1e-5), mu) > delta


@pytest.mark.parametrize(
    "eps,mu", [(e, m) for e in (0.0, 1e-6, 1.0, 1e6) for m in (1e-7, 0.03, 1, 1e3)]
)
def test_log_delta_matches_mpmath(eps, mu):
    ref = mp_delta(eps, mu)
    if ref <= 0 or mpmath.log(ref) < -2000:
        return
    assert accounting.log_delta_of_mu(eps, mu) == pytest.approx(float(mpmath.log(ref)), abs=1e-11)


def test_tiny_delta_gives_the_gdp_sigma():
    # guards against: sigma = 3.16e8 beside "epsilon: 1.0" (the curve underflowed)
    sigma = accounting.gaussian_sigma(1.0, 1e-300, 10)
    assert sigma == pytest.approx(116.5789, abs=1e-3)


def test_target_one_is_never_exceeded():
    # guards against: the root finder gave 1.0000000000000353 for target 1
    for steps in (1, 4, 10, 100):
        for delta in (1e-5, 1e-8):
            assert (
                accounting.epsilon_of(accounting.gaussian_sigma(1.0, delta, steps), delta, steps)
                <= 1.0
            )


def test_a_split_budget_recomposes_below_its_target():
    # DPKMeans: mu is split between PE and a recover step, each converted through epsilon and back
    for eps, delta, share in [(1.0, 1e-5, 0.25), (0.5, 1e-10, 0.55), (8.0, 1e-300, 0.1)]:
        mu = accounting.mu_of_epsilon(eps, delta)
        eps_pe = accounting.epsilon_of_mu(mu * math.sqrt(1 - share), delta)
        sigma_pe = accounting.gaussian_sigma(eps_pe, delta, 7)
        mu_total = accounting.compose_mu(math.sqrt(7) / sigma_pe, mu * math.sqrt(share))
        assert accounting.epsilon_of_mu(mu_total, delta) <= eps


@pytest.mark.parametrize(
    "kwargs,match",
    [
        (dict(epsilon=1e-12, delta=1e-5, steps=1), "epsilon must be between 1e-06 and 1e\\+06"),
        (dict(epsilon=2e6, delta=1e-5, steps=1), "epsilon must be between 1e-06 and 1e\\+06"),
        (dict(epsilon=1.0, delta=5e-324, steps=1), "delta must be at least 1e-300"),
    ],
)
def test_outside_the_supported_range_one_rule(kwargs, match):
    with pytest.raises(ValueError, match=match):
        accounting.gaussian_sigma(**kwargs)


@pytest.mark.parametrize("eps,delta", WIDE)
def test_discrete_sigma_never_above_target_over_the_whole_range(eps, delta):
    # guards against: tiny epsilon with delta <= 1e-100 failed in the root finder (rho below 1e-12)
    sigma = accounting.discrete_gaussian_sigma(eps, delta, 10)
    reported = accounting.discrete_gaussian_epsilon(sigma, delta, 10)
    assert eps * (1 - 1e-6) <= reported <= eps
    # CKS20 Cor. 13 on a dense grid of orders: the optimiser finds its minimum
    rho = accounting.zcdp_rho(sigma, 10)
    a = 1.0 + np.exp(np.linspace(-12, 60, 200_001))
    dense = a * rho + np.log1p(-1.0 / a) - (math.log(delta) + np.log(a)) / (a - 1.0)
    assert reported <= dense.min() * (1 + 1e-6)


def test_the_add_remove_default_delta_is_marked_and_refused_above_one_over_10_n():
    default = accounting.default_delta(None)
    assert isinstance(default, accounting.DefaultDelta) and default == 1e-6
    assert not isinstance(accounting.default_delta(1000), accounting.DefaultDelta)
    accounting.check_default_delta(default, 1e5)  # 1/(10·1e5) = 1e-6: still allowed
    with pytest.raises(ValueError, match="too large"):
        accounting.check_default_delta(default, 1.2e5)  # 1/(10·1.2e5) ≈ 8.3e-7
    with pytest.raises(ValueError, match=r"pass delta explicitly \(--delta\), e.g. 1e-08"):
        accounting.check_default_delta(default, 1e7)  # the 10^7-row case: 1/(10 n) = 1e-8
    accounting.check_default_delta(1e-6, 1e7)  # a δ the caller chose is theirs
    import pickle

    assert isinstance(pickle.loads(pickle.dumps(default)), accounting.DefaultDelta)


def test_a_noisy_size_that_is_mostly_noise_never_refuses_the_default_delta():
    default = accounting.default_delta(None)
    accounting.check_default_delta(default, 5e6, noise_sd=2e6)  # 5e6 − 3·2e6 < 0: could be tiny
    with pytest.raises(ValueError, match="too large"):
        accounting.check_default_delta(default, 5e6, noise_sd=1e5)  # ≥ 4.7e6 units, surely


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
