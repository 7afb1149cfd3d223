"""Declared relations of a benchmark table and how well synthetic rows keep them (tabular.py).

A table's relations file (``data/<table>.relations``, public: written from the
codebook, never from a fit) declares the outcome event and the relations of it::

    outcome: deny = yes          # the event: COL = VALUE, or COL > NUMBER (missing: left out)
    by: afam, insurance, chist   # its rate in each group of these columns (one relation each)
    quartiles: pirat, lvrat      # its rate in each quartile of these numeric columns
    corr: pirat, hirat           # a Spearman correlation (one per line)

Scoring (evaluation only; nothing here reaches a fit): the truth is the private
(training) rows. Groups are each column's values (a missing value a group of its
own); quartile cut points are the private rows' quartiles (evaluation, not a
release: the synthetic rows are cut at the same points). Groups with fewer than
:data:`MIN_GROUP` private rows are left out. A rate relation's error is the mean
|synthetic rate − real rate| over its groups (a group the synthetic rows leave
empty counts at the synthetic overall rate); its sign is kept when the synthetic
rate of the real rows' highest-rate group exceeds that of their lowest-rate group
(for a yes/no column: the gap keeps its sign). A correlation's error is
|synthetic ρ − real ρ|, its sign kept when both have the same sign.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

MIN_GROUP = 30  # private rows a group needs to be scored


def parse(text: str) -> dict:
    """{"outcome": (col, op, value), "rates": [(kind, col)], "corr": [(a, b)]}."""
    spec: dict = {"outcome": None, "rates": [], "corr": []}
    for line_no, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        key, sep, rest = (part.strip() for part in line.partition(":"))
        names = [n.strip() for n in rest.split(",") if n.strip()]
        if not sep or not names:
            raise ValueError(f"relations line {line_no}: expected 'KEY: NAMES'")
        if key == "outcome":
            spec["outcome"] = _outcome(rest, line_no)
        elif key in ("by", "quartiles"):
            spec["rates"] += [(key, n) for n in names]
        elif key == "corr" and len(names) == 2:
            spec["corr"].append(tuple(names))
        else:
            raise ValueError(f"relations line {line_no}: unknown key {key!r} or arity")
    return spec


def _outcome(rest: str, line_no: int) -> tuple:
    for op in ("=", ">"):
        col, sep, value = (part.strip() for part in rest.partition(op))
        if sep:
            return (col, op, float(value) if op == ">" else value)
    raise ValueError(f"relations line {line_no}: outcome must be COL = VALUE or COL > NUMBER")


def load(table: str) -> dict | None:
    """The table's parsed relations file, or None without one."""
    import tabular_data

    path = Path(tabular_data.relations_path(table))
    return parse(path.read_text()) if path.exists() else None


def event(df: pd.DataFrame, outcome: tuple) -> pd.Series:
    """The outcome as 1.0 / 0.0, NaN where its column is missing."""
    col, op, value = outcome
    x = df[col]
    hit = (pd.to_numeric(x, errors="coerce") > value) if op == ">" else (x.astype(str) == value)
    return hit.astype(float).where(x.notna())


def groups(df: pd.DataFrame, kind: str, col: str, cuts=None) -> pd.Series:
    """Each row's group: the column's value as text, or its quartile (0-3) at ``cuts``."""
    if kind == "by":
        return df[col].astype(object).where(df[col].notna(), "(missing)").astype(str)
    x = pd.to_numeric(df[col], errors="coerce")
    return pd.Series(np.searchsorted(cuts, x, side="left"), index=df.index).where(x.notna())


def quartile_cuts(x) -> np.ndarray:
    """Distinct inner quartile points of the private column (ties merge quartiles)."""
    return np.unique(np.nanquantile(pd.to_numeric(x, errors="coerce"), [0.25, 0.5, 0.75]))


def rate_relation(syn, real, spec, kind, col) -> dict:
    """Error and sign of the outcome's rate by the groups of ``col``."""
    cuts = quartile_cuts(real[col]) if kind == "quartiles" else None
    y_real, y_syn = event(real, spec["outcome"]), event(syn, spec["outcome"])
    g_real, g_syn = groups(real, kind, col, cuts), groups(syn, kind, col, cuts)
    size = y_real.groupby(g_real).count()
    r = y_real.groupby(g_real).mean()[size >= MIN_GROUP]
    s = y_syn.groupby(g_syn).mean().reindex(r.index).fillna(y_syn.mean())
    hi, lo = r.idxmax(), r.idxmin()
    if len(r) < 2:  # one scored group: no relation to keep
        return {"error": float(np.mean(np.abs(s - r))), "real_gap": 0.0, "gap": 0.0, "sign": None}
    return {
        "error": float(np.mean(np.abs(s - r))),
        "real_gap": float(r[hi] - r[lo]),
        "gap": float(s[hi] - s[lo]),
        "sign": bool(s[hi] > s[lo]),
    }


def corr_relation(syn, real, a, b) -> dict:
    """Error and sign of the Spearman correlation of ``a`` and ``b`` (complete rows)."""

    def rho(df) -> float:
        pair = df[[a, b]].apply(pd.to_numeric, errors="coerce").dropna()
        value = pair[a].corr(pair[b], method="spearman") if len(pair) > 2 else math.nan
        return 0.0 if math.isnan(value) else float(value)

    real_rho, syn_rho = rho(real), rho(syn)
    return {
        "error": abs(syn_rho - real_rho),
        "real_gap": real_rho,
        "gap": syn_rho,
        "sign": bool(np.sign(syn_rho) == np.sign(real_rho)),
    }


def score(table: str, syn: pd.DataFrame, real: pd.DataFrame) -> dict:
    """{"relations": {name: {error, real_gap, gap, sign}}, "relation_error": mean,
    "dup_rate": synthetic rows equal to an earlier one, "real_dup_rate": the private rows'}."""
    out = {"dup_rate": _dup_rate(syn), "real_dup_rate": _dup_rate(real)}
    spec = load(table)
    if spec is None:
        return out
    rel = {}
    for kind, col in spec["rates"]:
        rel[f"{spec['outcome'][0]} by {col}" + (" quartile" if kind == "quartiles" else "")] = (
            rate_relation(syn, real, spec, kind, col)
        )
    for a, b in spec["corr"]:
        rel[f"ρ({a}, {b})"] = corr_relation(syn, real, a, b)
    out["relations"] = rel
    out["relation_error"] = float(np.mean([v["error"] for v in rel.values()]))
    return out


def _dup_rate(df: pd.DataFrame) -> float:
    return float(df.astype(str).duplicated().mean())
