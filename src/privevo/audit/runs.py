"""Whole PrivateEvolution runs (also stopped and resumed from a checkpoint): per-round
log-likelihood ratios of the canary."""

from __future__ import annotations

from functools import partial
from typing import Callable

import numpy as np

from .._validation import (
    check_delta,
    check_epsilon,
    check_positive_int,
    check_random_state,
)
from ..adjacency import vote_sensitivity
from .scenarios import CanaryScenario, _canary_vector, _reference_counts, canary_scenario
from .statistics import AuditResult, audit_result, llr_statistics


def default_model(
    epsilon: float, delta: float, iterations: int, noise: str, adjacency: str, rng, cls=None
):
    """The audited PE configuration: rank selection, Gaussian variation, 4 points, 12 candidates.

    ``cls`` (default :class:`~privevo.PrivateEvolution`) lets tests audit a subclass.
    """
    from ..evolution import PrivateEvolution
    from ..selection import Rank
    from ..variation import GaussianVariation, UniformBall

    return (cls or PrivateEvolution)(
        UniformBall(1.0),
        GaussianVariation(0.2, per_point=2, radius=1.0),
        Rank(),
        n_synthetic=4,
        iterations=iterations,
        epsilon=epsilon,
        delta=delta,
        adjacency=adjacency,
        noise=noise,
        random_state=rng,
        keep_candidates=True,
    )


def _run_llrs(model, scenario: CanaryScenario) -> np.ndarray:
    """Per-round log-likelihood ratios llr_t = ((y_t − h_t)·v_t − ‖v_t‖²/2)/σ² of one fitted run."""
    out = np.empty(len(model.history_))
    for t, record in enumerate(model.history_):
        cands = record.candidates
        v = _canary_vector(scenario, cands)
        resid = record.noisy_counts - _reference_counts(scenario.D, cands)
        out[t] = (resid @ v - 0.5 * (v @ v)) / record.sigma**2
    return out


def audit_runs(
    epsilon: float,
    delta: float = 1e-5,
    *,
    noise: str = "gaussian",
    adjacency: str = "add_remove",
    n_runs: int = 1000,
    iterations: int = 5,
    alpha: float = 0.05,
    random_state=None,
    make_model: Callable | None = None,
    scenario: CanaryScenario | None = None,
    progress: bool = False,
    resume_after: int | None = None,
) -> AuditResult:
    """Audit whole :class:`~privevo.PrivateEvolution` runs of T rounds, every round observed.

    ``make_model(epsilon, delta, iterations, noise, adjacency, rng)`` builds an
    unfitted model (default :func:`default_model`; it must keep candidates).
    Every run is a real ``fit`` with its own generator, ``n_runs`` on D and as
    many on D′. With ``resume_after=k`` every run is checkpointed, stopped
    after round k and resumed from its checkpoint by a new model (the rounds
    observed are the resumed run's ``history_``).
    """
    epsilon, delta = check_epsilon(epsilon), check_delta(delta)
    n_runs = check_positive_int(n_runs, "n_runs", minimum=4)
    iterations = check_positive_int(iterations, "iterations")
    vote_sensitivity(adjacency)
    seeds = np.random.SeedSequence(check_random_state(random_state).integers(2**63)).spawn(
        2 * n_runs
    )
    sc = scenario or canary_scenario(adjacency)
    make_model = make_model or default_model
    llrs, model = [], None
    bar = _progress(2 * n_runs, progress)
    for i, data in enumerate([sc.D] * n_runs + [sc.D_prime] * n_runs):
        make = partial(
            make_model,
            epsilon,
            delta,
            iterations,
            noise,
            adjacency,
            np.random.default_rng(seeds[i]),
        )
        model = make().fit(data) if resume_after is None else _resumed_fit(make, data, resume_after)
        llrs.append(_run_llrs(model, sc))
        bar.update(1)
    bar.close()
    scores, names = llr_statistics(llrs, n_runs, [f"round {t + 1}" for t in range(iterations)])
    return audit_result(
        scores,
        names,
        delta=delta,
        alpha=alpha,
        steps=iterations,
        setting=f"PE run ({iterations} rounds)"
        + ("" if resume_after is None else f", resumed after round {resume_after}"),
        noise=noise,
        adjacency=adjacency,
        claimed_epsilon=float(model.privacy_report_["epsilon"]),
        sigma=float(model.sigma_),
    )


class _Interrupt(Exception):
    pass


def _resumed_fit(make: Callable, data: np.ndarray, stop_after: int):
    """fit with a checkpoint, interrupted after round ``stop_after``, then resumed by a new
    model."""
    import tempfile
    from pathlib import Path

    def interrupt(record):
        if record.iteration + 1 == stop_after:
            raise _Interrupt

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "run.ckpt"
        first = make()
        first.checkpoint, first.callbacks = path, [interrupt]
        try:
            first.fit(data)
        except _Interrupt:
            pass
        resumed = make()
        resumed.checkpoint = path
        return resumed.fit(data)


class _NoBar:
    def update(self, n: int) -> None:
        pass

    def close(self) -> None:
        pass


def _progress(total: int, enabled: bool):
    if not enabled:
        return _NoBar()
    from tqdm.auto import tqdm

    return tqdm(total=total, desc="PE runs", leave=False)
