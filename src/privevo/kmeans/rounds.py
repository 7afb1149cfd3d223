"""PE-means rounds and DPKMeans' own releases: the noisy count, HDPE's projection, the recover
steps, each through the checkpoint log.

The quadratic budget B (μ² under GDP, 2ρ under zCDP) is split: the noisy
count, HDPE's second moment and the recover step take their shares, the PE
rounds the rest (T rounds at one σ). All releases are Gaussian and compose
exactly: μ² = T/σ_h² + (R_s/σ_s)² + 1/σ_c² (+ 1/σ_m²) (docs/kmeans.md).
"""

from __future__ import annotations

import math
import time

import numpy as np

from .. import accounting
from ..adjacency import vote_sensitivity
from ..evolution import PrivateEvolution
from ..private import (
    ChunkedRows,
    RecoverRows,
    Release,
    noisy_cluster_sums,
    noisy_count,
    noisy_second_moment,
    project_rows,
    row_dim,
    second_moment_sensitivity,
)
from ..selection.weighted_kmeans import WeightedKMeans
from ..variation import LevyVariation, SpherePacking
from .plan import Plan, population
from .recover import (
    centred_means,
    low_signal,
    pca_basis,
    recover_noise,
    recover_radii,
    shrunk_means,
)

__all__ = ["PEMeansRun", "Steps"]


class Steps:
    """DPKMeans' own steps (count, projection, second moment, recover) through the checkpoint
    log: :func:`privevo.checkpoint.replay_or_draw` (arrays) and ``replay_or_release``
    (releases), the one replay-or-draw of every run."""

    def __init__(self, log, rng: np.random.Generator):
        self.log, self.rng = log, rng

    def release(self, key: str, draw, adjacency: str) -> list[Release]:
        from ..checkpoint import replay_or_release

        return replay_or_release(self.log, key, self.rng, draw, adjacency)

    def run(self, key: str, draw) -> dict:
        from ..checkpoint import replay_or_draw

        return replay_or_draw(self.log, key, self.rng, draw)


