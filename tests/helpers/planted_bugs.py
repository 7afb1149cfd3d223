"""Planted bugs: mechanisms that claim more privacy than they give, for the audit to catch.

Each double releases what a real privevo mechanism releases, with one known flaw, and
reports the correct claim; ``privevo.audit``'s lower bound must exceed that claim
(tests/audit/test_mechanism_audits.py at test sizes, benchmarks/audit.py at full size).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from privevo import PrivateEvolution
from privevo.private import (
    cluster_sums,
    nn_histogram,
    noisy_nn_histogram,
    noisy_second_moment,
    reference_assign,
)
from privevo.private.release import _NOISES


def quarter_sigma_noise(noise: str):
    """An ``add_noise`` that claims σ and draws with σ/4."""
    return lambda counts, sigma, rng: _NOISES[noise](counts, sigma / 4, rng)


def last_row_counted_twice(private, candidates):
    """An off-by-one at a block boundary: the block's last row votes twice (the canary is D′'s
    last row)."""
    counts = nn_histogram(private, candidates)
    counts[reference_assign(private[-1:], candidates)[0]] += 1
    return counts


class QuarterSigmaPE(PrivateEvolution):
    """Claims σ, releases with σ/4 on every round."""

    def _histogram(self, X, candidates, rng):
        release = noisy_nn_histogram(
            X, candidates, self.sigma_ / 4, rng, noise=self.noise, metric=self.metric
        )
        return dataclasses.replace(release, sigma=self.sigma_)  # the ledger is told σ


class SkipsNoiseOnRound2PE(PrivateEvolution):
    """Releases the exact counts in round 2 (a forgotten noise call on one path)."""

    def _histogram(self, X, candidates, rng):
        release = super()._histogram(X, candidates, rng)
        if len(self.history_) == 1:  # the ledger still records a noisy release
            return dataclasses.replace(
                release, value=nn_histogram(X, candidates).astype(np.float64)
            )
        return release


def scalar_noise_on_sums(private, centers, sigma_sum, sigma_count, rng):
    """The public HDPE-means code's flaw: one noise value per cluster, added to every coordinate."""
    sums, counts = cluster_sums(private, centers)
    return sums + rng.normal(0.0, sigma_sum, size=(len(sums), 1)), counts + rng.normal(
        0.0, sigma_count, size=counts.shape
    )


def quarter_sigma_sums(private, centers, sigma_sum, sigma_count, rng):
    """Claims (σ_sum, σ_count), releases with a quarter of each."""
    sums, counts = cluster_sums(private, centers)
    return sums + rng.normal(0.0, sigma_sum / 4, size=sums.shape), counts + rng.normal(
        0.0, sigma_count / 4, size=counts.shape
    )


def quarter_sigma_moment(private, sigma, rng):
    """Claims σ for the second moment, releases with σ/4."""
    return noisy_second_moment(private, sigma / 4, rng).value
