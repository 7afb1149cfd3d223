"""Public structure a description declares beyond the domains (docs/tabular.md, "Public
structure"): numerics with a finite set of values, and categories that may be empty.

Both act on the synthetic side only, as post-processing:

- ``numeric values 3.1, 4.5, 6.0`` or ``numeric LO..HI step S``: every synthetic value is
  snapped to the nearest allowed value (:func:`snap`); the fit measures the values as any
  numeric column's.
- ``| may be empty`` on a categorical or boolean column: a category whose released count c̃
  is below z·σ (z = :data:`EMPTY_Z`, σ the 1-way release's noise) cannot be told from an
  empty one, and gets no synthetic mass (:func:`without_empty`). At z = 2, a category with
  no row keeps mass with probability Φ(−2) ≈ 2.3 %; one with 3σ rows is removed with
  probability Φ(−1) ≈ 16 %: a category that is rare but real may vanish, hence a keyword.
"""

from __future__ import annotations

import csv
import math

import numpy as np

__all__ = ["EMPTY_Z", "check_structure", "parse_domain", "snap", "without_empty"]

EMPTY_Z = 2.0


def check_structure(spec, where: str) -> None:
    """The structure fields of a :class:`~.metadata.ColumnSpec` fit its kind and domain."""
    if spec.may_be_empty and spec.kind == "numeric":
        raise ValueError(
            f"{where}: 'may be empty' is for categorical and boolean columns (a numeric "
            "column's empty bins already get no mass)"
        )
    if spec.values is None and spec.step is None:
        return
    if spec.kind != "numeric":
        raise ValueError(f"{where}: 'values' and 'step' are for numeric columns")
    if spec.values is not None and spec.step is not None:
        raise ValueError(f"{where}: give either 'values' or 'step', not both")
    if spec.values is not None:
        _check_values(spec, where)
    else:
        _check_step(spec, where)


def _check_values(spec, where: str) -> None:
    try:
        values = [float(v) for v in spec.values if not isinstance(v, bool)]
    except (TypeError, ValueError):
        values = []
    if len(values) != len(spec.values) or not all(math.isfinite(v) for v in values):
        raise ValueError(f"{where}: 'values' must be finite numbers, e.g. values 3.1, 4.5, 6")
    if len(set(values)) != len(values) or len(values) < 2:
        raise ValueError(f"{where}: 'values' needs two or more values, each listed once")
    if min(values) < spec.lower or max(values) > spec.upper:
        raise ValueError(f"{where}: 'values' must lie in [lower, upper]")
    if spec.integer and any(v != round(v) for v in values):
        raise ValueError(f"{where}: an integer column's 'values' must be whole numbers")


def _check_step(spec, where: str) -> None:
    step = spec.step
    if isinstance(step, bool) or not isinstance(step, (int, float)) or not step > 0:
        raise ValueError(f"{where}: 'step' must be a number > 0, e.g. step 0.5")
    if not math.isfinite(step) or step > spec.upper - spec.lower:
        raise ValueError(f"{where}: 'step' must be at most upper - lower")
    if spec.integer and step != round(step):
        raise ValueError(f"{where}: an integer column's 'step' must be a whole number")
    if step == 1 and (spec.integer or spec.lower == round(spec.lower)):
        raise ValueError(
            f"{where}: step 1 from a whole lower bound is what 'integer' says; declare it "
            f"'integer {spec.lower:g}..{spec.upper:g}' without a step"
        )


def parse_domain(name: str, domain: str) -> dict:
    """A description's numeric domain: ``LO..HI``, ``LO..HI step S`` or ``values V1, V2, …``
    as ColumnSpec fields (``values``: lower and upper are their least and greatest)."""
    if domain.startswith("values"):
        cells = [c.strip() for c in next(csv.reader([domain[6:]])) if c.strip()]
        try:
            values = tuple(float(c) for c in cells)
        except ValueError:
            raise ValueError(
                f"column {name!r}: write its values as numbers, e.g. 'values 3.1, 4.5, 6'"
            ) from None
        if len(values) < 2:
            raise ValueError(f"column {name!r}: 'values' needs two or more values")
        return {"lower": min(values), "upper": max(values), "values": values}
    span, _, step = domain.partition(" step ")
    lo, _, hi = span.partition("..")
    try:
        lower, upper = float(lo), float(hi)
        step_value = float(step) if step.strip() else None
    except ValueError:
        raise ValueError(
            f"column {name!r}: write its domain as LO..HI (optionally 'step S') or "
            f"'values V1, V2, ...', got {domain!r}"
        ) from None
    return {"lower": lower, "upper": upper, "step": step_value}


def snap(values: np.ndarray, spec) -> np.ndarray:
    """Every value moved to the nearest allowed value of ``spec`` (missing stays missing;
    a tie goes to the lower one); the values unchanged without ``values`` or ``step``."""
    if spec.values is not None:
        allowed = np.sort(np.asarray(spec.values, dtype=float))
        right = np.clip(np.searchsorted(allowed, values), 1, len(allowed) - 1)
        left = right - 1
        pick = np.where(values - allowed[left] <= allowed[right] - values, left, right)
        return np.where(np.isnan(values), np.nan, allowed[pick])
    if spec.step is not None:
        top = math.floor((spec.upper - spec.lower) / spec.step + 1e-9)
        k = np.clip(np.round((values - spec.lower) / spec.step), 0, top)
        return np.round(spec.lower + k * spec.step, 10)  # 0.1 + 2·0.1 as 0.3
    return values


def without_empty(marginals: dict | None, metadata) -> dict | None:
    """The 1-way targets with every category of a ``may be empty`` column whose released count
    is below :data:`EMPTY_Z`·σ set to 0 (renormalised; a column none of whose categories
    passes is left as released: nothing in it stands out of the noise).

    Post-processing of the released counts ``marginals["noisy"]`` and their public σ."""
    if marginals is None or not any(s.may_be_empty for s in metadata.columns):
        return marginals
    sigma = marginals["release"].sigma
    targets = list(marginals["targets"])
    for j, spec in enumerate(metadata.columns):
        if not spec.may_be_empty:
            continue
        noisy = np.asarray(marginals["noisy"][j], dtype=float)
        p = np.where(noisy >= EMPTY_Z * sigma, targets[j], 0.0)
        if p.sum() > 0:
            targets[j] = p / p.sum()
    return {**marginals, "targets": targets}
