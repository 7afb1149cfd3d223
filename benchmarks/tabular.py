"""Tabular PE against AIM, MST and independent marginals on real mixed tables (one run, same seeds).

    python benchmarks/tabular.py                         # both tables, ε ∈ {0.5, 1, 4}, seed 0
    python benchmarks/tabular.py --tables credit_data --epsilons 1 --methods privevo independent

Each table is split 80/20 (fixed seed 0): the 80% is the private table, the
20% the held-out test set of the downstream task. δ = 1/(n·ln n), n the
private rows. Columns: 1-way and 2-way marginal TVD against the private rows
(10 equal-width bins of each numeric column's public domain,
:func:`privevo.evaluation.marginal_tvd`), downstream accuracy (gradient boosting
trained on as many synthetic rows as private ones, at most 10 000, tested on
the held-out rows, :func:`privevo.metrics.downstream_accuracy`), fit seconds
(wall clock, and the process's CPU seconds, which a loaded machine does not
inflate).

Tables: credit_data, gss_wages and flights (a fixed 30 000-row sample of
nycflights13, two skewed delay columns), and two tables with a binary outcome whose
descriptions were written from their codebook alone: hmda (AER::HMDA, mortgage denial)
and creditcard (AER::CreditCard, card acceptance); metadata in ``tabular_data.py``.

Relations (``tabular_relations.py``): each table's public ``data/<table>.relations``
declares its outcome and the relations of it (its rate by each named column, by quartiles
of numeric ones, one Spearman correlation); every run scores each relation's error and
whether its sign is kept, and the exact-duplicate rate of the rows.
``--relations-only`` prints the relations tables of ``--out``.

    python benchmarks/tabular.py --tables hmda creditcard --epsilons 1 --seeds 0 1 2 3 4 \
        --methods real resample privevo privevo_target mst32 aim32

Each run's synthetic rows are cached (``--cache``, one file per table, method, ε and
seed), so a rerun reuses the slow baselines and ``--fresh privevo privevo_target``
refits TabularPE's rows alone.

Methods: ``privevo`` (:class:`privevo.TabularPE`, defaults: budget split and rounds
from public inputs); ``privevo_target`` (the same with ``target=`` the table's downstream
target); its ablation, each the default with one part switched off:
``privevo_coarse`` (no tree levels, no pairs: the 1-way marginals and rounds only),
``privevo_nopairs`` (no pairs), ``privevo_nocdf`` (rounds in the linear space),
``privevo_32`` (``privevo_coarse`` at 32 bins), ``privevo_norounds`` (the PE rounds
left out of the output, their budget still spent), ``privevo_lv4`` (trees 4 levels deep),
``privevo_m30`` (1-way marginals at 30 % of what refinements and pairs leave, the rounds
the other 70 %), ``privevo_pool100k`` (an output pool of 100 000 rows, not 50 000),
``privevo_nogrow`` (the pool not grown where the draw would repeat rows), ``privevo_iid``
(``privevo_nogrow`` sampled by independent draws, not systematically); ``independent``
(each column's noisy 10-bin histogram with the whole budget, columns sampled
independently), ``aim`` and ``mst`` (smartnoise-synth on the same 10 public
bins: numeric columns enter as bin indices, missing values as a category of
their own, and their output bins are filled uniformly, as privevo's are;
rows drawn i.i.d. with mbi's ``method="sample"``; AIM capped at 2 × columns
rounds), ``aim32`` and ``mst32`` (the same at 32 bins), ``real`` (the held-out
rows themselves) and ``resample`` (the private rows drawn with replacement, as many as
there are: the sampling floor at the private table's size; neither is DP). AIM/MST need
smartnoise-synth (see benchmarks/README.md; it is not a privevo dependency). Results are appended
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
import tabular_relations as relations  # noqa: E402
from privevo import TabularPE, accounting  # noqa: E402
from privevo.evaluation import (  # noqa: E402
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
from privevo.tabular.pool import pool_rows  # noqa: E402

BINS = 10
NOT_DP = ("real", "resample")  # reference rows: no ε
METHODS = (
    "real",
    "resample",
    "independent",
    "privevo",
    "privevo_target",
    "privevo_coarse",
    "privevo_nopairs",
    "privevo_nocdf",
    "privevo_32",
    "privevo_norounds",
    "privevo_lv4",
    "privevo_m30",
    "privevo_tree",
    "privevo_pool100k",
    "privevo_nogrow",
    "privevo_iid",
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


def privevo(estimator=TabularPE, **options):
    """:class:`privevo.TabularPE` with its defaults, or with ``options`` (the ablation)."""

    def run(train, meta, epsilon, delta, seed):
        model = estimator(epsilon, delta, meta, random_state=seed, **options)
        return model.fit(train).sample(len(train))

    return run


class WithoutRounds(TabularPE):
    """The default fit with its PE rounds left out of the output (their share of μ² still
    spent): the pool is the tree model's rows alone, fitted to every measurement but the
    rounds' votes. What the rounds' information buys."""

    def _output(self, engine, embedding, marginals):
        codes = pool_rows(engine.random_api, self.pool, self._publish_rng)
        return self._fit_pool(engine.random_api, embedding, marginals, codes, [])


class IndependentDraws(TabularPE):
    """The default fit without its pool's growth, sampled by ``n`` independent draws ∝ the
    weights (with replacement) instead of the systematic draw: what the draw does to
    duplicate rows."""

    def _draw(self, n, rng):
        return rng.choice(len(self.codes_), size=n, p=self.weights_ / self.weights_.sum())


ABLATION = {  # what each part of the budget buys: the default with one part switched off
    "privevo_coarse": {"refine_share": 0.0, "pair_share": 0.0},  # 1-way bins + rounds only
    "privevo_nopairs": {"pair_share": 0.0},  # + the numeric tree levels and their CDF
    "privevo_nocdf": {"cdf": False},  # all releases, rounds in the linear space
    "privevo_32": {"refine_share": 0.0, "pair_share": 0.0, "bins": 32},  # the old 32-bin run
    "privevo_lv4": {"levels": 4},  # trees 4 levels deep (40 960 leaves), not 2
    "privevo_m30": {"marginal_share": 0.3},  # the rounds get 70 % of the rest, not 50 %+
    "privevo_tree": {"pair_selection": "tree"},  # MST's one tree, not the adaptive rounds
    "privevo_pool100k": {"pool": 100_000},  # twice the output pool (duplicate rows)
    "privevo_nogrow": {"pool_growth": 0},  # the pool as drawn, no variations of its heavy rows
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


def resample(train, meta, epsilon, delta, seed):
    """The private rows themselves, drawn with replacement (not DP): every metric's sampling
    floor at the private table's size."""
    rng = np.random.default_rng(seed)
    return train.iloc[rng.integers(0, len(train), len(train))].reset_index(drop=True)


