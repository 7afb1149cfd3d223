"""Tabular PE against AIM, MST and independent marginals on real mixed tables (one run, same seeds).

    python benchmarks/tabular.py                         # both tables, ε ∈ {0.5, 1, 4}, seed 0
    python benchmarks/tabular.py --tables credit_data --epsilons 1 --methods privevo independent

Each table is split 80/20 (fixed seed 0): the 80% is the private table, the
20% the held-out test set of the downstream task. δ = 1/(n·ln n), n the
private rows. Columns: 1-way and 2-way marginal TVD against the private rows
(10 equal-width bins of each numeric column's public domain,
:func:`privevo.metrics.marginal_tvd`), downstream accuracy (gradient boosting
trained on as many synthetic rows as private ones, at most 10 000, tested on
the held-out rows, :func:`privevo.metrics.downstream_accuracy`), fit seconds
(wall clock, and the process's CPU seconds, which a loaded machine does not
inflate).

Tables: credit_data, gss_wages and flights (a fixed 30 000-row sample of
nycflights13, two skewed delay columns), metadata in ``tabular_data.py``.

Methods: ``privevo`` (:class:`privevo.TabularPE`, defaults: budget split and rounds
from public inputs); its ablation, each the default with one part switched off:
``privevo_coarse`` (no tree levels, no pairs: the 1-way marginals and rounds only),
``privevo_nopairs`` (no pairs), ``privevo_nocdf`` (rounds in the linear space),
``privevo_32`` (``privevo_coarse`` at 32 bins); ``independent``
(each column's noisy 10-bin histogram with the whole budget, columns sampled
independently), ``aim`` and ``mst`` (smartnoise-synth on the same 10 public
bins: numeric columns enter as bin indices, missing values as a category of
their own, and their output bins are filled uniformly, as privevo's are;
rows drawn i.i.d. with mbi's ``method="sample"``; AIM capped at 2 × columns
rounds), ``aim32`` and ``mst32`` (the same at 32 bins), and ``real`` (the held-out
rows themselves: the sampling floor). AIM/MST need smartnoise-synth (see
benchmarks/README.md; it is not a privevo dependency). Results are appended
to ``--out`` (JSON lines) as each run finishes (a rerun of the same table,
method, ε and seed replaces the earlier row in the table); ``--table-only``
prints the Markdown table of a results file (mean over seeds, ± its standard
error where there are several).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import tabular_data  # noqa: E402
from privevo import TabularPE, accounting  # noqa: E402
from privevo.metrics import (  # noqa: E402
    downstream_accuracy,
    marginal_tvd,
    numeric_errors,
    quantile_tvd,
)
from privevo.tabular import TableEmbedding, decode_codes, encode_table  # noqa: E402
from privevo.tabular.marginals import (  # noqa: E402
    cell_sampler,
    cells_of,
    noisy_marginals,
    probabilities,
)

BINS = 10
METHODS = (
    "real",
    "independent",
    "privevo",
    "privevo_coarse",
    "privevo_nopairs",
    "privevo_nocdf",
    "privevo_32",
    "mst",
    "aim",
    "mst32",
    "aim32",
)


def split(df, seed: int = 0):
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(df))
    cut = int(0.8 * len(df))
    return df.iloc[order[:cut]].reset_index(drop=True), df.iloc[order[cut:]].reset_index(drop=True)


def independent(train, meta, epsilon, delta, seed):
    """Each column's noisy histogram (μ split evenly: σ = √C/μ), columns sampled independently."""
    rng = np.random.default_rng(seed)
    emb = TableEmbedding(meta)
    sigma = math.sqrt(len(meta.columns)) / accounting.mu_of_epsilon(epsilon, delta)
    noisy = noisy_marginals(encode_table(train, meta), emb, BINS, sigma, rng).value
    codes = np.column_stack(
        [
            cell_sampler(s, BINS, probabilities(h))(len(train), rng)
            for s, h in zip(meta.columns, noisy)
        ]
    )
    return decode_codes(codes, meta)


