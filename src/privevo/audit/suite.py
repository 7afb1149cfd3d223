"""The default grid of ``privevo audit`` and its table."""

from __future__ import annotations

import functools
from typing import Sequence

import numpy as np

from ..names import ADJACENCIES
from .releases import audit_count, audit_dplloyd, audit_release
from .runs import audit_runs
from .statistics import AuditResult
from .table_releases import TABLE_FAMILIES, audit_marginal_choice, audit_table_release
from .votes import audit_label_votes, audit_user_votes


def run_audit(
    epsilons: Sequence[float] = (0.5, 1.0, 4.0),
    delta: float = 1e-5,
    *,
    noises: Sequence[str] = ("gaussian", "discrete_gaussian"),
    adjacencies: Sequence[str] = ADJACENCIES,
    n_releases: int = 100_000,
    n_runs: int = 1000,
    iterations: int = 5,
    alpha: float = 0.05,
    seed: int = 0,
    progress: bool = False,
) -> list[AuditResult]:
    """Every (setting, noise, adjacency, ε): single releases, then whole runs (``n_runs=0`` skips
    them); then user-level votes, DPLloyd, TabularPE's release families and text PE's labelled
    votes (Gaussian noise; each real release called ``n_releases // 10`` times per data set)."""
    if not (isinstance(alpha, (int, float)) and 0 < alpha < 1):
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    if not (isinstance(n_runs, (int, np.integer)) and n_runs >= 0):
        raise ValueError(
            f"the number of runs must be an integer >= 0 (0 skips whole runs), got {n_runs!r}"
        )
    results: list[AuditResult] = []
    single = dict(delta=delta, alpha=alpha)  # every setting's δ and α, passed by keyword
    releases = dict(single, n_releases=n_releases)
    for noise in noises:
        for adjacency in adjacencies:
            runs = functools.partial(
                audit_runs,
                noise=noise,
                adjacency=adjacency,
                n_runs=n_runs,
                iterations=iterations,
                progress=progress,
                **single,
            )
            for i, eps in enumerate(epsilons):
                rs = [seed, i, len(results)]
                rng = np.random.default_rng(rs)
                results.append(
                    audit_release(
                        eps, noise=noise, adjacency=adjacency, random_state=rng, **releases
                    )
                )
                if n_runs:
                    results.append(runs(eps, random_state=np.random.default_rng(rs + [1])))
            if adjacency != "add_remove":  # the noisy row count exists under add/remove only
                continue
            for i, eps in enumerate(epsilons):
                rng = np.random.default_rng([seed, i, len(results)])
                results.append(audit_count(eps, noise=noise, random_state=rng, **releases))
                if n_runs:  # runs stopped half-way and resumed from a checkpoint
                    rng = np.random.default_rng([seed, i, len(results), 2])
                    results.append(
                        runs(eps, resume_after=max(1, iterations // 2), random_state=rng)
                    )
    for i, eps in enumerate(epsilons):  # one user of 4 rows added or removed, k = 1 and 3 votes
        for k in (1, 3):
            rng = np.random.default_rng([seed, i, len(results)])
            results.append(audit_user_votes(eps, n_neighbors=k, random_state=rng, **releases))
    for i, eps in enumerate(epsilons):  # a baseline (pure ε-DP, Laplace): in a box that excludes 0
        rng = np.random.default_rng([seed, i, len(results)])
        results.append(
            audit_dplloyd(eps, n_releases=max(4, n_releases // 20), random_state=rng, **single)
        )
    results += _release_functions(epsilons, adjacencies, dict(single, n_releases=n_releases), seed)
    return results


def _release_functions(epsilons, adjacencies, releases: dict, seed: int) -> list[AuditResult]:
    """TabularPE's release families, its adaptive choice and labelled votes (k = 3 under
    add/remove only), each real release function called ``n_releases // 10`` times per data
    set."""
    calls = dict(releases, n_releases=max(4, releases["n_releases"] // 10))
    results: list[AuditResult] = []
    for adjacency in adjacencies:
        audits = [functools.partial(audit_table_release, family) for family in TABLE_FAMILIES]
        audits.append(audit_marginal_choice)
        for k in (1, 3) if adjacency == "add_remove" else (1,):
            audits.append(functools.partial(audit_label_votes, n_neighbors=k))
        for audit in audits:
            for i, eps in enumerate(epsilons):
                rng = np.random.default_rng([seed, i, len(results), 3])
                results.append(audit(eps, adjacency=adjacency, random_state=rng, **calls))
    return results


def format_table(results: Sequence[AuditResult]) -> str:
    """A Markdown table: setting, noise, adjacency, claimed ε, lower bound, ratio, samples, test."""
    rows = [
        "| setting | noise | adjacency | σ | claimed ε | ε lower bound (95%) | lower/claimed | "
        "samples per data set | best test |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        rows.append(
            f"| {r.setting} | {r.noise} | {r.adjacency} | {r.sigma:.4g} "
            f"| {r.claimed_epsilon:.4g} | "
            f"{r.epsilon_lower:.4g} | {r.epsilon_lower / r.claimed_epsilon:.3f} | {r.n_samples} | "
            f"{_test_text(r)} (FPR {r.fpr:.2g}, FNR {r.fnr:.2g}) |"
        )
    return "\n".join(rows)


def _test_text(r: AuditResult) -> str:
    name = r.statistic.replace(" (reversed)", "")
    return f"{name} {'≤' if name != r.statistic else '≥'} {r.threshold:.4g} ⇒ D′"
