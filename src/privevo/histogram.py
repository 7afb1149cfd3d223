"""Deprecated alias: the private histogram moved to :mod:`privevo.private`.

The old functions keep their old return values (arrays, not
:class:`~privevo.private.Release` objects).
"""

from __future__ import annotations

from . import private as _private
from ._deprecated import warn_moved
from .private import (  # noqa: F401  re-exported names
    METRICS,
    PreparedCandidates,
    available_backends,
    cluster_sums,
    expand_counts,
    lattice_sensitivity,
    lattice_step,
    nn_histogram,
    partial_counts,
    prepare_candidates,
    reference_assign,
    register_backend,
    release_noise,
    second_moment,
)

warn_moved("privevo.histogram", "privevo.private")


def noisy_nn_histogram(private, candidates, sigma, rng, **kwargs):
    """Old form of :func:`privevo.private.noisy_nn_histogram`: the noisy counts array."""
    return _private.noisy_nn_histogram(private, candidates, sigma, rng, **kwargs).value


def noisy_cluster_sums(private, centers, sigma_sum, sigma_count, rng, **kwargs):
    """Old form of :func:`privevo.private.noisy_cluster_sums`: (noisy sums, noisy counts)."""
    sums, counts = _private.noisy_cluster_sums(
        private, centers, sigma_sum, sigma_count, rng, **kwargs
    )
    return sums.value, counts.value


def noisy_second_moment(private, sigma, rng, **kwargs):
    """Old form of :func:`privevo.private.noisy_second_moment`: the noisy matrix."""
    return _private.noisy_second_moment(private, sigma, rng, **kwargs).value


def noisy_count(private, sigma, rng, noise="gaussian"):
    """Old form of :func:`privevo.private.noisy_count`: the noisy count as a float."""
    return float(_private.noisy_count(private, sigma, rng, noise).value[0])