def privevo(**options):
    """:class:`privevo.TabularPE` with its defaults, or with ``options`` (the ablation)."""

    def run(train, meta, epsilon, delta, seed):
        model = TabularPE(epsilon, delta, meta, random_state=seed, **options)
        return model.fit(train).sample(len(train))

    return run


ABLATION = {  # what each part of the budget buys: the default with one part switched off
    "privevo_coarse": {"refine_share": 0.0, "pair_share": 0.0},  # 1-way bins + rounds only
    "privevo_nopairs": {"pair_share": 0.0},  # + the numeric tree levels and their CDF
    "privevo_nocdf": {"cdf": False},  # all releases, rounds in the linear space
    "privevo_32": {"refine_share": 0.0, "pair_share": 0.0, "bins": 32},  # the old 32-bin run
}


def smartnoise(kind: str, bins: int = BINS):
    def run(train, meta, epsilon, delta, seed):
        import pandas as pd
        from snsynth import Synthesizer

        emb = TableEmbedding(meta)
        cells = pd.DataFrame(cells_of(encode_table(train, meta), emb, bins), columns=meta.names)
        options = {"rounds": 2 * len(meta.columns)} if kind == "aim" else {}
        synth = Synthesizer.create(kind, epsilon=epsilon, delta=delta, **options)
        synth.fit(cells, categorical_columns=meta.names, preprocessor_eps=0.0)
        out = _sample_iid(synth, len(train))
        return _fill_bins(out[meta.names].to_numpy(), meta, bins, seed)

    return run


def _sample_iid(synth, n: int):
    """Rows drawn i.i.d. from the fitted graphical model (mbi's ``method="sample"``)."""
    cls = type(
        synth.synthesizer
    )  # mbi's MarkovRandomField: its default method="round" fabricates correlations
    draw = cls.synthetic_data
    cls.synthetic_data = lambda self, rows=None: draw(self, rows=rows, method="sample")
    try:
        return synth.sample(n)
    finally:
        cls.synthetic_data = draw


def _fill_bins(cells: np.ndarray, meta, bins: int, seed: int):
    """Codes from cells: a numeric bin becomes a value drawn uniformly inside it (as privevo's)."""
    rng = np.random.default_rng(seed)
    codes = cells.astype(float)
    for j, spec in enumerate(meta.columns):
        if spec.is_numeric:
            for cell in np.unique(cells[:, j]):
                rows = np.flatnonzero(cells[:, j] == cell)
                p = np.zeros(bins + 1)
                p[int(cell)] = 1.0
                codes[rows, j] = cell_sampler(spec, bins, p)(len(rows), rng)
    return decode_codes(codes, meta)


RUNNERS = {
    "independent": independent,
    "privevo": privevo(),
    **{name: privevo(**options) for name, options in ABLATION.items()},
    "mst": smartnoise("mst"),
    "aim": smartnoise("aim"),
    "mst32": smartnoise("mst", 32),
    "aim32": smartnoise("aim", 32),
}


DOWNSTREAM_ROWS = 10_000  # training rows of the downstream classifier (synthetic and real alike)


def evaluate(syn, train, test, meta, target) -> dict:
    acc = downstream_accuracy(
        syn.iloc[:DOWNSTREAM_ROWS], train.iloc[:DOWNSTREAM_ROWS], test, target, meta
    )
    if syn is test:  # the "real" row: the classifier trained on real rows
        acc["synthetic"], acc["synthetic_auc"] = acc["real"], acc["real_auc"]
    values = numeric_errors(train, syn, meta)
    return {
        "tvd1": marginal_tvd(train, syn, meta, 1, BINS),
        "tvd2": marginal_tvd(train, syn, meta, 2, BINS),
        "tvd2_deciles": quantile_tvd(train, syn, meta, 2),
        "tvd3_deciles": quantile_tvd(train, syn, meta, 3),
        "w1_sd_max": max((v["w1_sd"] for v in values.values()), default=0.0),
        "median_error_max": max((abs(v["median"]) for v in values.values()), default=0.0),
        "numeric": values,
        "auc": acc["synthetic_auc"],
        "real_auc": acc["real_auc"],
        "accuracy": acc["synthetic"],
        "real_accuracy": acc["real"],
        "majority": acc["majority"],
    }


