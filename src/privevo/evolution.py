"""The one Private Evolution loop (Lin et al., ICLR 2024; layers in docs/architecture.md).

::

    S_0 = RandomAPI(population)                          # public
    for t = 1..T:
        noisy  = NN_histogram(X, S_{t-1}) + N(0, σ²I)    # the only private access
        chosen = Select(S_{t-1}, noisy, m)               # post-processing
        S_t    = chosen ∪ VariationAPI(chosen)           # post-processing
    return chosen

σ is calibrated so that the T releases are (ε, δ)-DP together
(:func:`privevo.accounting.gaussian_sigma`). PE-means, GAPE and text PE are
this loop with different plug-ins.
"""

from __future__ import annotations

import math
import os
import time
import warnings
from numbers import Integral, Real
from typing import Callable, Sequence

import numpy as np

from . import accounting
from ._params import constructor_params
from ._validation import (
    EPSILON_OR_INF,
    ROUNDS,
    RUN_CONSTRAINTS,
    HasMethods,
    Interval,
    StrOptions,
    check_points,
    check_positive_int,
    check_random_state,
    check_same_dimension,
    validate_params,
)
from .checkpoint import replay_or_draw, replay_or_release, run_fingerprint, set_rng_state
from .exceptions import PrivacyLeakWarning
from .private import (
    METRICS,
    NOISES,
    Release,
    backend_session,
    data_digest,
    exact_nn_histogram,
    lazy_rows,
    noisy_nn_histogram,
    privacy_unit,
    vote_sensitivity,
)
from .protocols import CheckpointedAPI, RandomAPI, SelectionVariationAPI, VariationAPI
from .report import (
    group_releases,
    non_private_report,
    privacy_report,
    with_seed_warning,
)
from .rounds import (
    EvolutionState,
    IterationRecord,
    ReleaseEvent,
    history_entry,
    round_record,
    selection_of,
)
from .selection import Selection, SelectionContext, Selector

__all__ = ["PrivateEvolution", "IterationRecord", "EvolutionState", "ReleaseEvent"]

_HOOKS = ("callbacks", "on_release", "on_round_start")  # run-time observers, not run parameters


