"""DPLloyd (Su et al. 2016): diffprivlib's ``KMeans``, vectorised, seeded, without its ε swap.

Pure ε-DP under the ``adjacency`` it is given (add/remove by default, or replace).
Sphere-packing initialisation inside the public box; T = clip(ε'/ε_m, 2, 7) iterations with
ε_m = √(500·k³/ñ²·(d + ∛(4dρ²))³), ρ = 0.225. Under add/remove ñ is a noisy count
(two-sided geometric noise, ε·``COUNT_SHARE``; Su et al. read the exact n, which makes T, and
so the output, a function of n) and ε' = ε·(1 − ``COUNT_SHARE``); under replace n is public,
ñ = n and ε' = ε. Each iteration spends ε'/T: a noisy count per cluster (two-sided geometric
noise, ε_c) and a noisy sum per cluster and feature (Laplace, ε_s each), with
ε_c : ε_s = ∛(4dρ²) : 1 and ε_c + d·ε_s = ε'/T (diffprivlib 0.6 unpacks these two in the
wrong order and overspends; we return them named). The sums are of x − m, m the box's
midpoint, so one row changes a feature's sum by at most (hi − lo)/2 when added or removed,
and the sums by (hi − lo) per feature in all when replaced: the Laplace scale (hi − lo)/ε_s
is right under both adjacencies. A replaced row can also move from one cluster to another,
which changes two counts: their geometric scale is 2/ε_c under replace, 1/ε_c under
add/remove (:func:`privevo.private.dplloyd_release` states the bounds). (Raw sums, as in
diffprivlib, change by max(|lo|, |hi|) when a row is added: for a box like [10, 12] six
times the range.) Centre = m + noisy sum / noisy count, clipped to the box; a cluster whose
noisy count is < 1 keeps its centre.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .._validation import check_epsilon
from ..names import COUNT_SHARE
from ..private import baseline_row_count
from ..private import dplloyd_release as _release
from ..variation import SpherePacking
from ._base import DPBaselineKMeans

RHO = 0.225


class EpsilonSplit(NamedTuple):
    count: float  # ε of each noisy count
    feature_sum: float  # ε of each feature's noisy sum


def split_epsilon(epsilon: float, dim: int, rho: float = RHO) -> EpsilonSplit:
    """Su et al.'s split of one iteration's ε: count ∛(4dρ²) : per-feature sum 1, total ε."""
    w = np.cbrt(4 * dim * rho**2)
    unit = epsilon / (dim + w)
    return EpsilonSplit(count=w * unit, feature_sum=unit)


def dplloyd_iterations(epsilon: float, n: float, k: int, dim: int, rho: float = RHO) -> int:
    """T = clip(ε/ε_m, 2, 7), ε_m = √(500·k³/n²·(d + ∛(4dρ²))³) (Su et al. 2016).

    ``n`` must be public or a noisy count (:func:`noisy_n`); values below 1 count as 1.
    """
    n = max(float(n), 1.0)
    eps_m = math.sqrt(500 * k**3 / n**2 * (dim + np.cbrt(4 * dim * rho**2)) ** 3)
    return int(min(max(epsilon / eps_m, 2), 7))


def noisy_n(X, scale: float, rng: np.random.Generator, noise: str, releases: list) -> float:
    """A noisy row count (appended to ``releases``): what the iteration count reads."""
    count = baseline_row_count(X, scale, rng, noise)
    releases.append(count)
    return float(count.value[0])


def box_sphere_packing(
    k: int, lo: np.ndarray, hi: np.ndarray, rng: np.random.Generator
) -> np.ndarray:
    """k sphere-packed points in the box: packed in the unit ball, mapped by mid + half·u."""
    mid, half = (lo + hi) / 2, (hi - lo) / 2
    return mid + half * SpherePacking(1.0).sample(k, len(lo), rng)


def dplloyd_release(
    X, centers, lo, hi, split: EpsilonSplit, rng: np.random.Generator, adjacency="add_remove"
):
    """One iteration: (Σ(x − m) per cluster + Laplace((hi − lo)/ε_s), counts + geometric noise
    of scale Δ_c/ε_c, Δ_c = 1 (add/remove) or 2 (replace)).

    ε_c + d·ε_s-DP under ``adjacency``; m = (lo + hi)/2. The two
    :class:`~privevo.private.Release` objects (:func:`privevo.private.dplloyd_release`).
    """
    return _release(X, centers, lo, hi, split.count, split.feature_sum, rng, adjacency)


class DPLloyd(DPBaselineKMeans):
    """Su et al.'s DPLloyd (pure ε-DP under ``adjacency``); ``delta`` is accepted and ignored."""

    def _fit_centers(self, X, lo, hi, k, rng):
        epsilon = check_epsilon(self.epsilon)
        n, adjacency = self._public_n(X), self.adjacency
        d = X.shape[1]
        self.releases_ = []
        rest = epsilon
        if n is None:  # add/remove: n is private, a noisy count takes COUNT_SHARE of ε
            n = noisy_n(X, 1.0 / (COUNT_SHARE * epsilon), rng, "geometric", self.releases_)
            rest = epsilon * (1 - COUNT_SHARE)
        T = dplloyd_iterations(rest, n, k, d)
        split = split_epsilon(rest / T, d)
        centers = box_sphere_packing(k, lo, hi, rng)
        mid = (lo + hi) / 2
        for _ in range(T):
            sums, counts = dplloyd_release(X, centers, lo, hi, split, rng, adjacency)
            self.releases_ += [sums, counts]
            noisy_sums, noisy_counts = sums.value, counts.value
            ok = noisy_counts >= 1
            centers[ok] = np.clip(mid + noisy_sums[ok] / noisy_counts[ok, None], lo, hi)
        self.n_iter_ = T
        self.privacy_report_ = {
            "epsilon": epsilon,
            "delta": 0.0,
            "adjacency": adjacency,
            "mechanism": "DPLloyd: Laplace sums + geometric counts",
        }
        return centers