def run(args) -> None:
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    for table in args.tables:
        df, meta, target = tabular_data.load(table)
        train, test = split(df)
        delta = 1.0 / (len(train) * math.log(len(train)))
        for seed in args.seeds:
            for method in args.methods:
                for eps in [None] if method == "real" else args.epsilons:
                    row = {
                        "table": table,
                        "rows": len(train),
                        "method": method,
                        "epsilon": eps,
                        "delta": delta,
                        "seed": seed,
                    }
                    tic, cpu = time.perf_counter(), time.process_time()
                    try:
                        syn = (
                            test
                            if method == "real"
                            else RUNNERS[method](train, meta, eps, delta, seed)
                        )
                    except ImportError as err:
                        print(f"skip {method}: {err}", file=sys.stderr)
                        break
                    row["fit_seconds"] = time.perf_counter() - tic
                    row["fit_cpu_seconds"] = time.process_time() - cpu  # all threads: load-proof
                    row.update(evaluate(syn, train, test, meta, target))
                    with open(out, "a") as handle:
                        handle.write(json.dumps(row) + "\n")
                    print(json.dumps(row), flush=True)


def cpu_seconds(rs) -> str:
    """Mean CPU seconds of the fits that logged them (rows before it existed: "—")."""
    logged = [r["fit_cpu_seconds"] for r in rs if "fit_cpu_seconds" in r]
    return f"{np.mean(logged):.1f} (n={len(logged)})" if logged else "—"


def table(path) -> str:
    latest = {}  # a rerun of the same (table, method, ε, seed) replaces the earlier row
    for line in open(path):
        if line.strip():
            r = json.loads(line)
            latest[(r["table"], r["method"], r["epsilon"], r["seed"])] = r
    groups: dict = {}
    for r in latest.values():
        groups.setdefault(
            (r["table"], r["epsilon"] or 0, METHODS.index(r["method"]), r["method"]), []
        ).append(r)
    lines = [
        "| table | ε | method | 1-way TVD | 2-way TVD | 2-way TVD, deciles | 3-way, deciles "
        "| max W1/sd | max median error | accuracy (real-trained) | AUC | fit s | fit CPU s "
        "| seeds |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for (tab, eps, _, method), rs in sorted(groups.items()):

        def mean(key: str, rs=rs) -> float:
            return float(np.mean([r[key] for r in rs]))

        def se(key: str, rs=rs) -> str:  # standard error of the mean over seeds
            if len(rs) < 2:
                return ""
            return f" ± {np.std([r[key] for r in rs], ddof=1) / math.sqrt(len(rs)):.3f}"

        def get(key: str, rs=rs) -> str:  # rows logged before a metric existed show "—"
            if not all(key in r for r in rs):
                return "—"
            return f"{mean(key):.3f}{se(key)}"

        lines.append(
            f"| {tab} | {eps or '—'} | {method} | {mean('tvd1'):.3f} | "
            f"{mean('tvd2'):.3f}{se('tvd2')} | {get('tvd2_deciles')} | {get('tvd3_deciles')} | "
            f"{get('w1_sd_max')} | {get('median_error_max')} | "
            f"{mean('accuracy'):.3f}{se('accuracy')} ({mean('real_accuracy'):.3f}) | "
            f"{get('auc')} | "
            f"{mean('fit_seconds'):.1f} | {cpu_seconds(rs)} | {len(rs)} |"
        )
    return "\n".join(lines)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--tables", nargs="+", default=list(tabular_data.TABLES))
    p.add_argument("--epsilons", nargs="+", type=float, default=[0.5, 1.0, 4.0])
    p.add_argument("--seeds", nargs="+", type=int, default=[0])
    p.add_argument("--methods", nargs="+", choices=METHODS, default=list(METHODS))
    p.add_argument("--out", default="benchmarks/out/tabular.jsonl")
    p.add_argument("--table-only", action="store_true", help="print the table of --out and exit")
    args = p.parse_args()
    if not args.table_only:
        run(args)
    print(table(args.out))


if __name__ == "__main__":
    main()
