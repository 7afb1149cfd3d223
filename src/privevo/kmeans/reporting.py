"""DPKMeans' privacy report: one story for the whole run (docs/kmeans.md, "The report").

The top level gives ε, δ and μ (or ρ) of the whole fit; ``sigma``, ``steps`` and
``sensitivity`` describe its PE rounds (the vote histograms), as the command line's summary
line does; ``release_families`` lists every family of releases — the noisy count, HDPE's
projection, the PE rounds, the recover steps — with how many releases it made and its σ.
``low_signal_clusters``: the centres whose last recover step's noisy count is within the
noise (:func:`~privevo.kmeans.recover.low_signal`): shrunk towards the public centre or kept at
their anchor, not estimated from their own rows.
"""

from __future__ import annotations

from ..metrics import EVALUATION_NOTE
from ..private import LEAK_NOTE, Domain
from ..report import privacy_report
from .plan import Plan

__all__ = ["FAMILIES", "fit_report", "release_families"]

FAMILIES = {  # release name -> family
    "count": "count",
    "second_moment": "projection",
    "nn_histogram": "pe_rounds",
    "cluster_sums": "recover_steps",
    "cluster_counts": "recover_steps",
}


def fit_report(est, d: int, cfg: Plan, releases, domain: Domain, low_signal: list[int]) -> dict:
    """The fit's report (:func:`privevo.report.privacy_report`), its top level the whole run."""
    size = (
        {"n_samples": cfg.n_public}
        if cfg.n_public is not None
        else {"n_estimate": est.evolution_.n_private}
    )  # under add/remove only the noisy count
    report = privacy_report(
        epsilon_target=cfg.epsilon,
        delta=cfg.delta,
        adjacency=est.adjacency,
        releases=releases,
        noise=est.noise,
        mechanism=f"{cfg.method}: noisy nearest-neighbour vote histograms"
        + (" + noisy cluster sums and counts" if cfg.share > 0 else "")
        + (" + noisy second moment" if cfg.projection_share > 0 else "")
        + (" + noisy row count" if cfg.count_share > 0 else ""),
        public_parameters={
            **size,
            "n_features": d,
            "n_clusters": cfg.k,
            "iterations": cfg.T,
            "variations": est.variations_,
            "projection_dim": cfg.pe_dim,
            "center": domain.center,
            "radius": domain.radius,
            "bounds": None if domain.box is None or domain.leaked else list(domain.box),
            "gamma": est.gamma,
            "beta": est.beta,
            "recover_share": cfg.share,
            "recover_steps": cfg.recover_steps,
            "projection": est.projection if cfg.method == "hdpe-means" else None,
            "projection_share": cfg.projection_share,
            "count_share": cfg.count_share,
            "seeded": est.random_state is not None,
        },
        warnings=[LEAK_NOTE] if domain.leaked else [],
        guarantee_holds=not domain.leaked,
    )
    rounds = next(r for r in report["releases"] if r["name"] == "nn_histogram")
    report.update(sigma=rounds["sigma"], steps=rounds["count"], sensitivity=rounds["sensitivity"])
    report["release_families"] = release_families(report["releases"], cfg.recover_steps)
    report["low_signal_clusters"] = list(low_signal)
    report["distances"] = (  # the unit-ball map: one scale for every column, or per column
        "scaled units: each column's bounds mapped to [-1, 1]"
        if est.units == "scaled"
        else "data units"
    )
    report["evaluation"] = EVALUATION_NOTE  # labels_/inertia_: read off the private rows, not DP
    return report


def release_families(entries: list[dict], recover_steps: int) -> dict:
    """{family: {"releases": how many, "sigma": σ (or one per release name)}} in release order.

    A recover step is one release of sums and one of counts: its ``releases`` is the number of
    steps, and ``sigma`` gives the σ of the sums and of the counts.
    """
    out: dict[str, dict] = {}
    for entry in entries:
        family = FAMILIES.get(entry["name"], entry["name"])
        slot = out.setdefault(family, {"releases": 0, "sigma": {}})
        slot["sigma"][entry["name"]] = entry["sigma"]
        if family != "recover_steps":
            slot["releases"] += int(entry["count"])
    for family, slot in out.items():
        if family == "recover_steps":
            slot["releases"] = int(recover_steps)
        elif len(slot["sigma"]) == 1:
            slot["sigma"] = next(iter(slot["sigma"].values()))
    return out