RUNNERS = {
    "resample": resample,
    "independent": independent,
    "privevo": privevo(),
    **{name: privevo(**options) for name, options in ABLATION.items()},
    "privevo_norounds": privevo(WithoutRounds),
    "privevo_iid": privevo(IndependentDraws, pool_growth=0),
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
    """Every (seed, table, method, ε), seeds outermost: a run cut short has as many seeds of
    every method."""
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tables = {}
    for table in args.tables:
        df, meta, target = tabular_data.load(table)
        tables[table] = (*split(df), meta, target)
    skipped = set()
    for seed in args.seeds:
        for table, (train, test, meta, target) in tables.items():
            delta = 1.0 / (len(train) * math.log(len(train)))
            for method in [m for m in args.methods if m not in skipped]:
                for eps in [None] if method in NOT_DP else args.epsilons:
                    row = {
                        "table": table,
                        "rows": len(train),
                        "method": method,
                        "epsilon": eps,
                        "delta": delta,
                        "seed": seed,
                    }
                    try:
                        syn, seconds = synthesize(args, row, train, test, meta)
                    except ImportError as err:
                        print(f"skip {method}: {err}", file=sys.stderr)
                        skipped.add(method)
                        break
                    row.update(seconds)
                    row.update(evaluate(syn, train, test, meta, target))
                    row.update(relations.score(table, syn, train))
                    with open(out, "a") as handle:
                        handle.write(json.dumps(row) + "\n")
                    print(json.dumps(row), flush=True)


def synthesize(args, row: dict, train, test, meta):
    """(synthetic rows, fit seconds) of one run: from the cache file of its table, method, ε
    and seed when there is one (unless the method is in ``--fresh``), else fitted and cached
    (the slow baselines then run once; TabularPE's rows rerun alone with ``--fresh privevo``)."""
    import pandas as pd

    method, eps, seed = row["method"], row["epsilon"], row["seed"]
    if method == "real":  # the held-out rows themselves (evaluate() knows them by identity)
        return test, {"fit_seconds": 0.0, "fit_cpu_seconds": 0.0}
    path = Path(args.cache) / row["table"] / f"{method}_eps{eps}_seed{seed}.pkl"
    if args.cache and path.exists() and method not in args.fresh:
        cached = pd.read_pickle(path)
        return cached["rows"], cached["seconds"]
    tic, cpu = time.perf_counter(), time.process_time()
    runner = RUNNERS.get(method)
    if method == "privevo_target":  # the table's outcome declared: TabularPE(target=...)
        runner = privevo(target=tabular_data.TABLES[row["table"]][3])
    syn = runner(train, meta, eps, row["delta"], seed)
    seconds = {
        "fit_seconds": time.perf_counter() - tic,
        "fit_cpu_seconds": time.process_time() - cpu,  # all threads: load-proof
    }
    if args.cache:
        path.parent.mkdir(parents=True, exist_ok=True)
        pd.to_pickle({"rows": syn, "seconds": seconds}, path)
    return syn, seconds


def results(path) -> dict:
    """{(table, ε, method): [row per seed]}; a rerun of the same (table, method, ε, seed)
    replaces the earlier row."""
    latest = {}
    for line in open(path):
        if line.strip():
            r = json.loads(line)
            latest[(r["table"], r["method"], r["epsilon"], r["seed"])] = r
    groups: dict = {}
    for r in latest.values():
        groups.setdefault((r["table"], r["epsilon"] or 0, r["method"]), []).append(r)
    return dict(sorted(groups.items(), key=lambda g: (g[0][0], g[0][1], METHODS.index(g[0][2]))))


def summary(values) -> str:
    """Mean, ± its standard error over the seeds where there are several."""
    values = [float(v) for v in values]
    if len(values) < 2:
        return f"{np.mean(values):.3f}"
    return f"{np.mean(values):.3f} ± {np.std(values, ddof=1) / math.sqrt(len(values)):.3f}"


def table(groups: dict) -> str:
    """One row per (table, ε, method): every metric, mean ± standard error over the seeds."""
    lines = [
        "| table | ε | method | seeds | 2-way TVD, public bins | 2-way, deciles | 3-way, deciles "
        "| max W1/sd | max \\|median err\\| | 1-way TVD | AUC | accuracy | fit s | fit CPU s |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for (tab, eps, method), rs in groups.items():
        cells = [
            summary(r[key] for r in rs)
            for key in (
                "tvd2",
                "tvd2_deciles",
                "tvd3_deciles",
                "w1_sd_max",
                "median_error_max",
                "tvd1",
                "auc",
                "accuracy",
            )
        ]
        seconds = [f"{np.mean([r[k] for r in rs]):.1f}" for k in ("fit_seconds", "fit_cpu_seconds")]
        lines.append(
            f"| {tab} | {eps or '—'} | {method} | {len(rs)} | " + " | ".join(cells + seconds) + " |"
        )
    return "\n".join(lines)


VALUE_METHODS = ("privevo", "aim32", "mst32")


def values_table(groups: dict) -> str:
    """Per numeric column: |median error| (relative; mean over seeds) of TabularPE, AIM-32,
    MST-32 and the resampled private rows (the floor), TabularPE's median error in units of
    the real sd, and each method's W1/sd."""
    methods = (*VALUE_METHODS, "resample")
    head = " | ".join(f"\\|median err\\| {m}" for m in methods)
    head += " | \\|median err\\|/sd privevo | " + " | ".join(f"W1/sd {m}" for m in VALUE_METHODS)
    lines = [f"| table | column | {head} |", "|---|---|" + "---|" * 8]
    for tab in dict.fromkeys(t for t, _, _ in groups):
        runs = {m: groups.get((tab, 1.0, m), []) for m in VALUE_METHODS}
        runs["resample"] = groups.get((tab, 0, "resample"), [])
        if not runs["privevo"]:
            continue
        for column in runs["privevo"][0]["numeric"]:

            def mean(method, key, column=column, runs=runs) -> str:
                values = [abs(r["numeric"][column][key]) for r in runs[method]]
                return f"{np.mean(values):.3f}" if values else "—"

            cells = [mean(m, "median") for m in methods] + [mean("privevo", "median_sd")]
            cells += [mean(m, "w1_sd") for m in VALUE_METHODS]
            lines.append(f"| {tab} | {column} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def time_table(groups: dict) -> str:
    """Fit seconds of TabularPE and AIM side by side (the same run) and their ratio."""
    lines = [
        "| table | ε | privevo CPU s | aim32 CPU s | privevo / aim32 (CPU) "
        "| privevo / aim32 (wall) |",
        "|---|---|---|---|---|---|",
    ]
    for tab, eps in dict.fromkeys((t, e) for t, e, _ in groups):
        runs = {m: groups.get((tab, eps, m)) for m in ("privevo", "aim32")}
        if not runs["privevo"] or not runs["aim32"]:
            continue

        def mean(method, key, runs=runs) -> float:
            return float(np.mean([r[key] for r in runs[method]])) if runs[method] else math.nan

        ratio = mean("privevo", "fit_cpu_seconds") / mean("aim32", "fit_cpu_seconds")
        wall = mean("privevo", "fit_seconds") / mean("aim32", "fit_seconds")
        lines.append(
            f"| {tab} | {eps or '—'} | {mean('privevo', 'fit_cpu_seconds'):.1f} | "
            f"{mean('aim32', 'fit_cpu_seconds'):.1f} | {ratio:.3f} | {wall:.3f} |"
        )
    return "\n".join(lines)


RELATION_METHODS = (
    "real",
    "resample",
    "privevo",
    "privevo_tree",
    "privevo_target",
    "aim32",
    "mst32",
)


def relations_table(groups: dict) -> str:
    """Per table and method (ε = 1, or the reference rows): the mean relation error, how many
    declared relations keep their sign in at least 4 of 5 seeds (of those scored), AUC,
    decile 2- and 3-way TVD and the exact-duplicate rate (tabular_relations.py)."""
    lines = [
        "| table | method | seeds | relation error | relations with sign kept ≥ 4/5 | AUC "
        "| 2-way, deciles | 3-way, deciles | duplicate rows | fit CPU s |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for (tab, eps, method), rs in groups.items():
        if method not in RELATION_METHODS or eps not in (0, 1.0) or "relations" not in rs[0]:
            continue
        kept = _signs_kept(rs)
        held = sum(k >= 0.8 * len(rs) for k, _ in kept.values())
        cells = [summary(r[k] for r in rs) for k in ("relation_error", "auc")]
        cells += [summary(r[k] for r in rs) for k in ("tvd2_deciles", "tvd3_deciles")]
        dup = f"{100 * np.mean([r['dup_rate'] for r in rs]):.1f} %"
        cpu = f"{np.mean([r['fit_cpu_seconds'] for r in rs]):.1f}"
        lines.append(
            f"| {tab} | {method} | {len(rs)} | {cells[0]} | {held} of {len(kept)} | "
            + " | ".join([*cells[1:], dup, cpu])
            + " |"
        )
    return "\n".join(lines)


def _signs_kept(rs: list) -> dict:
    """{relation: (seeds keeping its sign, real gap)}, relations with a sign to keep only."""
    out = {}
    for name, first in rs[0]["relations"].items():
        if first["sign"] is not None:
            out[name] = (sum(bool(r["relations"][name]["sign"]) for r in rs), first["real_gap"])
    return out


def relation_signs_table(groups: dict) -> str:
    """Per declared relation: its gap in the private rows (the outcome's rate in the real rows'
    highest-rate group less the lowest, or Spearman's ρ) and, per method, the seeds keeping
    its sign and the mean error."""
    methods = [m for m in RELATION_METHODS if m not in ("real", "resample")]
    head = " | ".join(f"{m}: sign kept, error" for m in methods)
    lines = [f"| table | relation | real gap | {head} |", "|---|---|---|" + "---|" * len(methods)]
    for tab in dict.fromkeys(t for t, _, _ in groups):
        runs = {m: groups.get((tab, 1.0, m), []) for m in methods}
        runs = {m: rs for m, rs in runs.items() if rs and "relations" in rs[0]}
        if not runs:
            continue
        first = next(iter(runs.values()))
        for name in first[0]["relations"]:
            real_gap = first[0]["relations"][name]["real_gap"]
            cells = []
            for m in methods:
                rs = runs.get(m, [])
                errors = [r["relations"][name]["error"] for r in rs]
                kept = sum(bool(r["relations"][name]["sign"]) for r in rs)
                cells.append(f"{kept}/{len(rs)}, {np.mean(errors):.3f}" if rs else "—")
            lines.append(f"| {tab} | {name} | {real_gap:+.3f} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--tables", nargs="+", default=list(tabular_data.TABLES))
    p.add_argument("--epsilons", nargs="+", type=float, default=[0.5, 1.0, 4.0])
    p.add_argument("--seeds", nargs="+", type=int, default=[0])
    p.add_argument("--methods", nargs="+", choices=METHODS, default=list(METHODS))
    p.add_argument("--out", default="benchmarks/out/tabular.jsonl")
    p.add_argument(
        "--cache",
        default="benchmarks/out/tabular_cache",
        help="folder of each run's synthetic rows (reused on a rerun; '' for none)",
    )
    p.add_argument(
        "--fresh",
        nargs="*",
        default=[],
        choices=METHODS,
        help="methods refitted even where the cache holds their rows",
    )
    p.add_argument("--table-only", action="store_true", help="print the tables of --out and exit")
    p.add_argument(
        "--relations-only",
        action="store_true",
        help="print only the relations tables of --out (tabular_relations.py) and exit",
    )
    args = p.parse_args()
    if not (args.table_only or args.relations_only):
        run(args)
    groups = results(args.out)
    tables = [relations_table(groups), relation_signs_table(groups)]
    if not args.relations_only:
        tables = [table(groups), values_table(groups), time_table(groups), *tables]
    print(*tables, sep="\n\n")


if __name__ == "__main__":
    main()
