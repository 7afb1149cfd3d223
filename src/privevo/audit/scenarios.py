"""Canary scenarios: neighbouring data sets D and D′ and the canary's effect on the exact counts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from .. import accounting
from .._validation import (
    check_delta,
    check_epsilon,
    check_positive_int,
    check_random_state,
)
from ..adjacency import vote_sensitivity


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
    vote_sensitivity(adjacency)
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
    from ..private import reference_assign

    return np.bincount(reference_assign(points, candidates), minlength=len(candidates))


def _canary_vector(scenario: CanaryScenario, candidates: np.ndarray) -> np.ndarray:
    """v = counts(D′) − counts(D) on these candidates, by the float64 reference."""
    from ..private import reference_assign

    v = np.zeros(len(candidates))
    v[reference_assign(scenario.canary[None, :], candidates)[0]] += 1
    if scenario.replaced is not None:
        v[reference_assign(scenario.replaced[None, :], candidates)[0]] -= 1
    return v


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
