"""DPKMeans, the scikit-learn estimator: parameters, checks, the fit's outline and its report.

The plan is :mod:`.plan`, the releases :mod:`.rounds`, the recover maths
:mod:`.recover` (the package docstring describes the method).
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClusterMixin, TransformerMixin
from sklearn.utils.validation import _num_samples, check_is_fitted

from .. import accounting
from .._params import describe
from .._validation import (
    MAX_ROUNDS,
    RUN_CONSTRAINTS,
    Interval,
    StrOptions,
    check_points,
    check_random_state,
    validate_params,
)
from ..metrics import labels_and_inertia, nearest_distances
from ..names import COUNT_SHARE
from ..private import (
    CACHE_MIB,
    NOISES,
    Domain,
    backend_session,
    data_digest,
    is_lazy,
    lazy_input,
    public_domain,
    row_blocks,
    row_count,
    row_dim,
    scaled_domain,
    unit_rows,
)
from ..report import with_seed_warning
from .plan import METHODS, PROJECTIONS, Plan, resolve_plan
from .recover import in_domain
from .reporting import fit_report
from .rounds import PEMeansRun

try:  # scikit-learn >= 1.6
    from sklearn.utils.validation import validate_data as _validate_data
except ImportError:  # pragma: no cover

    def _validate_data(estimator, X, reset=True, **kwargs):
        return estimator._validate_data(X, reset=reset, **kwargs)


__all__ = ["DPKMeans", "UNITS"]

UNITS = ("data", "scaled")


_SPARSE = "DPKMeans does not accept sparse X; pass a dense array (X.toarray())"


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
    units : {"data", "scaled"}, default="data"
        Where distances are measured (docs/kmeans.md, "Units"). ``"data"``: the data's own
        units (the domain is mapped into the unit ball by one scale, so wide columns weigh
        most). ``"scaled"``: each column's ``bounds`` interval mapped to [−1, 1] first, so
        every column weighs alike; needs ``bounds``. Centres come back in data units.
    count_share : float, default=0.02
        Under add/remove adjacency, the share of the budget spent on a noisy
        count of the rows, from which the population size and PE-means'
        count threshold are set (the exact n is private there and never used).
    cache_mib : float, default=256
        Memory (MiB) a fit on a Parquet or ``.npy`` source (or a Dask collection read on the
        caller) may spend keeping its blocks mapped into the unit ball, first come, so the
        later passes (each PE round and recover step reads every row) skip reading and
        mapping them again (docs/kmeans.md, "Data larger than memory"). A public setting,
        never sized from the data; 0 reads every block again on every pass. The centres
        and the report do not depend on it.

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
        **RUN_CONSTRAINTS,
        "delta": [*RUN_CONSTRAINTS["delta"], None],
        "radius": [Interval(Real, 0, None, closed="neither"), None],
        "center": ["array-like", Real, None],
        "bounds": [tuple, list, None],
        "method": [StrOptions(set(METHODS))],
        "iterations": [Interval(Integral, 1, MAX_ROUNDS, closed="both"), None],
        "population": [Interval(Integral, 1, None, closed="left"), None],
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
        "units": [StrOptions(set(UNITS))],
        "cache_mib": [Interval(Real, 0, None, closed="left")],
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
        count_share: float = COUNT_SHARE,
        accountant=None,
        units: str = "data",
        cache_mib: float = CACHE_MIB,
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
        self.units = units
        self.cache_mib = cache_mib

    # -- scikit-learn API --------------------------------------------------

    def fit(self, X, y=None, *, columns=None) -> "DPKMeans":
        """Compute DP centres of ``X`` (n, d).

        ``X``: an array; or data larger than memory, read block by block and never whole
        (docs/kmeans.md, "Data larger than memory"): a path to a Parquet file or folder
        (``columns``: its numeric feature columns, by name) or to a ``.npy`` file or folder,
        a :class:`~privevo.private.BlockSource`, a Dask array or a Dask DataFrame. Every
        input gives the same releases in the same order, hence the same centres and report
        for the same seed. A streamed ``X`` needs a public ``radius`` or ``bounds``.
        """
        tic = time.perf_counter()
        self._validate_params()  # the declared constraints, before the data is read
        lazy = lazy_input(X, columns, self.backend)
        # the budget is checked before any cell of X is read: δ is the given one, the fixed
        # add/remove default, or under replace n^-1.1 with the public n (X's length only)
        delta = self._public_delta(X if lazy is None else lazy)
        self._check_budget(delta)
        if lazy is None:
            X = self._check_X(X, reset=True)
        else:
            X = self._check_stream(lazy)
        cfg = resolve_plan(self, row_count(X), row_dim(X), delta)
        domain = self._domain(X, lazy is not None)
        Z = unit_rows(X, domain, int(self.cache_mib * 2**20))
        rng = check_random_state(self.random_state)
        with self._open_checkpoint(X, cfg) as log, backend_session(self.backend):
            run = PEMeansRun(self, cfg, rng, log)
            unit_centers, releases, times = run.refined_means(Z)
        self.evolution_, self.variations_ = run.evolution, run.variations
        self.cluster_centers_ = in_domain(domain, unit_centers)
        self._set_fit_outputs(X, cfg, releases, domain, run.low_signal)
        self.timings_ = {**times, "total": time.perf_counter() - tic}
        if self.accountant is not None:
            self.accountant.charge(self.privacy_report_, name=type(self).__name__)
        return self

    def _check_stream(self, rows):
        """A streamed X: at least 2 rows (n is never printed), its d recorded."""
        _check_enough_rows(row_count(rows))
        self.n_features_in_ = row_dim(rows)
        if hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        return rows

    def _domain(self, X, streamed: bool) -> Domain:
        """The public domain (in scaled units with ``units="scaled"``)."""
        domain = self._data_domain(X, streamed)
        return scaled_domain(domain) if self.units == "scaled" else domain

    def _data_domain(self, X, streamed: bool) -> Domain:
        """The public domain; a streamed X is never scanned for its range, so it needs one."""
        if not streamed:
            hint = getattr(self, "_domain_hint", "radius= or bounds=")  # the CLI names its flags
            return public_domain(
                X, radius=self.radius, center=self.center, bounds=self.bounds, hint=hint
            )
        if self.radius is None and self.bounds is None:
            raise ValueError(NO_STREAMED_DOMAIN)
        empty = np.empty((0, row_dim(X)))
        return public_domain(empty, radius=self.radius, center=self.center, bounds=self.bounds)

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
            raise TypeError(_SPARSE)
        try:
            n = _num_samples(X) if isinstance(X, np.ndarray) or not is_lazy(X) else row_count(X)
        except TypeError:
            raise ValueError(_BAD_X) from None
        _check_enough_rows(n)
        return accounting.run_default_delta(self.adjacency, n)

    def _check_budget(self, delta: float) -> None:
        """Refuse the fit if the ``accountant``'s budget cannot pay for (ε, δ)."""
        if self.accountant is not None:
            self.accountant.check(epsilon=self.epsilon, delta=delta, name=type(self).__name__)

    def predict(self, X, *, columns=None) -> np.ndarray:
        """Index of the nearest DP centre of each row (``X`` as in :meth:`fit`, read in blocks)."""
        parts = [nearest_distances(b, self.cluster_centers_)[1] for b in self._blocks(X, columns)]
        return np.concatenate(parts)

    def transform(self, X, *, columns=None) -> np.ndarray:
        """Euclidean distances to the DP centres, (n, k) (``X`` as in :meth:`fit`)."""
        return np.concatenate([self._distances(b) for b in self._blocks(X, columns)])

    def score(self, X, y=None, *, columns=None) -> float:
        """Opposite of the k-means objective Σ_x min_c ‖x − c‖² on ``X`` (summed block by
        block)."""
        total = sum(
            float(nearest_distances(b, self.cluster_centers_)[0].sum())
            for b in self._blocks(X, columns)
        )
        return -total

    def _distances(self, X: np.ndarray) -> np.ndarray:
        c = self.cluster_centers_
        d2 = (
            np.einsum("ij,ij->i", X, X)[:, None]
            - 2.0 * X @ c.T
            + np.einsum("ij,ij->i", c, c)[None, :]
        )
        return np.sqrt(np.maximum(d2, 0.0))

    def _blocks(self, X, columns):
        """``X``'s rows as checked float64 blocks: an array whole, a stream block by block."""
        lazy = lazy_input(X, columns, self.backend)
        if lazy is None:
            yield self._check_X(X)
            return
        check_is_fitted(self, "cluster_centers_")
        if row_dim(lazy) != self.n_features_in_:
            raise ValueError(
                f"X has {row_dim(lazy)} features, but DPKMeans is expecting "
                f"{self.n_features_in_} features as input"
            )
        for block in row_blocks(lazy):
            yield check_points(np.asarray(block, dtype=np.float64), "X")

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = self.random_state is None
        return tags

    # -- input and parameter checks -----------------------------------------

    def _check_X(self, X, reset: bool = False) -> np.ndarray:
        if not reset:
            check_is_fitted(self, "cluster_centers_")
        if sp.issparse(X):
            raise TypeError(_SPARSE)
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

    def _open_checkpoint(self, X: np.ndarray, cfg: Plan):
        """The run's checkpoint log, bound to X and every parameter (a null context without one)."""
        if self.checkpoint is None:
            return contextlib.nullcontext()
        from ..checkpoint import Checkpoint

        skip = ("checkpoint", "progress", "backend", "cache_mib")
        params = {k: describe(v) for k, v in self.get_params().items() if k not in skip}
        fingerprint = {"run": type(self).__name__, "d": row_dim(X), **params}
        return Checkpoint.open(self.checkpoint, fingerprint=fingerprint, digest=data_digest(X))

    def _set_fit_outputs(self, X, cfg, releases, domain: Domain, low_signal) -> None:
        if isinstance(X, np.ndarray):  # a streamed X has no n labels in memory: use predict
            self.labels_, self.inertia_ = labels_and_inertia(X, self.cluster_centers_)
        self.n_iter_ = cfg.T
        self.method_ = cfg.method
        self.delta_ = cfg.delta
        self.low_signal_clusters_ = [int(j) for j in low_signal]
        report = fit_report(self, row_dim(X), cfg, releases, domain, self.low_signal_clusters_)
        self.privacy_report_ = with_seed_warning(report, self.random_state)


# -- helpers ---------------------------------------------------------------

NO_STREAMED_DOMAIN = (
    "a streamed X (a path, block source or Dask collection) is never scanned for its range: "
    "pass a public radius= or bounds="
)
_BAD_X = "X must be a real-valued numeric 2-D array (rows x features)"


def _without_array(error: Exception) -> str:
    """An error's message without the input it prints: ``array=[...]`` (its cells, over
    several lines for a long array) and ``shape=(...)`` (it holds n)."""
    text = re.sub(r"array=.*\]\.?", "", str(error), flags=re.S)
    text = re.sub(r"\s*\(?shape=\([^)]*\)\)?", "", text)
    return " ".join(text.split()) or _BAD_X


def _check_enough_rows(n: int) -> None:
    """Refuse X with fewer than 2 rows, without saying how many (n is private under add/remove;
    scikit-learn's estimator checks look for "one sample")."""
    if n < 2:
        raise ValueError(
            "X has fewer than 2 samples (one sample or none); DPKMeans needs n_samples >= 2: "
            "add rows"
        )
