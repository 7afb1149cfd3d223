"""DP k-means by Private Evolution: PE-means and HDPE-means (the PE-means paper).

PE-means is the engine loop :class:`privevo.PrivateEvolution` with these
plug-ins: a sphere-packed initial population of k·(L+1) centres
(:class:`~privevo.variation.SpherePacking`), the PE-means selector
(:class:`~privevo.selection.WeightedKMeans`: count threshold, adaptive
signal-to-noise, weighted k-means) and Lévy-flight variation
(:class:`~privevo.variation.LevyVariation`). Its only private access is the
noisy nearest-neighbour vote histogram (L2 sensitivity 1).

HDPE-means (d > 32) runs PE-means on an orthonormal projection to
d' = max(16, min(32, ⌊d/2⌋)) dimensions (the paper: 16) for T = ⌊4√d'⌋ rounds
at every ε (the paper: its PE-means rule). Its PE stage only has to find the
cells; the recover step estimates the centres. A wider projection keeps more
clusters apart, and more rounds do not sharpen the cells but give close
clusters more chances to merge (``benchmarks/kmeans_hdpe.py``). The projection
is private PCA by default: the top d' eigenvectors of the noisy second moment
Σxxᵀ ("Analyze Gauss", ``projection_share`` of μ²), which keep the directions
the clusters are spread along where a random projection (the paper's,
``projection="random"``) keeps about d'/d of their spread (``benchmarks/kmeans_hdpe.py``).

Both end with private *recover* steps, Lloyd steps in the original space (``recover_steps``;
the first is described here, the later ones sum offsets from the anchors, see the class doc):
every point goes to its nearest PE centre (HDPE: nearest in the projection),
the per-cluster sums (noise on every coordinate) and counts are released, and
the noisy means are shrunk towards the PE centres by an empirical-Bayes rule
(:func:`shrunk_means`). PE-means needs it because a point votes for the
candidate nearest to it and the Lévy candidates sit within a few γ of their
parent: a vote says in which *direction* a point lies, hardly how far. The
weighted k-means of the voted candidates then settles where the directions
balance — nearer a spatial median of the cell than the mean k-means needs
(``benchmarks/pe_means_bias.py`` measures this). ``recover_share=0`` turns the
step off (the paper's PE-means; HDPE always has it).

All releases — T histograms, the sums and the counts, and HDPE's second
moment — are Gaussian and compose exactly under GDP:
μ² = T/σ_h² + (R_s/σ_s)² + 1/σ_c² (+ 1/σ_m²).

The default plan — T = ⌊4√d⌋ rounds (d' for HDPE-means), the budget shares and
the number of recover steps — is the same at every ε: a larger ε lowers the σ
of every release and changes nothing else (:func:`pe_means_iterations`).
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import time
from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClusterMixin, TransformerMixin
from sklearn.utils.validation import _num_samples, check_is_fitted

from . import accounting
from ._params import describe
from ._validation import (
    DELTA_MIN,
    EPSILON_MAX,
    EPSILON_MIN,
    MAX_ROUNDS,
    HasMethods,
    Interval,
    StrOptions,
    check_points,
    check_random_state,
    validate_params,
)
from .adjacency import vote_sensitivity
from .evolution import PrivateEvolution
from .metrics import EVALUATION_NOTE, labels_and_inertia, nearest_distances
from .private import (
    LEAK_NOTE,
    NOISES,
    Domain,
    Release,
    clip_to_ball,
    cluster_sums_sensitivity,
    data_digest,
    noisy_cluster_sums,
    noisy_count,
    noisy_second_moment,
    public_domain,
    second_moment_sensitivity,
)
from .report import privacy_report, with_seed_warning
from .selection.weighted_kmeans import WeightedKMeans
from .variation import LevyVariation, SpherePacking
from .variation._geometry import project_to_ball

try:  # scikit-learn >= 1.6
    from sklearn.utils.validation import validate_data as _validate_data
except ImportError:  # pragma: no cover

    def _validate_data(estimator, X, reset=True, **kwargs):
        return estimator._validate_data(X, reset=reset, **kwargs)


__all__ = [
    "DPKMeans",
    "anchor_scales",
    "paper_iterations",
    "paper_variations",
    "pca_basis",
    "pe_means_iterations",
    "recover_noise",
    "shrunk_means",
]

METHODS = ("auto", "pe-means", "hdpe-means")
PROJECTIONS = ("pca", "random")
MAX_VARIATIONS = 1000  # cap on the default L (the paper's n/(5k) is 1000 on blobs k=4, n = 20 000)
PE_MEANS_RECOVER_SHARE = 0.4
HDPE_RECOVER_SHARE = 0.55
RECOVER_STEPS = 4  # the recover step's noisy Lloyd steps (benchmarks/kmeans_ablation.py)
RECOVER_RADIUS = 1.0  # later recover steps clip offsets at this many nearest-anchor distances


def paper_iterations(epsilon: float, dim: int) -> int:
    """T = ⌊4√d⌋ for ε ≤ 1, else ⌊ε·⌊4√d⌋⌋ (PE-means paper)."""
    base = max(int(math.floor(4 * math.sqrt(dim))), 1)
    return base if epsilon <= 1 else max(int(math.floor(epsilon * base)), 1)


def pe_means_iterations(pe_dim: int) -> int:
    """The default T = ⌊4√d⌋ at every ε, d the dimension PE runs in (d' for HDPE-means).

    The paper's rule (:func:`paper_iterations`) for ε ≤ 1, kept above it: the
    plan is then the same at every ε, and a larger ε only lowers the noise of
    every release (σ ∝ 1/μ), so more budget buys less noise and nothing else.
    The paper's T = ⌊ε·⌊4√d⌋⌋ adds rounds instead, and rounds past those that
    find the cells do not sharpen the centres (the recover steps do) but give
    close clusters more chances to merge: with T doubled from ε = 1 to 2 the
    loss rose on letter (k = 26) and blobs k=64 d=16, and held at ε = 1's T it
    fell (``benchmarks/kmeans.py --rules``; ``benchmarks/kmeans_hdpe.py`` for
    HDPE-means). Small data gives up a little: iris (unit ball, 30 seeds) at
    ε = 2 and 4, .0500 and .0423 against .0447 and .0380 with T = 16 and 32.
    """
    return paper_iterations(1.0, pe_dim)


def hdpe_projection_dim(dim: int) -> int:
    """d' = max(16, min(32, ⌊d/2⌋)): HDPE-means' projected dimension."""
    return max(16, min(32, dim // 2))


def paper_variations(n: int, k: int) -> int:
    """L = max(⌊n/(5k)⌋, 4) variations per centre (PE-means paper)."""
    return max(n // (5 * k), 4)


@dataclass(frozen=True)
class _Plan:
    """What one fit does, resolved from the parameters and public facts (never the exact n
    under add/remove adjacency)."""

    k: int
    epsilon: float
    delta: float
    method: str  # "pe-means" or "hdpe-means"
    pe_dim: int  # d' (d for PE-means)
    T: int
    n_public: int | None  # n under replace adjacency, else None
    share: float  # recover step's share of the budget
    recover_steps: int  # noisy Lloyd steps sharing it equally
    projection_share: float
    count_share: float


class DPKMeans(TransformerMixin, ClusterMixin, BaseEstimator):
    """Differentially private k-means by Private Evolution (PE-means / HDPE-means).

    Parameters
    ----------
    n_clusters : int, default=8
        k, the number of centres returned (always exactly k).
    epsilon : float, default=1.0
        ε of the (ε, δ)-DP guarantee of the whole fit.
    delta : float or None, default=None
        δ; None means n^−1.1 under ``adjacency="replace"`` (the PE-means
        paper's choice; n is public there) and 1e-6 under ``"add_remove"``,
        where n is private (:func:`privevo.accounting.default_delta`).
    radius : float or None
        Public L2 bound of the data around ``center``. Points outside are
        clipped onto the ball (how many were clipped is private and not
        reported).
    center : array-like (d,) or None
        Centre of the radius ball (default: the origin).
    bounds : (lo, hi) or None
        Public per-feature bounds (scalars or arrays of length d), an
        alternative to ``radius``; points are clipped into the box, and the
        algorithm works in the ball around the box centre that contains it.
        With neither ``radius`` nor ``bounds`` the data's own range is used,
        a :class:`~privevo.PrivacyLeakWarning` is raised and
        ``privacy_report_["guarantee_holds"]`` is False (diffprivlib's convention).
    method : {"auto", "pe-means", "hdpe-means"}
        ``"auto"`` is HDPE-means when d > 32.
    iterations : int or None
        T, PE rounds; None → ⌊4√d⌋ at every ε, d' in place of d for HDPE-means
        (:func:`pe_means_iterations`). The paper's rule, T = ⌊ε·⌊4√d⌋⌋ above
        ε = 1 (:func:`paper_iterations`), makes the loss rise with ε where there
        are many clusters (more rounds merge close ones): at ε = 1 → 2, letter
        1.121 → 1.182 and blobs k=64 d=16 1.839 → 2.447 with T doubled,
        1.121 → 1.108 and 1.840 → 1.502 with T kept (normalised loss, 10 seeds,
        ``benchmarks/kmeans_ablation.py``); HDPE on blobs k=64 d=64 with d' = 16:
        area .400 with it and .266 with T = ⌊4√d'⌋ (``benchmarks/kmeans_hdpe.py``).
    population : int or None
        L, variations per centre (population k·(L+1)); None → max(⌊n/(5k)⌋, 4),
        at most 1000, with n exact under replace adjacency and a noisy count under
        add/remove.
    adjacency : {"add_remove", "replace"}
    random_state : None, int or numpy.random.Generator
        Seeds every draw (population, noise, variation, k-means, projection).
    gamma, beta : Lévy-flight step scale (γ·R) and index (defaults 0.01, 1.75).
    n_init : restarts of the weighted k-means inside each selection.
    projection_dim : int or None
        d', HDPE's projected dimension; None → max(16, min(32, ⌊d/2⌋)).
    projection : {"pca", "random"}
        HDPE's projection: the top d' eigenvectors of a noisy second moment
        Σxxᵀ (private PCA) or a random orthonormal one (the paper's).
    projection_share : share of μ² spent on that second moment (``"pca"``
        only); the PE rounds then get μ·√(1 − recover_share − projection_share).
    recover_share : float or None
        Share of μ² spent on the recover step (see the module doc), split
        between sums and counts as √d : 1 (minimises the centre's error
        bound); the PE rounds get μ·√(1 − share) (less ``projection_share``
        with HDPE's PCA). In [0, 1) for PE-means (0:
        the paper's PE-means), (0, 1) for HDPE-means. None → 0.4 for
        PE-means, whose PE centres are its answer and the step refines them,
        and 0.55 for HDPE-means, whose answer *is* the step (the PE
        stage only finds the cells; outside the projection the step is the only
        information).
    recover_steps : int or None
        S, the number of recover steps (private Lloyd steps) sharing
        ``recover_share`` equally: the first assigns the rows to the PE centres,
        each next one to the centres the previous step returned, and each
        step's means are shrunk towards the previous centres (:func:`shrunk_means`).
        None → :data:`RECOVER_STEPS` (4). The first step's sums are of the rows
        themselves (rows in the unit ball, sensitivity 1); the later ones sum
        each row's offset from its anchor divided by r_j, the distance from
        anchor j to its nearest other anchor (:func:`recover_radii`), clipped to
        the unit ball — still sensitivity 1, but the centre's noise is r_j
        times smaller (:func:`centred_means`). At ε = 1 on the [−1, 1]^d boxes
        of optdigits, satimage, penbased and letter (10 seeds,
        ``benchmarks/kmeans_ablation.py --rows none``) one step with
        recover_share 0.5 gave excess loss .178/.417/.067/.214; the defaults,
        four steps with recover_share 0.4 (PE-means) / 0.55 (HDPE), give
        .117/.192/.049/.121.
    backend : histogram backend (see :func:`privevo.private.nn_histogram`).
    progress : show a progress bar over the PE rounds.
    checkpoint : path of a checkpoint file (:mod:`privevo.checkpoint`), an
        append-only log of every step: the noisy count, the projection or
        second moment, each PE round and the recover step, each logged when
        made. The next ``fit`` with the same parameters *on the same data*
        (a digest is kept inside the file) replays the logged steps and runs
        only the missing ones; a checkpoint of a finished fit returns the
        finished centres and releases nothing new. Other data is refused.
    noise : {"gaussian", "discrete_gaussian", "discrete_gaussian_secure"}
        The noise of *every* release of the fit (discrete: zCDP accounting,
        real-valued sums rounded to a fine lattice first; ``_secure`` draws it
        from the operating system's CSPRNG).
    accountant : :class:`privevo.BudgetAccountant` or None
        A budget shared with other fits: the fit is refused before the data is
        read if it would exceed it, and charged with its releases afterwards.
    count_share : float, default=0.02
        Under add/remove adjacency, the share of the budget spent on a noisy
        count of the rows, from which the population size and PE-means'
        count threshold are set (the exact n is private there and never used).

    Attributes
    ----------
    cluster_centers_ : (k, d) the DP centres (the only private output).
    labels_, inertia_ : the training points' nearest centre and Σ‖x − c‖²,
        evaluated on the data for scikit-learn compatibility; they are *not*
        differentially private — do not publish them.
    n_iter_ : T, the number of PE rounds.
    privacy_report_ : dict, see :mod:`privevo.report`; lists every release.
    timings_ : seconds spent in the histogram, selection, variation, recover, total.
    """

    _parameter_constraints: dict = {
        "n_clusters": [Interval(Integral, 1, None, closed="left")],
        "epsilon": [Interval(Real, EPSILON_MIN, EPSILON_MAX, closed="both")],
        "delta": [Interval(Real, DELTA_MIN, 1, closed="left"), None],
        "radius": [Interval(Real, 0, None, closed="neither"), None],
        "center": ["array-like", Real, None],
        "bounds": [tuple, list, None],
        "method": [StrOptions(set(METHODS))],
        "iterations": [Interval(Integral, 1, MAX_ROUNDS, closed="both"), None],
        "population": [Interval(Integral, 1, None, closed="left"), None],
        "adjacency": [StrOptions({"add_remove", "replace"})],
        "random_state": [Integral, np.random.Generator, None],
        "gamma": [Interval(Real, 0, None, closed="neither")],
        "beta": [Interval(Real, 0, None, closed="neither")],
        "n_init": [Interval(Integral, 1, None, closed="left")],
        "projection_dim": [Interval(Integral, 1, None, closed="left"), None],
        "projection": [StrOptions(set(PROJECTIONS))],
        "projection_share": [Interval(Real, 0, 1, closed="neither")],
        "recover_share": [Interval(Real, 0, 1, closed="left"), None],
        "recover_steps": [Interval(Integral, 1, MAX_ROUNDS, closed="both"), None],
        "backend": [str],
        "progress": ["boolean"],
        "checkpoint": [str, os.PathLike, None],
        "noise": [StrOptions(set(NOISES))],
        "count_share": [Interval(Real, 0, 1, closed="neither")],
        "accountant": [HasMethods(("check", "charge")), None],
    }

    def __init__(
        self,
        n_clusters: int = 8,
        *,
        epsilon: float = 1.0,
        delta: float | None = None,
        radius: float | None = None,
        center=None,
        bounds=None,
        method: str = "auto",
        iterations: int | None = None,
        population: int | None = None,
        adjacency: str = "add_remove",
        random_state=None,
        gamma: float = 0.01,
        beta: float = 1.75,
        n_init: int = 3,
        projection_dim: int | None = None,
        projection: str = "pca",
        projection_share: float = 0.1,
        recover_share: float | None = None,
        recover_steps: int | None = None,
        backend: str = "auto",
        progress: bool = False,
        checkpoint=None,
        noise: str = "gaussian",
        count_share: float = 0.02,
        accountant=None,
    ):
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.delta = delta
        self.radius = radius
        self.center = center
        self.bounds = bounds
        self.method = method
        self.iterations = iterations
        self.population = population
        self.adjacency = adjacency
        self.random_state = random_state
        self.gamma = gamma
        self.beta = beta
        self.n_init = n_init
        self.projection_dim = projection_dim
        self.projection = projection
        self.projection_share = projection_share
        self.recover_share = recover_share
        self.recover_steps = recover_steps
        self.backend = backend
        self.progress = progress
        self.checkpoint = checkpoint
        self.noise = noise
        self.count_share = count_share
        self.accountant = accountant

    # -- scikit-learn API --------------------------------------------------

    def fit(self, X, y=None) -> "DPKMeans":
        """Compute DP centres of ``X`` (n, d)."""
        tic = time.perf_counter()
        self._validate_params()  # the declared constraints, before the data is read
        # the budget is checked before any cell of X is read: δ is the given one, the fixed
        # add/remove default, or under replace n^-1.1 with the public n (X's length only)
        delta = self._public_delta(X)
        self._check_budget(delta)
        X = self._check_X(X, reset=True)
        cfg = self._resolve(*X.shape, delta)
        domain = public_domain(X, radius=self.radius, center=self.center, bounds=self.bounds)
        Z = domain.to_unit_ball(X)
        rng = check_random_state(self.random_state)
        with self._open_checkpoint(X, cfg) as log:
            unit_centers, releases, times = self._refined_means(Z, cfg, rng, log)
        self.cluster_centers_ = in_domain(domain, unit_centers)
        self._set_fit_outputs(X, cfg, releases, domain)
        self.timings_ = {**times, "total": time.perf_counter() - tic}
        if self.accountant is not None:
            self.accountant.charge(self.privacy_report_, name=type(self).__name__)
        return self

    def _validate_params(self) -> None:
        """The declared constraints (:func:`privevo._validation.validate_params`)."""
        validate_params(self._parameter_constraints, self.get_params(deep=False), "DPKMeans")

    def _public_delta(self, X) -> float:
        """The fit's δ from public inputs only: given, or
        :func:`privevo.accounting.run_default_delta` (under replace, of the public n read as
        X's length: no cell is read)."""
        if self.delta is not None:
            return float(self.delta)
        if self.adjacency != "replace":
            return accounting.run_default_delta(self.adjacency, None)
        if sp.issparse(X):
            raise TypeError("DPKMeans does not accept sparse X; pass a dense array (X.toarray())")
        try:
            n = _num_samples(X)
        except TypeError:
            raise ValueError(_BAD_X) from None
        _check_enough_rows(n)
        return accounting.run_default_delta(self.adjacency, n)

    def _check_budget(self, delta: float) -> None:
        """Refuse the fit if the ``accountant``'s budget cannot pay for (ε, δ)."""
        if self.accountant is not None:
            self.accountant.check(epsilon=self.epsilon, delta=delta, name=type(self).__name__)

    def predict(self, X) -> np.ndarray:
        """Index of the nearest DP centre of each row."""
        return nearest_distances(self._check_X(X), self.cluster_centers_)[1]

    def transform(self, X) -> np.ndarray:
        """Euclidean distances to the DP centres, (n, k)."""
        X = self._check_X(X)
        c = self.cluster_centers_
        d2 = (
            np.einsum("ij,ij->i", X, X)[:, None]
            - 2.0 * X @ c.T
            + np.einsum("ij,ij->i", c, c)[None, :]
        )
        return np.sqrt(np.maximum(d2, 0.0))

    def score(self, X, y=None) -> float:
        """Opposite of the k-means objective Σ_x min_c ‖x − c‖² on ``X``."""
        return -float(nearest_distances(self._check_X(X), self.cluster_centers_)[0].sum())

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = self.random_state is None
        return tags

    # -- input and parameter checks -----------------------------------------

    def _check_X(self, X, reset: bool = False) -> np.ndarray:
        if not reset:
            check_is_fitted(self, "cluster_centers_")
        if sp.issparse(X):
            raise TypeError("DPKMeans does not accept sparse X; pass a dense array (X.toarray())")
        array = np.asarray(X)
        if np.iscomplexobj(array):
            raise ValueError("Complex data not supported; X must be real-valued")
        try:  # numpy's and scikit-learn's conversion messages quote the cell: never shown
            array.astype(np.float64, copy=False)
        except TypeError:
            raise TypeError(
                "X must hold numbers only: each cell's float() argument must be a string or a "
                "real number"
            ) from None
        except ValueError:
            raise ValueError(_BAD_X) from None
        if reset and array.ndim == 2:  # before scikit-learn's check, which prints n
            _check_enough_rows(array.shape[0])
        try:  # then scikit-learn's shape and feature checks, shown without the array and the
            # shape they print (its cells; n)
            X = _validate_data(
                self,
                X,
                reset=reset,
                dtype=np.float64,
                ensure_all_finite=False,
                ensure_min_samples=1,
            )
        except (TypeError, ValueError) as error:
            kind = TypeError if isinstance(error, TypeError) else ValueError
            raise kind(_without_array(error)) from None
        return check_points(X, "X")

    def _resolve(self, n: int, d: int, delta: float) -> _Plan:
        """The fit's plan: the declared parameters plus their defaults and cross-checks.

        Never writes to self's params. Under add/remove adjacency n is private:
        δ (:meth:`_public_delta`) never reads it and the population waits for a noisy
        count (:meth:`_population`); under replace n is public and used as is. Messages
        never print n.
        """
        if self.n_clusters > n:
            raise ValueError(
                f"n_clusters={self.n_clusters} is larger than the number of rows; lower n_clusters"
            )
        n_public = n if self.adjacency == "replace" else None
        method = ("hdpe-means" if d > 32 else "pe-means") if self.method == "auto" else self.method
        if method == "hdpe-means":
            pe_dim = min(
                hdpe_projection_dim(d) if self.projection_dim is None else self.projection_dim, d
            )
        else:
            pe_dim = d
        default_T = min(pe_means_iterations(pe_dim), MAX_ROUNDS)
        share = _recover_share(self.recover_share, method)
        pca = method == "hdpe-means" and self.projection == "pca"
        projection_share = float(self.projection_share) if pca else 0.0
        count_share = 0.0 if n_public is not None else float(self.count_share)
        if share + projection_share + count_share >= 1:
            raise ValueError(
                f"recover_share + projection_share + count_share must be < 1 (the PE rounds "
                f"need the rest), got {share} + {projection_share} + {count_share}"
            )
        return _Plan(
            k=self.n_clusters,
            epsilon=float(self.epsilon),
            delta=delta,
            method=method,
            pe_dim=pe_dim,
            T=default_T if self.iterations is None else self.iterations,
            n_public=n_public,
            share=share,
            recover_steps=self._recover_steps(method) if share > 0 else 0,
            projection_share=projection_share,
            count_share=count_share,
        )

    def _pe_means(self, Z: np.ndarray, cfg: _Plan, sigma: float, n_hat: float | None, rng, log):
        """PE-means in the unit ball: the engine loop with the PE-means plug-ins, at noise σ."""
        k, L = cfg.k, self._population(cfg, n_hat)
        pe = PrivateEvolution(
            random_api=SpherePacking(radius=1.0),
            variation_api=LevyVariation(gamma=self.gamma, beta=self.beta, per_point=L, radius=1.0),
            selector=WeightedKMeans(n_init=self.n_init),
            n_synthetic=k,
            iterations=cfg.T,
            epsilon=cfg.epsilon,
            delta=cfg.delta,
            adjacency=self.adjacency,
            random_state=rng,
            population_size=k * (L + 1),
            backend=self.backend,
            noise=self.noise,
            keep_candidates=False,
            progress=self.progress,
            checkpoint=log,
            noise_scale=sigma,
            n_private=n_hat,
        ).fit(Z)
        self.evolution_ = pe
        self.variations_ = L
        times = {
            key: sum(r.seconds[key] for r in pe.history_)
            for key in ("histogram", "selection", "variation")
        }
        return pe.synthetic_, list(pe.releases_), times

    def _population(self, cfg: _Plan, n_hat: float | None) -> int:
        """L: given, or max(⌊n/(5k)⌋, 4) with n public (replace) or the noisy count (add/remove),
        at most MAX_VARIATIONS (a noisy count at a tiny ε can be far above n)."""
        if self.population is not None:
            return int(self.population)
        n = cfg.n_public if cfg.n_public is not None else max(n_hat, 1.0)
        return min(paper_variations(int(min(n, 1e12)), cfg.k), MAX_VARIATIONS)

    def _recover_steps(self, method: str) -> int:
        """S, the recover step's noisy Lloyd steps: given, or the default (see the class doc)."""
        if self.recover_steps is not None:
            return int(self.recover_steps)
        return RECOVER_STEPS

    def _open_checkpoint(self, X: np.ndarray, cfg: _Plan):
        """The run's checkpoint log, bound to X and every parameter (a null context without one)."""
        if self.checkpoint is None:
            return contextlib.nullcontext()
        from .checkpoint import Checkpoint

        skip = ("checkpoint", "progress", "backend")
        params = {k: describe(v) for k, v in self.get_params().items() if k not in skip}
        fingerprint = {"run": type(self).__name__, "d": X.shape[1], **params}
        return Checkpoint.open(self.checkpoint, fingerprint=fingerprint, digest=data_digest(X))

    def _refined_means(self, Z: np.ndarray, cfg: _Plan, rng: np.random.Generator, log):
        """(noisy n), PE-means (on Z, or on HDPE's projection), then the recover step.

        The quadratic budget B (μ² under GDP, 2ρ under zCDP) is split: the
        noisy count, HDPE's second moment and the recover step take their
        shares, the PE rounds the rest (T rounds at one σ). With share 0 (no
        recover step) and replace adjacency this is the paper's PE-means.
        """
        budget = accounting.quadratic_budget(cfg.epsilon, cfg.delta, self.noise)
        pe_share = 1 - cfg.share - cfg.projection_share - cfg.count_share
        sensitivity = vote_sensitivity(self.adjacency)
        steps = _Steps(log, rng)
        n_hat, releases = self._noisy_n(Z, cfg, budget, steps)
        if n_hat is not None:  # a defaulted δ must stay below ñ^-1.1 (post-processing of ñ)
            try:
                accounting.check_default_delta(cfg.delta, n_hat, releases[-1].sigma)
            except ValueError:
                if self.accountant is not None:
                    self.accountant.charge(list(releases), name=type(self).__name__)
                raise
        if cfg.method == "hdpe-means":
            basis, projection_releases = self._projection(Z, cfg, budget, steps)
            releases += projection_releases
            Z_pe = Z @ basis
        else:
            basis, Z_pe = None, Z
        sigma_pe = accounting.share_sigma(budget, pe_share, sensitivity, cfg.T)
        pe_centers, pe_releases, times = self._pe_means(Z_pe, cfg, sigma_pe, n_hat, rng, log)
        releases += pe_releases
        if basis is None:
            anchors, cells = pe_centers, (pe_centers, None)
        else:
            anchors, cells = pe_centers @ basis.T, (pe_centers, Z_pe)
        if cfg.share == 0:
            return anchors, releases, times
        tic = time.perf_counter()
        each = budget * cfg.share / cfg.recover_steps
        centers, recover_releases = self._recover(Z, anchors, cells, each, steps, basis)
        for step in range(1, cfg.recover_steps):  # noisy Lloyd steps from the refined centres
            centers, more = self._recover(
                Z, centers, (centers, None), each, steps, key=f"recover_{step}", centred=True
            )
            recover_releases += more
        times["recover"] = time.perf_counter() - tic
        return centers, releases + recover_releases, times

    def _noisy_n(self, Z: np.ndarray, cfg: _Plan, budget: float, steps: "_Steps"):
        """(ñ, releases): n + noise under add/remove (``count_share`` of B); (None, []) under
        replace."""
        if cfg.count_share == 0:
            return None, []
        sigma = accounting.share_sigma(budget, cfg.count_share, 1.0)
        releases = steps.release(
            "count", lambda rng: [noisy_count(Z, sigma, rng, self.noise)], self.adjacency
        )
        return float(releases[0].value[0]), releases

    def _projection(self, Z: np.ndarray, cfg: _Plan, budget: float, steps: "_Steps"):
        """HDPE's basis (d, d'), orthonormal columns so ‖Zᵀbasis‖ ≤ 1, and its releases.

        ``"pca"``: the top d' eigenvectors of Σzzᵀ + symmetric noise with
        σ_m = Δ/√(projection_share·B), Δ = 1 (add/remove) or √2 (replace)
        (discrete noises: the lattice-rounded Δ). ``"random"``: a random
        orthonormal basis (public; logged so a resume reuses it).
        """
        d, dim = Z.shape[1], cfg.pe_dim
        if cfg.projection_share == 0:
            arrays = steps.run(
                "projection", lambda rng: {"basis": np.linalg.qr(rng.standard_normal((d, dim)))[0]}
            )
            return arrays["basis"], []
        sensitivity = second_moment_sensitivity(d, 1.0, self.adjacency, self.noise)
        sigma = accounting.share_sigma(budget, cfg.projection_share, sensitivity)
        releases = steps.release(
            "second_moment",
            lambda rng: [
                noisy_second_moment(
                    Z, sigma, rng, radius=1.0, noise=self.noise, adjacency=self.adjacency
                )
            ],
            self.adjacency,
        )
        return pca_basis(releases[0].value, dim), releases

    def _recover(
        self,
        Z,
        anchors,
        cells,
        budget: float,
        steps: "_Steps",
        basis=None,
        key="recover",
        centred=False,
    ):
        """One private Lloyd step: noisy per-cluster sums and counts, shrunk towards the anchors.

        ``cells = (centres, keys)``: row i belongs to the centre nearest to keys[i]
        (keys None: to Z[i]; HDPE passes the projected centres and rows, and its
        projection ``basis``, so the shrinkage works in span and complement apart).
        ``budget`` is the recover step's part of B.
        """
        noise = recover_noise(
            math.sqrt(budget), Z.shape[1], self.adjacency, self.noise, len(anchors)
        )
        centers, keys = cells
        rows = Z
        if centred:  # each row's offset from its anchor, in units of the anchor's radius
            radii = recover_radii(anchors)
            labels = nearest_distances(Z if keys is None else keys, centers)[1]
            rows = (Z - anchors[labels]) / radii[labels, None]
            keys = Z if keys is None else keys  # assigned by the rows, summed as offsets

        def draw(rng):
            return list(
                noisy_cluster_sums(
                    rows,
                    centers,
                    noise["sigma_sum"],
                    noise["sigma_count"],
                    rng,
                    assign_by=keys,
                    radius=1.0,
                    noise=self.noise,
                    adjacency=self.adjacency,
                )
            )

        releases = steps.release(key, draw, self.adjacency)
        sums, counts = releases[0].value, releases[1].value
        if centred:
            means = centred_means(
                sums, counts, anchors, radii, noise["sigma_sum"], noise["sigma_count"]
            )
            return means, releases
        means = shrunk_means(sums, counts, anchors, noise["sigma_sum"], noise["sigma_count"], basis)
        return means, releases

    def _set_fit_outputs(self, X, cfg, releases, domain: Domain) -> None:
        self.labels_, self.inertia_ = labels_and_inertia(X, self.cluster_centers_)
        self.n_iter_ = cfg.T
        self.method_ = cfg.method
        self.delta_ = cfg.delta
        size = (
            {"n_samples": cfg.n_public}
            if cfg.n_public is not None
            else {"n_estimate": self.evolution_.n_private}
        )  # under add/remove only the noisy count
        report = privacy_report(
            epsilon_target=cfg.epsilon,
            delta=cfg.delta,
            adjacency=self.adjacency,
            releases=releases,
            noise=self.noise,
            mechanism=f"{cfg.method}: noisy nearest-neighbour vote histograms"
            + (" + noisy cluster sums and counts" if cfg.share > 0 else "")
            + (" + noisy second moment" if cfg.projection_share > 0 else "")
            + (" + noisy row count" if cfg.count_share > 0 else ""),
            public_parameters={
                **size,
                "n_features": X.shape[1],
                "n_clusters": cfg.k,
                "iterations": cfg.T,
                "variations": self.variations_,
                "projection_dim": cfg.pe_dim,
                "center": domain.center,
                "radius": domain.radius,
                "bounds": None if domain.box is None or domain.leaked else list(domain.box),
                "gamma": self.gamma,
                "beta": self.beta,
                "recover_share": cfg.share,
                "recover_steps": cfg.recover_steps,
                "projection": self.projection if cfg.method == "hdpe-means" else None,
                "projection_share": cfg.projection_share,
                "count_share": cfg.count_share,
                "seeded": self.random_state is not None,
            },
            warnings=[LEAK_NOTE] if domain.leaked else [],
            guarantee_holds=not domain.leaked,
        )
        report["evaluation"] = (
            EVALUATION_NOTE  # labels_/inertia_: read off the private rows, not DP
        )
        self.privacy_report_ = with_seed_warning(report, self.random_state)


class _Steps:
    """DPKMeans' own steps (count, projection, second moment, recover) through the checkpoint log.

    ``run(key, draw)`` replays step ``key`` from the log (its arrays, and the
    RNG put where the step left it) or draws it with ``draw(rng)`` and logs it
    before it is used: a release is made at most once per run.
    """

    def __init__(self, log, rng: np.random.Generator):
        self.log, self.rng = log, rng

    def release(self, key: str, draw, adjacency: str) -> list[Release]:
        """``run`` for a step whose ``draw(rng)`` returns :class:`Release` objects (logged with
        their entries)."""
        made: list[Release] = []

        def arrays(rng) -> dict:
            made.extend(draw(rng))
            return {str(i): np.asarray(r.value) for i, r in enumerate(made)}

        logged = self.run(key, arrays, meta=lambda: {"releases": [r.entry() for r in made]})
        if made:
            return made
        entries = self.log.find(key).meta["releases"]
        return [Release.from_entry(e, adjacency, logged[str(i)]) for i, e in enumerate(entries)]

    def run(self, key: str, draw, meta=dict) -> dict:
        from .checkpoint import Record, rng_state, set_rng_state

        record = None if self.log is None else self.log.find(key)
        if record is not None:
            set_rng_state(self.rng, record.rng)
            return record.arrays
        arrays = draw(self.rng)
        if self.log is not None:
            self.log.append(Record(key, meta(), arrays, rng_state(self.rng)))
        return arrays


# -- helpers ---------------------------------------------------------------

_BAD_X = "X must be a real-valued numeric 2-D array (rows x features)"


def _without_array(error: Exception) -> str:
    """An error's message without the input it prints: ``array=[...]`` (its cells, over
    several lines for a long array) and ``shape=(...)`` (it holds n)."""
    text = re.sub(r"array=.*\]\.?", "", str(error), flags=re.S)
    text = re.sub(r"\s*\(?shape=\([^)]*\)\)?", "", text)
    return " ".join(text.split()) or _BAD_X


def in_domain(domain: Domain, unit_centers: np.ndarray) -> np.ndarray:
    """Centres c + R·u mapped back from the unit ball and kept in the public domain: onto the
    ball, then into the box when one was declared (post-processing; the box lies in the ball)."""
    centers = clip_to_ball(
        domain.center + domain.radius * unit_centers, domain.radius, domain.center
    )
    return centers if domain.box is None else np.clip(centers, domain.box[0], domain.box[1])


def _check_enough_rows(n: int) -> None:
    """Refuse X with fewer than 2 rows, without saying how many (n is private under add/remove;
    scikit-learn's estimator checks look for "one sample")."""
    if n < 2:
        raise ValueError(
            "X has fewer than 2 samples (one sample or none); DPKMeans needs n_samples >= 2: "
            "add rows"
        )


def _recover_share(share, method: str) -> float:
    """recover_share ∈ [0, 1) for PE-means, (0, 1) for HDPE-means (its recover step is the
    output)."""
    if share is None:
        return HDPE_RECOVER_SHARE if method == "hdpe-means" else PE_MEANS_RECOVER_SHARE
    if share == 0 and method == "hdpe-means":
        raise ValueError(
            "recover_share must be in (0, 1) for HDPE-means (its recover step is its output), got 0"
        )
    return float(share)


def pca_basis(moment: np.ndarray, dim: int) -> np.ndarray:
    """The eigenvectors of the ``dim`` largest eigenvalues of a symmetric (d, d) matrix, as
    columns."""
    values, vectors = np.linalg.eigh(moment)
    return vectors[:, np.argsort(values)[::-1][:dim]]


def recover_noise(
    mu: float, dim: int, adjacency: str = "add_remove", noise: str = "gaussian", n_clusters: int = 1
) -> dict:
    """σ's of the recover step's two releases so that together they spend μ² of the budget.

    μ² (or 2ρ under zCDP) is split between the sums and the counts as √d : 1,
    which minimises the bound σ_s√d + ‖m‖σ_c on a cluster mean's error
    (‖m‖ ≤ 1). L2 sensitivities: sums 1 (add/remove) or 2 (replace), counts 1
    or √2; with discrete noise the sums are lattice-rounded (k·d values) and
    their sensitivity grows by γ√(kd) (:func:`privevo.private.lattice_sensitivity`).
    """
    count_sensitivity = vote_sensitivity(adjacency)
    sum_sensitivity = cluster_sums_sensitivity(1.0, adjacency, noise, n_clusters * dim)
    root = math.sqrt(dim)
    budget = mu * mu
    return {
        "sigma_sum": accounting.share_sigma(budget, root / (root + 1), sum_sensitivity),
        "sigma_count": accounting.share_sigma(budget, 1 / (root + 1), count_sensitivity),
        "sum_sensitivity": sum_sensitivity,
        "count_sensitivity": count_sensitivity,
    }


def shrunk_means(
    sums, counts, anchors, sigma_sum: float, sigma_count: float, basis=None
) -> np.ndarray:
    """Noisy cluster means shrunk towards public anchors (empirical Bayes; post-processing only).

    For cluster j with noisy sum ŝ_j and count ĉ_j, the mean m̂_j = ŝ_j/ĉ_j has
    squared error v_j ≈ (d·σ_s² + ‖m̂_j‖²·σ_c²)/ĉ_j². The anchor a_j's squared
    bias is estimated by b_j² = max(‖m̂_j − a_j‖² − v_j, 0), and the centre is
    the James–Stein-type blend a_j + b_j²/(b_j² + v_j)·(m̂_j − a_j). With an
    orthonormal ``basis`` (d, d') the blend is done apart in its span and in
    the orthogonal complement (d' and d − d' of the d noise dimensions), so
    anchors that are good in a subspace only (HDPE's lifted centres) keep that
    part. Results are projected into the unit ball, so exactly k centres
    always come back.

    A cluster whose noisy count is at most max(σ_s·√d, 1) has no mean of its
    own: its centre is its anchor scaled towards the public centre (the origin
    of the unit ball) by its own released sum, α_j·a_j (:func:`anchor_scales`),
    so that where that sum says the anchor explains nothing the centre falls
    back on the public centre instead of on an anchor the noise placed. Each
    cluster is judged on its own releases: a weak but real cluster (its sum
    along its anchor above the noise) keeps its anchor whatever the others do.
    """
    d = sums.shape[1]
    trusted = counts > max(sigma_sum * math.sqrt(d), 1.0)
    scales = np.where(trusted, 1.0, anchor_scales(sums, counts, anchors, sigma_sum))
    anchors = scales[:, None] * anchors
    safe = np.where(trusted, counts, 1.0)
    means = sums / safe[:, None]
    parts = [(means, anchors, d)] if basis is None else _split(means, anchors, basis)
    out = np.zeros_like(anchors)
    for mean, anchor, dim in parts:
        var = (dim * sigma_sum**2 + np.einsum("ij,ij->i", mean, mean) * sigma_count**2) / safe**2
        gap = mean - anchor
        bias2 = np.maximum(np.einsum("ij,ij->i", gap, gap) - var, 0.0)
        out += anchor + np.where(trusted, bias2 / (bias2 + var), 0.0)[:, None] * gap
    return project_to_ball(out, 1.0)


def anchor_scales(sums, counts, anchors, sigma_sum: float) -> np.ndarray:
    """α_j ∈ [0, 1]: how far anchor a_j stands from the public centre, by cluster j's release.

    Derivation. With the true sum s_j = n_j·m_j, the scale that minimises
    cluster j's k-means cost against its true mean, n_j‖m_j − α·a_j‖², is
    α_j* = ⟨s_j, a_j⟩ / (n_j‖a_j‖²). The anchor is fixed before the recover
    step's noise is drawn, so N_j = ⟨ŝ_j, a_j⟩ estimates the numerator without
    bias, with variance V_j = σ_s²‖a_j‖² — one coordinate's noise, where the
    mean ŝ_j/ĉ_j carries d: the sum along the anchor can show a cluster whose
    count is still within the noise. N_j is shrunk James–Stein-like by its
    noise-to-signal ratio, N_j·(1 − V_j/N_j²)₊ (the positive-part factor of a
    one-dimensional estimate), and α_j = clip(N_j·(1 − V_j/N_j²)₊ / D_j, 0, 1)
    with D_j = max(ĉ_j, 0)·‖a_j‖². An anchor that explains its sum gives α_j ≈ 1;
    one placed by noise, or a sum drowned in noise (small data at small ε),
    gives α_j ≈ 0: the public centre, the data-independent answer.
    Post-processing of released values only.
    """
    weights = np.maximum(np.asarray(counts, dtype=np.float64), 0.0)
    norms = np.einsum("ij,ij->i", anchors, anchors)
    numerator = np.einsum("ij,ij->i", sums, anchors)
    denominator = weights * norms
    usable = (numerator > 0) & (denominator > 0)
    safe = np.where(usable, numerator, 1.0)
    shrunk = safe * np.maximum(1.0 - sigma_sum**2 * norms / safe**2, 0.0)
    return np.where(usable, np.minimum(shrunk / np.where(usable, denominator, 1.0), 1.0), 0.0)


def recover_radii(anchors: np.ndarray) -> np.ndarray:
    """r_j = min(RECOVER_RADIUS·D_j, 2), D_j the distance from anchor j to its nearest other
    anchor (public: the anchors are released values)."""
    k = len(anchors)
    if k < 2:
        return np.full(k, 2.0)
    sq = np.einsum("ij,ij->i", anchors, anchors)
    d2 = sq[:, None] - 2.0 * anchors @ anchors.T + sq[None, :]
    np.fill_diagonal(d2, np.inf)
    nearest = np.sqrt(np.maximum(d2.min(axis=1), 0.0))
    return np.clip(RECOVER_RADIUS * nearest, 1e-6, 2.0)


def centred_means(sums, counts, anchors, radii, sigma_sum: float, sigma_count: float):
    """a_j + r_j·λ_j·ŝ_j/ĉ_j from noisy sums of offsets (x − a_j)/r_j clipped to the unit ball.

    The offset mean u_j = ŝ_j/ĉ_j has squared error v_j ≈ (d·σ_s² + ‖u_j‖²·σ_c²)/ĉ_j²;
    λ_j = b_j²/(b_j² + v_j) with b_j² = max(‖u_j‖² − v_j, 0) (the empirical-Bayes
    blend of :func:`shrunk_means`, towards the anchor). A cluster whose noisy
    count is at most max(σ_s·√d, 1) keeps its anchor.
    """
    d = sums.shape[1]
    trusted = counts > max(sigma_sum * math.sqrt(d), 1.0)
    safe = np.where(trusted, counts, 1.0)
    offsets = sums / safe[:, None]
    norm2 = np.einsum("ij,ij->i", offsets, offsets)
    var = (d * sigma_sum**2 + norm2 * sigma_count**2) / safe**2
    bias2 = np.maximum(norm2 - var, 0.0)
    weight = np.where(trusted, bias2 / np.maximum(bias2 + var, 1e-300), 0.0)
    return project_to_ball(anchors + (radii * weight)[:, None] * offsets, 1.0)


def _split(means, anchors, basis):
    """(mean, anchor, noise dimensions) in span(basis) and in its orthogonal complement."""
    m_in, a_in = (means @ basis) @ basis.T, (anchors @ basis) @ basis.T
    d, d_in = anchors.shape[1], basis.shape[1]
    return [(m_in, a_in, d_in)] + ([(means - m_in, anchors - a_in, d - d_in)] if d_in < d else [])