class PrivateEvolution:
    """Differentially private synthetic points by Private Evolution.

    Parameters
    ----------
    random_api : object with ``sample(n, dim, rng)``, or an array (p, d) of initial points
    variation_api : object with ``vary(points, rng, per_point=None)`` and ``per_point``;
        or with ``vary_selection(selection, rng)``, which receives the whole
        :class:`~privevo.selection.Selection` (its candidate ``indices`` too) so
        an API that keeps objects aligned with the rows (texts) can map the
        selected rows back to them; the next population is
        ``[selection.points; variations]`` either way
    selector : object with ``select(candidates, noisy_counts, context)``
    n_synthetic : m, points selected per round (and returned)
    iterations : T, the number of private releases
    epsilon, delta : the (ε, δ) budget of the whole run; ``epsilon=math.inf`` runs
        the same loop on exact counts (a non-private reference run, σ = 0): it
        warns with :class:`PrivacyLeakWarning` and its report has
        ``epsilon=None`` and ``guarantee_holds=False``
    adjacency : ``"add_remove"`` (sensitivity 1) or ``"replace"`` (√2)
    population_size : size of S_0 (default m·(1 + variation_api.per_point))
    metric, backend, noise : passed to :func:`privevo.private.noisy_nn_histogram`
    callbacks : functions called with each :class:`IterationRecord`, after its round
    on_release : functions called with a :class:`ReleaseEvent` for each round's release, before
        anything uses it (the checkpoint log is written at the same point)
    on_round_start : functions called with ``(t, T)`` as round t (0-based) starts
    keep_selected : the next population is [selection; variations] (True, the paper's
        loop) or the variations only (False, Aug-PE's option)
    name : the estimator's name in messages (default: the class name); a modality that
        composes this engine passes its own
    keep_candidates : store every round's candidates in ``history_``
    progress : show a progress bar
    random_state : None, int or ``numpy.random.Generator``; seeds every draw
    checkpoint : path of a checkpoint file (:mod:`privevo.checkpoint`): an
        append-only log, one record per round; if it exists, ``fit`` resumes
        after its last round, after checking that it belongs to the same run
        (every parameter) on the same data (a digest kept inside it)
    noise_scale : σ of every round when a caller calibrates it from a larger
        budget (DPKMeans); None: calibrated from (epsilon, delta, iterations)
    n_neighbors : k; each private row gives 1/√k to each of its k nearest
        candidates (L2 sensitivity unchanged)
    accountant : :class:`privevo.BudgetAccountant` or None; the fit is refused
        before the data is read if it would exceed its budget, and charged after
    n_private : n for selectors that need it (PE-means' count threshold), a
        public value or a noisy count; None: the exact n under ``"replace"``
        adjacency (public there), nothing under ``"add_remove"`` (the selector
        then uses the noisy counts' total)

    Attributes
    ----------
    synthetic_ : (m', d) the last selection
    history_ : list of :class:`IterationRecord`
    releases_ : the append-only ledger of every :class:`~privevo.private.Release` drawn (the
    report's input)
    privacy_report_ : dict (see :mod:`privevo.report`)
    sigma_ : noise standard deviation of every round
    """

    _parameter_constraints: dict = {
        "random_api": [RandomAPI, "array-like"],
        "variation_api": [VariationAPI, SelectionVariationAPI],
        "selector": [Selector],
        "n_synthetic": [Interval(Integral, 1, None, closed="left")],
        "iterations": ROUNDS,
        **RUN_CONSTRAINTS,
        "epsilon": EPSILON_OR_INF,
        "population_size": [Interval(Integral, 1, None, closed="left"), None],
        "metric": [StrOptions(set(METRICS))],
        "backend": [str],
        "noise": [StrOptions(set(NOISES))],
        "callbacks": [list, tuple],
        "on_release": [list, tuple],
        "on_round_start": [list, tuple],
        "keep_selected": ["boolean"],
        "name": [str, None],
        "keep_candidates": ["boolean"],
        "progress": ["boolean"],
        "public_parameters": [dict, None],
        "checkpoint": [str, os.PathLike, HasMethods(("find", "append")), None],
        "noise_scale": [Interval(Real, 0, None, closed="neither"), None],
        "n_private": [Real, None],
        "n_neighbors": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(
        self,
        random_api,
        variation_api,
        selector,
        n_synthetic: int,
        iterations: int,
        epsilon: float,
        delta: float,
        adjacency: str = "add_remove",
        random_state=None,
        *,
        population_size: int | None = None,
        metric: str = "euclidean",
        backend: str = "auto",
        noise: str = "gaussian",
        callbacks: Sequence[Callable[[IterationRecord], None]] = (),
        on_release: Sequence[Callable[[ReleaseEvent], None]] = (),
        on_round_start: Sequence[Callable[[int, int], None]] = (),
        keep_selected: bool = True,
        name: str | None = None,
        keep_candidates: bool = True,
        progress: bool = False,
        public_parameters: dict | None = None,
        checkpoint: str | os.PathLike | None = None,
        noise_scale: float | None = None,
        n_private: float | None = None,
        n_neighbors: int = 1,
        accountant=None,
    ):
        self.random_api = random_api
        self.variation_api = variation_api
        self.selector = selector
        self.n_synthetic = n_synthetic
        self.iterations = iterations
        self.epsilon = epsilon
        self.delta = delta
        self.adjacency = adjacency
        self.random_state = random_state
        self.population_size = population_size
        self.metric = metric
        self.backend = backend
        self.noise = noise
        self.callbacks = callbacks
        self.on_release = on_release
        self.on_round_start = on_round_start
        self.keep_selected = keep_selected
        self.name = name
        self.keep_candidates = keep_candidates
        self.progress = progress
        self.public_parameters = public_parameters
        self.checkpoint = checkpoint
        self.noise_scale = noise_scale
        self.n_private = n_private
        self.n_neighbors = n_neighbors
        self.accountant = accountant

    # -- public API -------------------------------------------------------

    def fit(self, X, y=None, groups=None) -> "PrivateEvolution":
        """Run T rounds against the private data ``X`` (n, d); a new run (a new ledger).

        ``groups``: a user id per row (private, never stored): each user's votes
        are scaled to L2 norm ≤ 1, so the guarantee protects users, not rows.
        """
        self.check_params()
        self.history_: list[IterationRecord] = []
        self.releases_: list[Release] = []
        self._check_budget(self.iterations)  # before the data is read
        X = _private_view(X)
        self._groups = self._checked_groups(groups)
        self._unit = privacy_unit(groups)
        self.resumed_from_ = 0
        if self.checkpoint is None:
            return self._run(X, self.initial_state(X.shape[1], self._rng()), None)
        log, owned = self._open_checkpoint(X)
        try:
            state = self._replay(X, log)
            return self._run(X, state, log)
        finally:
            if owned:
                log.close()

    def resume(self, X, state: EvolutionState, groups=None) -> "PrivateEvolution":
        """Continue from ``state`` (rounds ``state.completed + 1 … T``) and finish.

        Every round run here is a new release, appended to the ledger
        ``releases_`` and counted in the report, also after an earlier ``fit``.
        """
        if not hasattr(self, "sigma_"):
            self.check_params()
        unit = privacy_unit(groups)
        if getattr(self, "releases_", None) and getattr(self, "_unit", unit) != unit:
            raise ValueError(
                f"this run's earlier rounds protect a {self._unit}, these would protect a "
                f"{unit}: one run has one privacy unit (pass groups to every call, or to none)"
            )
        self._check_budget(self.iterations - state.completed)  # before the data is read
        X = _private_view(X)
        self._groups = self._checked_groups(groups)
        self._unit = unit
        return self._run(X, state, None)

    def initial_state(self, dim: int, rng: np.random.Generator) -> EvolutionState:
        """S_0 from the random API (or the given initial array): public, data-free."""
        if isinstance(self.random_api, RandomAPI):
            population = self.random_api.sample(self._population_size(), dim, rng)
        else:
            population = check_points(self.random_api, "random_api (initial points)")
            check_same_dimension(population.shape[1], dim, "initial points")
        return EvolutionState(0, np.asarray(population, dtype=np.float64), None, rng)

    def step(self, X, state: EvolutionState) -> tuple[IterationRecord, EvolutionState]:
        """One round: private release, selection, variation. The release enters ``releases_``."""
        t, rng, candidates = state.completed, state.rng, state.population
        tic = time.perf_counter()
        release = self._release(X, candidates, rng, t)
        self.releases_.append(release)
        noisy = release.value
        if t == 0:
            self._check_default_delta(noisy)
        tac = time.perf_counter()
        context = SelectionContext(
            self.sigma_, t, self.iterations, self.n_synthetic, self._n_for_selector(X), rng
        )
        selection = self.selector.select(candidates, noisy, context)
        toc = time.perf_counter()
        last = t + 1 == self.iterations
        population = candidates if last else self._next_population(selection, rng)
        record = IterationRecord(
            iteration=t,
            candidates=candidates if self.keep_candidates else None,
            noisy_counts=noisy,
            selected=selection.indices,
            selected_points=selection.points,
            sigma=self.sigma_,
            info=selection.info,
            seconds={
                "histogram": tac - tic,
                "selection": toc - tac,
                "variation": time.perf_counter() - toc,
            },
        )
        return record, EvolutionState(t + 1, population, selection, rng)

    def check_params(self) -> "PrivateEvolution":
        """Check every parameter against its declared constraints
        (:func:`privevo._validation.validate_params`) and calibrate σ, before any data is read."""
        validate_params(self._parameter_constraints, constructor_params(self), self._name())
        self.sensitivity_ = vote_sensitivity(self.adjacency)
        self.sigma_ = self._sigma()
        return self

    # -- internals --------------------------------------------------------

    def _run(self, X, state: EvolutionState, log) -> "PrivateEvolution":
        check_same_dimension(state.population.shape[1], X.shape[1], "population")
        if not hasattr(self, "history_"):
            self.history_, self.releases_ = [], []
        self._log = log
        try:
            with backend_session(self.backend):  # backend="dask": one cluster for all rounds
                for t in self._rounds(state.completed):
                    for hook in self.on_round_start:
                        hook(t, self.iterations)
                    record, state = self.step(X, state)
                    self.history_.append(record)
                    if log is not None:
                        api_state = self._api_state()
                        log.append(round_record(record, state, self.releases_[-1], api_state))
                    for callback in self.callbacks:
                        callback(record)
        finally:
            self._log = None
        return self._finish(state)

    def _name(self) -> str:
        return self.name or type(self).__name__

    def _release(self, X, candidates: np.ndarray, rng: np.random.Generator, t: int) -> Release:
        """Round t's release, replayed from the checkpoint or drawn and logged
        (:func:`privevo.checkpoint.replay_or_release`), then shown to the ``on_release`` hooks:
        a run cut off after a release (e.g. during text generation) replays it on resume, so
        no selection of one round is ever made from two draws."""
        log = getattr(self, "_log", None)
        replayed = log is not None and log.find(f"release/{t}") is not None
        (release,) = replay_or_release(
            log,
            f"release/{t}",
            rng,
            lambda rng: [self._histogram(X, candidates, rng)],
            self.adjacency,
        )
        for hook in self.on_release:
            hook(ReleaseEvent(t, release, replayed))
        return release

    def _sigma(self) -> float:
        """σ of every round; 0 for ``epsilon=inf`` (a non-private run, warned and reported as
        such)."""
        if self.epsilon == math.inf:
            warnings.warn(
                "epsilon=inf: a non-private run (exact vote counts, no noise); its output is not "
                "differentially private",
                PrivacyLeakWarning,
                stacklevel=4,
            )
            return 0.0
        if self.noise_scale is not None:  # calibrated by a caller that splits a larger budget
            return float(self.noise_scale)
        return accounting.calibrate(
            self.epsilon, self.delta, self.iterations, self.sensitivity_, self.noise
        )

    def _check_budget(self, rounds: int) -> None:
        """Refuse, before any data access, a fit whose real cost would exceed the accountant.

        The cost is what :meth:`_finish` charges: the ledger so far plus ``rounds``
        releases at the σ actually used (``noise_scale`` included), μ = √T·Δ/σ or
        ρ = T·Δ²/(2σ²) (docs/privacy.md).
        """
        if self.accountant is None:
            return
        name = self._name()
        if self.sigma_ == 0.0:  # epsilon=inf: the accountant refuses it
            self.accountant.check(epsilon=self.epsilon, delta=self.delta, name=name)
            return
        from .budget import release_cost

        planned = Release(
            "nn_histogram", self.sigma_, self.sensitivity_, self.noise, self.adjacency, rounds
        )
        earlier = list(getattr(self, "releases_", []))
        mu_squared, rho = release_cost([*earlier, planned] if rounds > 0 else earlier)
        self.accountant.check(mu=math.sqrt(mu_squared), rho=rho, name=name)

    def _check_default_delta(self, noisy: np.ndarray) -> None:
        """Refuse a defaulted δ above ñ^−1.1, ñ the noisy vote total over √k (a release's
        post-processing, never the exact n; its noise sd is σ√m/√k); the refused run's
        release is still charged."""
        k = math.sqrt(self.n_neighbors)
        try:
            accounting.check_default_delta(
                self.delta, float(np.sum(noisy)) / k, self.sigma_ * math.sqrt(noisy.size) / k
            )
        except ValueError:
            if self.accountant is not None:
                self.accountant.charge(list(self.releases_), name=self._name())
            raise

    def _histogram(self, X, candidates: np.ndarray, rng: np.random.Generator) -> Release:
        """The round's release: noisy votes, or exact votes when σ = 0 (``epsilon=inf``)."""
        votes = dict(
            backend=self.backend,
            metric=self.metric,
            n_neighbors=self.n_neighbors,
            groups=getattr(self, "_groups", None),
            adjacency=self.adjacency,
        )
        if self.sigma_ == 0.0:
            return exact_nn_histogram(X, candidates, **votes)
        return noisy_nn_histogram(X, candidates, self.sigma_, rng, noise=self.noise, **votes)

    def _checked_groups(self, groups):
        """User ids are refused with discrete noise, as are k > 1 votes (they are not integers)."""
        if (groups is not None or self.n_neighbors > 1) and accounting.is_discrete_gaussian(
            self.noise
        ):
            raise ValueError(
                "user-level (groups) and k-neighbour votes are not integers: use "
                "noise='gaussian' with them"
            )
        return groups

    def _n_for_selector(self, X) -> float | None:
        """n for selectors that need it: given, or exact only where n is public (replace, rows).

        Under add/remove adjacency n is private, and with user ids (``groups``)
        so is the row count even under replace (a replaced user may own more
        rows): selectors get None and fall back on the noisy counts' total
        (post-processing).
        """
        if self.n_private is not None:
            return float(self.n_private)
        public = self.adjacency == "replace" and getattr(self, "_groups", None) is None
        return float(X.shape[0]) if public else None

    def _rng(self) -> np.random.Generator:
        return check_random_state(self.random_state)

    def _population_size(self) -> int:
        if self.population_size is not None:
            return check_positive_int(self.population_size, "population_size")
        return self.n_synthetic * (1 + int(getattr(self.variation_api, "per_point", 1)))

    def _next_population(self, selection: Selection, rng: np.random.Generator) -> np.ndarray:
        """S_t = [selection; variations], or the variations alone without ``keep_selected``."""
        if isinstance(self.variation_api, SelectionVariationAPI):  # texts, rows: need the indices
            variations = self.variation_api.vary_selection(selection, rng)
        else:
            variations = self.variation_api.vary(
                selection.points, rng, per_point=selection.variations_per_point
            )
        if not self.keep_selected:
            return np.asarray(variations)
        return np.vstack([selection.points, variations])

    def _rounds(self, start: int):
        rounds = range(start, self.iterations)
        if not self.progress:
            return rounds
        from tqdm.auto import tqdm

        return tqdm(rounds, initial=start, total=self.iterations, desc="PE rounds", leave=False)

    # -- checkpoint -------------------------------------------------------

    def fingerprint(self, dim: int) -> dict:
        """Every public parameter a checkpoint must match (all plug-in parameters, at any depth;
        :func:`privevo.checkpoint.run_fingerprint`)."""
        skip = (*_HOOKS, "keep_candidates", "progress", "checkpoint", "backend", "name")
        params = constructor_params(self)
        return run_fingerprint(type(self).__name__, dim, params, skip, sigma=float(self.sigma_))

    def _open_checkpoint(self, X):
        """(log, owned): the caller's open log (DPKMeans), or one opened on ``checkpoint``."""
        from . import checkpoint as ckpt

        if isinstance(self.checkpoint, ckpt.Checkpoint):
            return self.checkpoint, False
        fingerprint = self.fingerprint(X.shape[1])
        digest = data_digest(X, groups=getattr(self, "_groups", None))
        return ckpt.Checkpoint.open(self.checkpoint, fingerprint=fingerprint, digest=digest), True

    def _replay(self, X, log) -> EvolutionState:
        """The state after the last logged round (``history_``/``releases_`` rebuilt), or S_0.

        S_0 is logged too (record ``"initial"``): it is public, but drawing it
        again can be costly (text PE) and it holds the first round's candidates.
        """
        rng = self._rng()
        replay_or_draw(
            log,
            "initial",
            rng,
            lambda rng: {"population": self.initial_state(X.shape[1], rng).population},
            meta=lambda: {"api_state": self._api_state()},
        )
        rounds = [r for r in log.records if r.key.startswith("round/")]
        candidates = log.find("initial").arrays["population"]
        for record in rounds:
            kept = candidates if self.keep_candidates else None
            self.history_.append(history_entry(record, kept))
            self.releases_.append(
                Release.from_entry(record.meta["release"], self.adjacency, record.arrays["counts"])
            )
            candidates = record.arrays["population"]
        last = rounds[-1] if rounds else log.find("initial")
        set_rng_state(rng, last.rng)
        self._restore_api_state(last.meta.get("api_state"))
        self.resumed_from_ = len(rounds)
        selection = selection_of(last) if rounds else None
        return EvolutionState(len(rounds), last.arrays["population"], selection, rng)

    def _api_state(self) -> dict | None:
        """Public state of object-aware APIs (e.g. texts) to store with each round."""
        api = self.variation_api
        return api.checkpoint_state() if isinstance(api, CheckpointedAPI) else None

    def _restore_api_state(self, state: dict | None) -> None:
        if state is not None and isinstance(self.variation_api, CheckpointedAPI):
            self.variation_api.restore_checkpoint_state(state)

    # -- report -----------------------------------------------------------

    def _finish(self, state: EvolutionState) -> "PrivateEvolution":
        self.synthetic_ = state.selection.points
        self.final_state_ = state
        public = {
            "n_synthetic": self.n_synthetic,
            "iterations": self.iterations,
            "random_api": repr(self.random_api)
            if isinstance(self.random_api, RandomAPI)
            else "explicit array",
            "variation_api": repr(self.variation_api),
            "selector": repr(self.selector),
            "metric": self.metric,
            "seeded": self.random_state is not None,
            "n_neighbors": self.n_neighbors,
            **(self.public_parameters or {}),
        }
        if self.sigma_ == 0.0:
            report = non_private_report(
                delta=self.delta,
                adjacency=self.adjacency,
                steps=len(self.releases_),
                public_parameters=public,
            )
        else:
            report = privacy_report(
                epsilon_target=self.epsilon,
                releases=group_releases(self.releases_),
                noise=self.noise,
                delta=self.delta,
                adjacency=self.adjacency,
                public_parameters=public,
            )
        report["unit"] = privacy_unit(getattr(self, "_groups", None))
        self.privacy_report_ = with_seed_warning(report, self.random_state)
        self._groups = None  # private: not kept after the run
        if self.accountant is not None:
            self.accountant.charge(self.privacy_report_, name=self._name())
        return self


def _private_view(X):
    """The private data as a 2-D array; no copy for ndarrays and memmaps (checked per chunk)."""
    if isinstance(X, np.ndarray) and X.dtype.kind in "fiu" and X.ndim == 2 and X.shape[0] > 0:
        return X
    source = lazy_rows(X)  # block sources, their paths, Dask collections: never loaded whole
    return check_points(X, "X") if source is None else source