class PEMeansRun:
    """One fit's releases in order: (noisy n), (HDPE's projection), T PE rounds, S recover steps.

    ``est`` is the :class:`~privevo.kmeans.DPKMeans` (its parameters are read, never
    written); ``Z`` the rows in the unit ball.
    """

    def __init__(self, est, plan: Plan, rng: np.random.Generator, log):
        self.est, self.plan, self.rng, self.log = est, plan, rng, log
        self.steps = Steps(log, rng)
        self.evolution = None
        self.variations = None
        self.low_signal = np.zeros(0, dtype=np.int64)  # the last recover step's (none: none)

    def refined_means(self, Z: np.ndarray):
        """(unit-ball centres, releases, seconds): PE-means (on Z, or on HDPE's projection),
        then the recover steps. With share 0 (no recover step) and replace adjacency this is
        the paper's PE-means."""
        cfg, est = self.plan, self.est
        budget = accounting.quadratic_budget(cfg.epsilon, cfg.delta, est.noise)
        pe_share = 1 - cfg.share - cfg.projection_share - cfg.count_share
        n_hat, releases = self.noisy_n(Z, budget)
        if cfg.method == "hdpe-means":
            basis, projection_releases = self.projection(Z, budget)
            releases += projection_releases
            Z_pe = project_rows(Z, basis)
        else:
            basis, Z_pe = None, Z
        sigma_pe = accounting.share_sigma(budget, pe_share, vote_sensitivity(est.adjacency), cfg.T)
        pe_centers, pe_releases, times = self.pe_means(Z_pe, sigma_pe, n_hat)
        releases += pe_releases
        if basis is None:
            anchors, cells = pe_centers, (pe_centers, None)
        else:
            anchors, cells = pe_centers @ basis.T, (pe_centers, basis)
        if cfg.share == 0:
            return anchors, releases, times
        tic = time.perf_counter()
        each = budget * cfg.share / cfg.recover_steps
        centers, recover_releases = self.recover(Z, anchors, cells, each, basis)
        for step in range(1, cfg.recover_steps):  # noisy Lloyd steps from the refined centres
            centers, more = self.recover(
                Z, centers, (centers, None), each, key=f"recover_{step}", centred=True
            )
            recover_releases += more
        times["recover"] = time.perf_counter() - tic
        return centers, releases + recover_releases, times

    def noisy_n(self, Z: np.ndarray, budget: float):
        """(ñ, releases): n + noise under add/remove (``count_share`` of B); (None, []) under
        replace. A defaulted δ must stay below ñ^-1.1 (post-processing of ñ)."""
        cfg, est = self.plan, self.est
        if cfg.count_share == 0:
            return None, []
        sigma = accounting.share_sigma(budget, cfg.count_share, 1.0)
        releases = self.steps.release(
            "count",
            lambda rng: [noisy_count(ChunkedRows(Z), sigma, rng, est.noise)],
            est.adjacency,
        )
        n_hat = float(releases[0].value[0])
        try:
            accounting.check_default_delta(cfg.delta, n_hat, releases[-1].sigma)
        except ValueError:
            if est.accountant is not None:
                est.accountant.charge(list(releases), name=type(est).__name__)
            raise
        return n_hat, releases

    def projection(self, Z: np.ndarray, budget: float):
        """HDPE's basis (d, d'), orthonormal columns so ‖Zᵀbasis‖ ≤ 1, and its releases.

        ``"pca"``: the top d' eigenvectors of Σzzᵀ + symmetric noise with
        σ_m = Δ/√(projection_share·B), Δ = 1 (add/remove) or √2 (replace)
        (discrete noises: the lattice-rounded Δ). ``"random"``: a random
        orthonormal basis (public; logged so a resume reuses it).
        """
        cfg, est = self.plan, self.est
        d, dim = Z.shape[1], cfg.pe_dim  # public: the schema (an array, block source or Dask array)
        if cfg.projection_share == 0:
            arrays = self.steps.run(
                "projection", lambda rng: {"basis": np.linalg.qr(rng.standard_normal((d, dim)))[0]}
            )
            return arrays["basis"], []
        sensitivity = second_moment_sensitivity(d, 1.0, est.adjacency, est.noise)
        sigma = accounting.share_sigma(budget, cfg.projection_share, sensitivity)
        releases = self.steps.release(
            "second_moment",
            lambda rng: [
                noisy_second_moment(
                    ChunkedRows(Z), sigma, rng, radius=1.0, noise=est.noise, adjacency=est.adjacency
                )
            ],
            est.adjacency,
        )
        return pca_basis(releases[0].value, dim), releases

    def pe_means(self, Z: np.ndarray, sigma: float, n_hat: float | None):
        """PE-means in the unit ball: the engine loop with the PE-means plug-ins, at noise σ."""
        cfg, est = self.plan, self.est
        k, L = cfg.k, population(est.population, cfg, n_hat)
        pe = PrivateEvolution(
            random_api=SpherePacking(radius=1.0),
            variation_api=LevyVariation(gamma=est.gamma, beta=est.beta, per_point=L, radius=1.0),
            selector=WeightedKMeans(n_init=est.n_init),
            n_synthetic=k,
            iterations=cfg.T,
            epsilon=cfg.epsilon,
            delta=cfg.delta,
            adjacency=est.adjacency,
            random_state=self.rng,
            population_size=k * (L + 1),
            backend=est.backend,
            noise=est.noise,
            keep_candidates=False,
            progress=est.progress,
            checkpoint=self.log,
            noise_scale=sigma,
            n_private=n_hat,
        ).fit(Z)
        self.evolution, self.variations = pe, L
        times = {
            key: sum(r.seconds[key] for r in pe.history_)
            for key in ("histogram", "selection", "variation")
        }
        return pe.synthetic_, list(pe.releases_), times

    def recover(self, Z, anchors, cells, budget: float, basis=None, key="recover", centred=False):
        """One private Lloyd step: noisy per-cluster sums and counts, shrunk towards the anchors.

        ``cells = (centres, key_basis)``: row z belongs to the centre nearest to z (key_basis
        None) or to zᵀB (HDPE passes the projected centres and its projection ``basis``, so
        the shrinkage works in span and complement apart); :class:`RecoverRows` sums them.
        ``centred``: each row's offset from its anchor, in units of the anchor's radius.
        ``budget`` is the recover step's part of B.
        """
        est = self.est
        noise = recover_noise(math.sqrt(budget), row_dim(Z), est.adjacency, est.noise, len(anchors))
        centers, key_basis = cells
        radii = recover_radii(anchors) if centred else None
        rows = RecoverRows(Z, key_basis, anchors if centred else None, radii)

        def draw(rng):
            return list(
                noisy_cluster_sums(
                    rows,
                    centers,
                    noise["sigma_sum"],
                    noise["sigma_count"],
                    rng,
                    radius=1.0,
                    noise=est.noise,
                    adjacency=est.adjacency,
                )
            )

        releases = self.steps.release(key, draw, est.adjacency)
        sums, counts = releases[0].value, releases[1].value
        sigmas = noise["sigma_sum"], noise["sigma_count"]
        self.low_signal = low_signal(counts, noise["sigma_sum"], row_dim(Z))
        if centred:
            return centred_means(sums, counts, anchors, radii, *sigmas), releases
        return shrunk_means(sums, counts, anchors, *sigmas, basis), releases
