"""The small mixed-kind table most tabular tests read, and its public description."""

from __future__ import annotations

import numpy as np

DESCRIPTION = """
color: categorical red, green, blue, other | other=other
shade: categorical dark, light | nullable | dtype=category
size: integer 0..100
weight: numeric 0..10 | nullable
flag: boolean
"""


def small_table(n: int = 400, seed: int = 0):
    """``n`` rows of every column kind: categorical (with nulls), integer, numeric, boolean."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    color = rng.choice(["red", "green", "blue"], size=n, p=[0.6, 0.3, 0.1])
    size = np.where(color == "red", rng.integers(10, 30, n), rng.integers(60, 90, n))
    weight = np.round(rng.uniform(0, 10, n), 2)
    weight[rng.random(n) < 0.1] = np.nan
    shade = pd.Series(rng.choice(["dark", "light"], size=n), dtype="category")
    shade[rng.random(n) < 0.05] = np.nan
    return pd.DataFrame(
        {
            "color": color,
            "shade": shade,
            "size": size.astype(np.int64),
            "weight": weight,
            "flag": color == "red",
        }
    )
