"""The privacy report: one schema for the loop, the estimators and the CLI.

A report is a plain JSON-serialisable dict so it can be written beside every
output and handed to an auditor. Keys (always present): ``epsilon``,
``delta``, ``mu``, ``sigma``, ``steps``, ``adjacency``, ``sensitivity``,
``noise``, ``mechanism``, ``dp_event``, ``releases``, ``public_parameters``,
``warnings``, ``guarantee_holds``, ``privevo_version``, ``timestamp``,
``accountant``, ``rho``.

Accountants: ``"gdp"`` (all releases Gaussian: exact μ-GDP composition, ``rho``
is None) or ``"zcdp"`` (some release adds discrete Gaussian noise: every
release is Δ²/(2σ²)-zCDP — Gaussian by Bun & Steinke 2016, discrete Gaussian
by Canonne, Kamath & Steinke 2020 — ρ adds up, and ε comes from CKS20's
conversion; ``mu`` is None).
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
from typing import Any

from . import accounting
from .private import Release


def group_releases(ledger: list) -> list[Release]:
    """Equal releases of an append-only ledger summed into one (``count`` added up).

    Releases are equal when name, σ, sensitivity and noise agree; every entry
    of the ledger is counted, however often a round was run. Entries may be
    :class:`~privevo.private.Release` objects or their ``entry()`` dicts.
    """
    grouped: dict[tuple, Release] = {}
    for item in ledger:
        release = item if isinstance(item, Release) else Release.from_entry(item, "add_remove")
        key = (release.name, release.sigma, release.sensitivity, release.noise)
        count = grouped[key].count + release.count if key in grouped else release.count
        grouped[key] = dataclasses.replace(release, count=count, value=None)
    return list(grouped.values())


SEED_WARNING = (
    "the run was seeded: its output is private only while the seed stays secret "
    "(rerunning with the seed on a neighbouring data set reproduces the noise)"
)


def with_seed_warning(report: dict, random_state) -> dict:
    """Say that a run was seeded, never with what: ``seeded`` and a warning, no value."""
    seeded = random_state is not None and not _is_generator(random_state)
    report["seeded"] = bool(random_state is not None)
    report.get("public_parameters", {}).pop("seeded", None)  # one field: an inner engine's
    # (given the run's generator, so always "seeded") would contradict it
    if seeded and SEED_WARNING not in report["warnings"]:
        report["warnings"] = [*report["warnings"], SEED_WARNING]
    return report


def _is_generator(value) -> bool:
    import numpy as np

    return isinstance(value, np.random.Generator)


def privacy_report(
    *,
    epsilon_target: float,
    delta: float,
    adjacency: str,
    releases: list,
    noise: str = "gaussian",
    mechanism: str = "noisy nearest-neighbour vote histogram",
    public_parameters: dict | None = None,
    warnings: list[str] | None = None,
    guarantee_holds: bool = True,
) -> dict[str, Any]:
    """The report of a run: a pure function of its ledger of releases and public parameters.

    ``releases``: :class:`~privevo.private.Release` objects (or their
    ``entry()`` dicts), equal ones grouped. Gaussian only: μ = √(Σ count·(Δ/σ)²)
    (GDP composition); with discrete Gaussian noise ρ = Σ count·Δ²/(2σ²)
    (zCDP). ``epsilon`` is the ε that μ (or ρ)
    spends at ``delta`` (≤ ``epsilon_target`` up to root-finding tolerance).
    ``sigma``/``steps``/``sensitivity`` describe the first (main) release.
    """
    from ._version import __version__

    releases = group_releases(releases)
    if accounting.is_discrete_gaussian(noise):  # the run's noise names every release's
        releases = [
            dataclasses.replace(r, noise=noise) if r.noise == "gaussian" else r for r in releases
        ]
    main = releases[0]
    if any(r.noise != "gaussian" for r in releases):
        accountant, mu = "zcdp", None
        rho = sum(r.rho for r in releases)
        epsilon = accounting.epsilon_of_rho(rho, delta)
    else:
        accountant, rho = "gdp", None
        mu = accounting.compose_mu(*[r.mu for r in releases])
        epsilon = accounting.epsilon_of_mu(mu, delta)
    events = [r.dp_event() for r in releases]
    return {
        "epsilon": epsilon,
        "epsilon_target": float(epsilon_target),
        "delta": float(delta),
        "mu": mu,
        "sigma": main.sigma,
        "steps": main.count,
        "adjacency": adjacency,
        "sensitivity": main.sensitivity,
        "noise": noise,
        "mechanism": mechanism,
        "dp_event": _event_dict(events[0] if len(events) == 1 else _compose(events)),
        "releases": [r.entry() for r in releases],
        "public_parameters": jsonable(public_parameters or {}),
        "warnings": list(warnings or []),
        "guarantee_holds": bool(guarantee_holds),
        "privevo_version": __version__,
        "timestamp": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "accountant": accountant,
        "rho": rho,
    }


def non_private_report(
    *,
    delta: float,
    adjacency: str,
    steps: int,
    mechanism: str = "exact nearest-neighbour vote histogram (no noise)",
    public_parameters: dict | None = None,
    warnings: list[str] | None = None,
) -> dict[str, Any]:
    """The report of a non-private run (``epsilon=inf``): ``steps`` exact, un-noised releases.

    Same keys as :func:`privacy_report`, but ``epsilon``, ``epsilon_target``,
    ``mu`` and ``dp_event`` are ``None`` (never a finite figure), ``sigma`` is
    0, ``noise`` is ``"none"`` and ``guarantee_holds`` is False.
    """
    from ._version import __version__
    from .adjacency import vote_sensitivity

    note = "non-private run (epsilon=inf): exact counts were released, no differential privacy"
    return {
        "epsilon": None,
        "epsilon_target": None,
        "delta": float(delta),
        "mu": None,
        "sigma": 0.0,
        "steps": int(steps),
        "adjacency": adjacency,
        "sensitivity": vote_sensitivity(adjacency),
        "noise": "none",
        "mechanism": mechanism,
        "dp_event": None,
        "releases": [
            {"name": "nn_histogram", "sigma": 0.0, "count": int(steps), "sensitivity": None}
        ],
        "public_parameters": jsonable(public_parameters or {}),
        "warnings": [note, *(warnings or [])],
        "guarantee_holds": False,
        "privevo_version": __version__,
        "timestamp": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "accountant": None,
        "rho": None,
    }


def _compose(events):
    import dp_accounting

    return dp_accounting.ComposedDpEvent(events)


def _event_dict(event) -> dict:
    """A dp_accounting event as nested dicts: {"type": class name, field: value, ...}."""
    import attr

    out: dict[str, Any] = {"type": type(event).__name__}
    for name, value in attr.asdict(event, recurse=False).items():
        if isinstance(value, list):
            out[name] = [_event_dict(v) for v in value]
        elif hasattr(type(value), "__attrs_attrs__"):
            out[name] = _event_dict(value)
        else:
            out[name] = value
    return out


def jsonable(value):
    import numpy as np

    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return repr(value)
