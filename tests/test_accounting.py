import math

import dp_accounting
import numpy as np
import pytest

from privevo import accounting


def pld_epsilon(sigma: float, steps: int, delta: float, sensitivity: float = 1.0, scale: float = 1.0) -> float:
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
