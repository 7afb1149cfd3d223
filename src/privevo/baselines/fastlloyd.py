"""FastLloyd (Diaa et al.): relative, radius-capped DP Lloyd updates with Gaussian noise.

Data are mapped into [−1, 1]^d from the public box. Each of T iterations
(T = clip(ε/ε_m, 2, 7), Su et al.'s rule; n a noisy count taking ``COUNT_SHARE`` of μ² under
add/remove, the public n under replace) releases, per cluster, the noisy
sum of x − c over points within ``max_dist`` of their nearest centre c
(L2 sensitivity ``max_dist``, 2·``max_dist`` under replace) and the noisy count (sensitivity
1, √2 under replace), both Gaussian (:func:`privevo.private.fastlloyd_release`).
``max_dist`` = √d in the first iteration, then √d·α/k^(1/d),
α = 0.8. The centre moves by noisy Σ(x − c) / noisy count, the move capped
at ``max_dist``, and is folded back into the box. The budget is exact GDP:
each iteration gets μ/√T, split between sums and counts as √d : 1.
"""

from __future__ import annotations

import math

import numpy as np

from .. import accounting
from ..adjacency import vote_sensitivity
from ..private import cluster_sums_sensitivity, fastlloyd_release
from ..variation._geometry import project_to_ball
from ._base import DPBaselineKMeans
from .dplloyd import COUNT_SHARE, box_sphere_packing, dplloyd_iterations, noisy_n

ALPHA = 0.8


class FastLloyd(DPBaselineKMeans):
    """FastLloyd with Gaussian noise under exact GDP accounting; ``delta=None`` → 1e-6 (n is
    private under add/remove), min(1e-6, 1/(10 n)) under replace
    (:func:`privevo.accounting.default_delta`)."""

    def _fit_centers(self, X, lo, hi, k, rng):
        n, adjacency = self._public_n(X), self.adjacency
        epsilon, delta = self._epsilon_delta(n)
        d = X.shape[1]
        mid, half = (lo + hi) / 2, (hi - lo) / 2
        U = (X - mid) / half  # in [−1, 1]^d
        budget = accounting.quadratic_budget(epsilon, delta)
        self.releases_ = []
        if n is None:  # add/remove: n is private, a noisy count takes COUNT_SHARE of μ²
            sigma_n = accounting.share_sigma(budget, COUNT_SHARE, 1.0)
            n = noisy_n(X, sigma_n, rng, "gaussian", self.releases_)
            accounting.check_default_delta(delta, n, sigma_n)  # a defaulted δ: below 1/(10 ñ)
            budget *= 1 - COUNT_SHARE
        T = dplloyd_iterations(epsilon, n, k, d)
        root = math.sqrt(d)
        count_sensitivity = vote_sensitivity(adjacency)
        centers = (box_sphere_packing(k, lo, hi, rng) - mid) / half
        for t in range(T):
            max_dist = root if t == 0 else root * ALPHA / k ** (1 / d)
            sum_sensitivity = cluster_sums_sensitivity(max_dist, adjacency, "gaussian", k * d)
            sums, counts = fastlloyd_release(
                U,
                centers,
                max_dist,
                accounting.share_sigma(budget, root / (root + 1) / T, sum_sensitivity),
                accounting.share_sigma(budget, 1 / (root + 1) / T, count_sensitivity),
                rng,
                adjacency,
            )
            self.releases_ += [sums, counts]
            noisy_sums, noisy_counts = sums.value, counts.value
            ok = noisy_counts >= 1
            step = project_to_ball(noisy_sums[ok] / noisy_counts[ok, None], max_dist)
            centers[ok] = np.clip(centers[ok] + step, -1.0, 1.0)
        self.n_iter_ = T
        self.privacy_report_ = {
            "epsilon": epsilon,
            "delta": delta,
            "adjacency": adjacency,
            "mechanism": "FastLloyd: Gaussian relative sums + counts",
        }
        return mid + half * centers
