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

import datetime as _dt
import math
from typing import Any

from . import accounting


def gaussian_release(name: str, sigma: float, count: int, sensitivity: float, noise: str | None = None) -> dict:
    """One entry of a report's ``releases``: ``count`` Gaussian releases of one kind.

    ``noise`` (e.g. ``"discrete_gaussian"``) is recorded when it is not the
    report's default continuous Gaussian.
    """
    entry = {"name": name, "sigma": float(sigma), "count": int(count), "sensitivity": float(sensitivity)}
    if noise is not None and noise != "gaussian":
        entry["noise"] = noise
    return entry


def group_releases(ledger: list[dict]) -> list[dict]:
    """The report's ``releases`` from an append-only ledger: equal releases summed into one count.

    Releases are equal when name, σ, sensitivity and noise agree; every entry
    of the ledger is counted, however often a round was run.
    """
    grouped: dict[tuple, dict] = {}
    for entry in ledger:
        key = (entry["name"], entry["sigma"], entry["sensitivity"], entry.get("noise"))
        if key in grouped:
            grouped[key]["count"] += int(entry["count"])
        else:
            grouped[key] = dict(entry, count=int(entry["count"]))
    return list(grouped.values())


SEED_WARNING = ("the run was seeded: its output is private only while the seed stays secret "
                "(rerunning with the seed on a neighbouring data set reproduces the noise)")


def with_seed_warning(report: dict, random_state) -> dict:
    """Say that a run was seeded, never with what: ``seeded`` and a warning, no value."""
    seeded = random_state is not None and not _is_generator(random_state)
    report["seeded"] = bool(random_state is not None)
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
    releases: list[dict],
    noise: str = "gaussian",
    mechanism: str = "noisy nearest-neighbour vote histogram",
    public_parameters: dict | None = None,
    warnings: list[str] | None = None,
    guarantee_holds: bool = True,
) -> dict[str, Any]:
    """Build the report of a run from the list of Gaussian releases it made.

    μ = √(Σ count·(Δ/σ)²) (GDP composition); ``epsilon`` is the ε that μ
    spends at ``delta`` (≤ ``epsilon_target`` up to root-finding tolerance).
    ``sigma``/``steps``/``sensitivity`` describe the first (main) release.
    """
    from . import __version__

    releases = [dict(r, noise=r.get("noise", noise)) if accounting.is_discrete_gaussian(noise) else r for r in releases]
    main = releases[0]
    if any(accounting.is_discrete_gaussian(r.get("noise", "gaussian")) for r in releases):
        accountant, mu = "zcdp", None
        rho = sum(accounting.zcdp_rho(r["sigma"], r["count"], r["sensitivity"]) for r in releases)
        epsilon = accounting.epsilon_of_rho(rho, delta)
        events = [_release_event(r) for r in releases]
    else:
        accountant, rho = "gdp", None
        mu = accounting.compose_mu(*[math.sqrt(r["count"]) * r["sensitivity"] / r["sigma"] for r in releases])
        epsilon = accounting.epsilon_of_mu(mu, delta)
        events = [accounting.dp_event(r["sigma"], r["count"], r["sensitivity"]) for r in releases]
    return {
        "epsilon": epsilon,
        "epsilon_target": float(epsilon_target),
        "delta": float(delta),
        "mu": mu,
        "sigma": main["sigma"],
        "steps": main["count"],
        "adjacency": adjacency,
        "sensitivity": main["sensitivity"],
        "noise": noise,
        "mechanism": mechanism,
        "dp_event": _event_dict(events[0] if len(events) == 1 else _compose(events)),
        "releases": releases,
        "public_parameters": _jsonable(public_parameters or {}),
        "warnings": list(warnings or []),
        "guarantee_holds": bool(guarantee_holds),
        "privevo_version": __version__,
        "timestamp": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "accountant": accountant,
        "rho": rho,
    }


def _release_event(release: dict):
    """A release as a dp_accounting event: Gaussian, or zCDP for discrete Gaussian noise."""
    if accounting.is_discrete_gaussian(release.get("noise", "gaussian")):
        return accounting.discrete_gaussian_dp_event(release["sigma"], release["count"], release["sensitivity"])
    return accounting.dp_event(release["sigma"], release["count"], release["sensitivity"])


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
    from . import __version__
    from ._validation import check_adjacency

    note = "non-private run (epsilon=inf): exact counts were released, no differential privacy"
    return {
        "epsilon": None,
        "epsilon_target": None,
        "delta": float(delta),
        "mu": None,
        "sigma": 0.0,
        "steps": int(steps),
        "adjacency": adjacency,
        "sensitivity": check_adjacency(adjacency),
        "noise": "none",
        "mechanism": mechanism,
        "dp_event": None,
        "releases": [{"name": "nn_histogram", "sigma": 0.0, "count": int(steps), "sensitivity": None}],
        "public_parameters": _jsonable(public_parameters or {}),
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


def _jsonable(value):
    import numpy as np

    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return repr(value)
