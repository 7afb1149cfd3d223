"""The one Private Evolution loop (DESIGN §1).

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

import hashlib
import math
import os
import time
import warnings
from dataclasses import dataclass, field
from functools import partial
from typing import Callable, Sequence

import numpy as np

from . import accounting
from ._validation import (
    check_adjacency,
    check_delta,
    check_epsilon,
    check_points,
    check_positive_int,
    check_random_state,
    check_same_dimension,
)
from .distributed import backend_session
from .exceptions import PrivacyLeakWarning
from .histogram import _NOISES, nn_histogram, noisy_nn_histogram
from .report import _jsonable, gaussian_release, non_private_report, privacy_report
from .selection import Selection, SelectionContext
from .streaming import as_private_source

__all__ = ["PrivateEvolution", "IterationRecord", "EvolutionState"]


@dataclass
class IterationRecord:
    """What one round released and did. ``noisy_counts`` is the DP release itself."""

    iteration: int
    candidates: np.ndarray | None
    noisy_counts: np.ndarray
    selected: np.ndarray | None  # candidate indices, or None if the selector made new points
    selected_points: np.ndarray
    sigma: float
    info: dict = field(default_factory=dict)
    seconds: dict = field(default_factory=dict)  # histogram / selection / variation


@dataclass
class EvolutionState:
    """Everything needed to continue a run after round ``completed`` (checkpoint seam)."""

    completed: int  # rounds whose noisy histogram has been released
    population: np.ndarray  # candidates for the next round
    selection: Selection | None
    rng: np.random.Generator


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
    metric, backend, noise : passed to :func:`privevo.histogram.noisy_nn_histogram`
    callbacks : functions called with each :class:`IterationRecord`
    keep_candidates : store every round's candidates in ``history_``
    progress : show a progress bar
    random_state : None, int or ``numpy.random.Generator``; seeds every draw
    checkpoint : path of a checkpoint file (:mod:`privevo.checkpoint`), written
        atomically after every round; if it exists, ``fit`` resumes from it after
        checking that it belongs to the same run (parameters, data shape)

    Attributes
    ----------
    synthetic_ : (m', d) the last selection
    history_ : list of :class:`IterationRecord`
    privacy_report_ : dict (see :mod:`privevo.report`)
    sigma_ : noise standard deviation of every round
    """

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
        keep_candidates: bool = True,
        progress: bool = False,
        public_parameters: dict | None = None,
        checkpoint: str | os.PathLike | None = None,
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
        self.keep_candidates = keep_candidates
        self.progress = progress
        self.public_parameters = public_parameters
        self.checkpoint = checkpoint

    # -- public API -------------------------------------------------------

    def fit(self, X, y=None) -> "PrivateEvolution":
        """Run T rounds against the private data ``X`` (n, d)."""
        X = _private_view(X)
        self._validate_params()
        self.history_: list[IterationRecord] = []
        self.resumed_from_ = 0
        state = self._load_checkpoint(X) if self.checkpoint is not None else None
        if state is None:
            state = self.initial_state(X.shape[1], self._rng())
        return self.resume(X, state)

    def resume(self, X, state: EvolutionState) -> "PrivateEvolution":
        """Continue from ``state`` (rounds ``state.completed + 1 … T``) and finish."""
        X = _private_view(X)
        check_same_dimension(state.population.shape[1], X.shape[1], "population")
        if not hasattr(self, "history_"):
            self.history_ = []
        with backend_session(self.backend):  # backend="dask": one cluster for all rounds
            for _ in self._rounds(state.completed):
                record, state = self.step(X, state)
                self.history_.append(record)
                if getattr(self, "checkpoint", None) is not None:
                    self._save_checkpoint(X, state)
                for callback in self.callbacks:
                    callback(record)
        return self._finish(state)

    def initial_state(self, dim: int, rng: np.random.Generator) -> EvolutionState:
        """S_0 from the random API (or the given initial array): public, data-free."""
        if hasattr(self.random_api, "sample"):
            population = self.random_api.sample(self._population_size(), dim, rng)
        else:
            population = check_points(self.random_api, "random_api (initial points)")
            check_same_dimension(population.shape[1], dim, "initial points")
        return EvolutionState(0, np.asarray(population, dtype=np.float64), None, rng)

    def step(self, X, state: EvolutionState) -> tuple[IterationRecord, EvolutionState]:
        """One round: private release, selection, variation."""
        t, rng, candidates = state.completed, state.rng, state.population
        tic = time.perf_counter()
        noisy = self._histogram(X, candidates, rng)
        tac = time.perf_counter()
        context = SelectionContext(self.sigma_, t, self.iterations, self.n_synthetic, X.shape[0], rng)
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
            seconds={"histogram": tac - tic, "selection": toc - tac, "variation": time.perf_counter() - toc},
        )
        return record, EvolutionState(t + 1, population, selection, rng)

    # -- internals --------------------------------------------------------

    def _validate_params(self) -> None:
        check_positive_int(self.n_synthetic, "n_synthetic")
        check_positive_int(self.iterations, "iterations")
        check_delta(self.delta)
        self.sensitivity_ = check_adjacency(self.adjacency)
        if self.noise not in _NOISES:
            raise ValueError(f"noise must be one of {sorted(_NOISES)}, got {self.noise!r}")
        self.sigma_ = self._sigma()
        for name, methods in (("variation_api", ("vary", "vary_selection")), ("selector", ("select",))):
            if not any(hasattr(getattr(self, name), m) for m in methods):
                raise ValueError(f"{name} must have a .{methods[0]}() method, got {getattr(self, name)!r}")

    def _sigma(self) -> float:
        """σ of every round; 0 for ``epsilon=inf`` (a non-private run, warned and reported as such)."""
        if self.epsilon == math.inf:
            warnings.warn("epsilon=inf: a non-private run (exact vote counts, no noise); its output is not "
                          "differentially private", PrivacyLeakWarning, stacklevel=4)
            return 0.0
        check_epsilon(self.epsilon)
        if accounting.is_discrete_gaussian(self.noise):  # zCDP accounting (CKS20), see privevo.accounting
            return accounting.discrete_gaussian_sigma(self.epsilon, self.delta, self.iterations, self.sensitivity_)
        return accounting.gaussian_sigma(self.epsilon, self.delta, self.iterations, self.sensitivity_)

    def _histogram(self, X, candidates: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The round's release: noisy vote counts, or exact counts when σ = 0 (``epsilon=inf``)."""
        if self.sigma_ == 0.0:
            return nn_histogram(X, candidates, backend=self.backend, metric=self.metric).astype(np.float64)
        return noisy_nn_histogram(X, candidates, self.sigma_, rng, noise=self.noise, backend=self.backend, metric=self.metric)

    def _rng(self) -> np.random.Generator:
        return check_random_state(self.random_state)

    def _population_size(self) -> int:
        if self.population_size is not None:
            return check_positive_int(self.population_size, "population_size")
        return self.n_synthetic * (1 + int(getattr(self.variation_api, "per_point", 1)))

    def _next_population(self, selection: Selection, rng: np.random.Generator) -> np.ndarray:
        if hasattr(self.variation_api, "vary_selection"):  # object-aware APIs (text) need the indices
            variations = self.variation_api.vary_selection(selection, rng)
        else:
            variations = self.variation_api.vary(selection.points, rng, per_point=selection.variations_per_point)
        return np.vstack([selection.points, variations])

    def _rounds(self, start: int):
        rounds = range(start, self.iterations)
        if not self.progress:
            return rounds
        from tqdm.auto import tqdm

        return tqdm(rounds, initial=start, total=self.iterations, desc="PE rounds", leave=False)

    def _fingerprint(self, X) -> dict:
        """Public parameters and data shape that a checkpoint must match to be resumed."""
        seed = self.random_state
        initial = self.random_api
        if not hasattr(initial, "sample"):
            initial = "array sha256 " + hashlib.sha256(np.ascontiguousarray(check_points(initial)).tobytes()).hexdigest()
        return {
            "n": int(X.shape[0]),
            "d": int(X.shape[1]),
            "n_synthetic": self.n_synthetic,
            "iterations": self.iterations,
            "epsilon": float(self.epsilon),
            "delta": float(self.delta),
            "adjacency": self.adjacency,
            "sigma": float(self.sigma_),
            "noise": self.noise,
            "metric": self.metric,
            "population_size": self.population_size,
            "random_api": repr(initial),
            "variation_api": repr(self.variation_api),
            "selector": repr(self.selector),
            "random_state": int(seed) if isinstance(seed, (int, np.integer)) else type(seed).__name__,
            "public_parameters": _jsonable(self.public_parameters or {}),
        }

    def _load_checkpoint(self, X) -> EvolutionState | None:
        """The saved state (and ``history_`` rebuilt from its ledger), or None if no file yet."""
        from . import checkpoint as ckpt

        ckpt.remove_stale_temporaries(self.checkpoint)
        if not os.path.exists(self.checkpoint):
            return None
        saved = ckpt.load_checkpoint(self.checkpoint)
        ckpt.check_fingerprint(self.checkpoint, saved.fingerprint, self._fingerprint(X))
        self.history_ = [
            IterationRecord(e.iteration, None, e.noisy_counts, e.selected, e.selected_points, e.sigma, e.info,
                            seconds=dict.fromkeys(("histogram", "selection", "variation"), 0.0))  # spent by an earlier process
            for e in saved.ledger
        ]
        self.resumed_from_ = saved.completed
        return EvolutionState(saved.completed, saved.population, saved.selection, saved.rng)

    def _save_checkpoint(self, X, state: EvolutionState) -> None:
        from . import checkpoint as ckpt

        ledger = [
            ckpt.LedgerEntry(r.iteration, r.sigma, r.noisy_counts, r.selected, r.selected_points, r.info)
            for r in self.history_
        ]
        ckpt.save_checkpoint(
            self.checkpoint,
            fingerprint=self._fingerprint(X),
            completed=state.completed,
            population=state.population,
            selection=state.selection,
            rng=state.rng,
            ledger=ledger,
        )

    def _releases(self) -> list[dict]:
        """The run's releases from its ledger: one entry per distinct σ, each round counted once.

        Rounds not in ``history_`` (a user-driven :meth:`resume`) are counted at σ
        as well, so the total is never below T.
        """
        rounds: dict[int, float] = {r.iteration: r.sigma for r in self.history_}
        for t in range(self.iterations):
            rounds.setdefault(t, self.sigma_)
        by_sigma: dict[float, int] = {}
        for sigma in rounds.values():
            by_sigma[sigma] = by_sigma.get(sigma, 0) + 1
        return [gaussian_release("nn_histogram", s, c, self.sensitivity_) for s, c in by_sigma.items()]

    def _finish(self, state: EvolutionState) -> "PrivateEvolution":
        self.synthetic_ = state.selection.points
        self.final_state_ = state
        report = partial(non_private_report, steps=self.iterations) if self.sigma_ == 0.0 else partial(
            privacy_report, epsilon_target=self.epsilon, releases=self._releases(), noise=self.noise)
        self.privacy_report_ = report(
            delta=self.delta,
            adjacency=self.adjacency,
            public_parameters={
                "n_synthetic": self.n_synthetic,
                "iterations": self.iterations,
                "random_api": repr(self.random_api) if hasattr(self.random_api, "sample") else "explicit array",
                "variation_api": repr(self.variation_api),
                "selector": repr(self.selector),
                "metric": self.metric,
                **(self.public_parameters or {}),
            },
        )
        return self


def _private_view(X):
    """The private data as a 2-D array; no copy for ndarrays and memmaps (checked per chunk)."""
    if isinstance(X, np.ndarray) and X.dtype.kind in "fiu" and X.ndim == 2 and X.shape[0] > 0:
        return X
    source = as_private_source(X)  # block sources, their paths, Dask collections: never loaded whole
    return check_points(X, "X") if source is None else source
