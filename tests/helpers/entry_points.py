"""Every entry point × input path × adjacency the generated-neighbour replay runs, in one table.

An :class:`EntryPoint` knows its input kind (so tests/helpers/neighbours.py generates its
neighbours), its adjacency, its base data D, and how to run it on any data and publish what it
publishes. :func:`check` runs the byte and sensitivity replays (tests/helpers/neighbour.py) on D
and every generated neighbour and returns what they find. tests/privacy/test_generated_neighbours.py
runs every row; tests/privacy/test_planted_leaks.py runs them against planted leaks.

privevo is imported inside the run functions, so that a patched copy of the package swapped into
``sys.modules`` (the planted-leak catalogue) is the one that runs.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from helpers import neighbours as gen
from helpers.neighbour import estimator_artefacts, files_in, neighbour_failures

SEED = 271828183  # distinctive seeds: no published artefact may contain their digits
CLI_SEED = "314159265"

# -- the base data ----------------------------------------------------------------------------


def points(n: int = 120, seed: int = 0) -> np.ndarray:
    """Three blobs in 2-D; the second column integer-valued (a CSV reader might type by it)."""
    rng = np.random.default_rng(seed)
    centres = np.array([[-1.0, -4.0], [1.0, 4.0], [1.0, -4.0]])
    X = centres[rng.integers(0, 3, n)] + rng.standard_normal((n, 2)) * [0.2, 1.0]
    X[:, 1] = np.round(X[:, 1])
    return X


def wide_points(n: int = 120, d: int = 40, seed: int = 0) -> np.ndarray:
    """Three blobs in 40-D: DPKMeans projects them (HDPE-means, a noisy second moment)."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((3, d))
    return centres[rng.integers(0, 3, n)] + 0.2 * rng.standard_normal((n, d))


def users(n: int = 120) -> tuple[np.ndarray, np.ndarray]:
    return points(n), np.arange(n) // 3


TABLE_DESCRIPTION = """
zip: categorical 01234, 02139, 10001, other | other=other
color: categorical red, green, blue
size: integer 0..100
weight: numeric 0..2000 | nullable
"""


def table(n: int = 120, seed: int = 0, sizes: int = 100):
    """Codes with leading zeros, a colour, an integer (``sizes`` values) and a nullable
    integer-looking number."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "zip": rng.choice(["01234", "02139", "10001"], n),
            "color": rng.choice(["red", "green", "blue"], n),
            "size": rng.integers(0, sizes, n),
            "weight": rng.integers(500, 1500, n),
        }
    )


# the same table with every structure keyword (docs/tabular.md, "Public structure")
STRUCTURE_DESCRIPTION = """
zip: categorical 01234, 02139, 10001, other | other=other | may be empty
color: categorical red, green, blue | may be empty
size: integer 0..100 step 5
ratio: derived weight / (size + 1)
weight: numeric values 0, 500, 750, 1000, 1250, 2000 | nullable
"""


# categories and a 21-value integer, the public n_rows far above the pool: a draw of n_rows
# repeats pool rows that nothing can spread apart, so the pool grows (docs/tabular.md,
# "Duplicate rows")
GROWTH_DESCRIPTION = """
n_rows: 2000
zip: categorical 01234, 02139, 10001, other | other=other
color: categorical red, green, blue
size: integer 0..20
"""


def small_table(n: int = 120, seed: int = 0):
    """Rows of :data:`GROWTH_DESCRIPTION`: few distinct values to tell them apart."""
    return table(n, seed, sizes=21).drop(columns="weight")


def table_metadata(description: str = TABLE_DESCRIPTION):
    from privevo.tabular import metadata_from_description

    return metadata_from_description(description)


def texts():
    from helpers.text_doubles import PRIVATE

    return list(PRIVATE)


def labelled_texts():
    from helpers.text_doubles import REVIEW_LABELS, REVIEWS

    return list(REVIEWS), list(REVIEW_LABELS)


# -- the table --------------------------------------------------------------------------------


@dataclass(frozen=True)
class EntryPoint:
    """One entry point on one input path under one adjacency."""

    name: str
    kind: str  # points, users, table, texts, labelled_texts
    adjacency: str
    make_run: Callable[[Path], Callable[[object], object]]  # tmp folder → run(data)
    data: Callable[[], object]
    fast: bool = False  # in ``make test-fast``
    description: str = TABLE_DESCRIPTION  # a table's public description (its neighbours' rows)

    @property
    def id(self) -> str:
        return f"{self.name}/{self.adjacency}"

    def neighbours(self) -> dict[str, object]:
        D = self.data()
        if self.kind == "points":
            return gen.point_neighbours(D, self.adjacency)
        if self.kind == "users":
            return gen.user_neighbours(D, self.adjacency)
        if self.kind == "table":
            return gen.table_neighbours(D, table_metadata(self.description), self.adjacency)
        if self.kind == "texts":
            return gen.text_neighbours(D, self.adjacency)
        return gen.labelled_text_neighbours(D, self.adjacency)


SWEEP_SIZES = (50, 64, 100)  # D cut to n, against n - 1 and n + 1: round-number thresholds


def prefix(data, n: int):
    """The first ``n`` records of any kind of base data."""
    if isinstance(data, tuple):
        return tuple(part[:n] for part in data)
    return data.iloc[:n] if hasattr(data, "iloc") else data[:n]


def size_of(data) -> int:
    return len(data[0]) if isinstance(data, tuple) else len(data)


def check(
    entry: EntryPoint, tmp_path: Path, neighbours: dict | None = None, sweep: bool = True
) -> list[str]:
    """What the byte and sensitivity replays and the seed scan find on ``entry`` (empty: none):
    D against every generated neighbour (or ``neighbours``), then, with ``sweep``, D cut to each
    of SWEEP_SIZES against one record less and one more."""
    run = entry.make_run(Path(tmp_path))
    D = entry.data()
    secrets = (str(SEED), CLI_SEED)
    found = neighbour_failures(
        run, D, entry.neighbours() if neighbours is None else neighbours, secrets=secrets
    )
    for n in SWEEP_SIZES if sweep and entry.adjacency == "add_remove" else ():  # replace: n public
        if n + 1 < size_of(D):
            sizes = {f"{n - 1} records": prefix(D, n - 1), f"{n + 1} records": prefix(D, n + 1)}
            found += [f"at {n} records: {f}" for f in neighbour_failures(run, prefix(D, n), sizes)]
    return found


# -- runs: the library ------------------------------------------------------------------------


def _pe(selector: str, adjacency: str, **fit):
    def make(tmp):
        def run(data):
            from privevo import PrivateEvolution
            from privevo.selection import make_selector
            from privevo.variation import GaussianVariation, UniformBall

            X, kw = (data[0], {"groups": data[1]}) if fit.get("users") else (data, {})
            options = {"R": 1.0} if selector.startswith("gape") else {}
            est = PrivateEvolution(
                UniformBall(8.0),
                GaussianVariation(0.3),
                make_selector(selector, **options),
                n_synthetic=6,
                iterations=2,
                epsilon=2.0,
                delta=1e-5,
                adjacency=adjacency,
                random_state=SEED,
            ).fit(X, **kw)
            return estimator_artefacts(est, "synthetic_")

        return run

    return make


def _dpkmeans(adjacency: str, path: str = "memory", **options):
    """DPKMeans on X in memory, or streamed: a Parquet folder (numeric columns by name, a text
    column left out) or a Dask array, both read block by block."""

    def make(tmp):
        def run(X):
            from privevo import DPKMeans

            source, columns = X, None
            if path == "parquet folder":
                import pandas as pd

                df = pd.DataFrame(np.asarray(X, dtype=np.float64), columns=["x", "y"])
                df["tag"] = "t"
                source, columns = _write_parquet(df, tmp / "points.parquet", True), ["x", "y"]
            elif path == "dask":
                import dask.array as da

                source = da.from_array(np.asarray(X, dtype=np.float64), chunks=(40, 2))
            est = DPKMeans(
                3,
                epsilon=2.0,
                delta=1e-5,
                radius=8.0,
                iterations=2,
                adjacency=adjacency,
                random_state=SEED,
                **options,
            ).fit(source, columns=columns)
            return estimator_artefacts(est, "cluster_centers_")

        return run

    return make


def _baseline(name: str, adjacency: str):
    def make(tmp):
        def run(X):
            from privevo import baselines

            cls = {"dplloyd": "DPLloyd", "fastlloyd": "FastLloyd", "lsh_tree": "LSHTreeKMeans"}
            # under replace n is public: the benchmarks' δ = n^-1.1 (the default δ's path is
            # the add/remove one, size-branched); with the default 1e-6 FastLloyd's centres on
            # D sit where no generated neighbour moves its sums by half their sensitivity
            delta = len(X) ** -1.1 if adjacency == "replace" else None
            est = getattr(baselines, cls[name])(
                3,
                epsilon=1.0,
                delta=delta,
                bounds=(-8.0, 8.0),
                adjacency=adjacency,
                random_state=SEED,
            ).fit(X)
            return estimator_artefacts(est, "cluster_centers_", "n_iter_")

        return run

    return make


def _write_parquet(df, path: Path, folder: bool, partition_cols=None) -> Path:
    shutil.rmtree(path, ignore_errors=True)
    if path.exists():
        path.unlink()
    if partition_cols:  # Hive sub-folders key=value, as pandas, Spark and Dask write them
        df.to_parquet(path, partition_cols=partition_cols)
        return path
    if not folder:
        df.to_parquet(path, row_group_size=50)
        return path
    path.mkdir(parents=True)
    half = len(df) // 2
    df.iloc[:half].to_parquet(path / "part-0.parquet", row_group_size=50)
    df.iloc[half:].to_parquet(path / "part-1.parquet", row_group_size=50)
    return path


def _tabular(
    adjacency: str,
    path: str = "memory",
    noise: str = "gaussian",
    target=None,
    description: str = TABLE_DESCRIPTION,
    pair_selection: str = "tree",
    **options,
):
    def make(tmp):
        def run(df):
            import pandas as pd

            from privevo import TabularPE

            source = df
            if path.startswith("parquet"):
                typed = df.astype({"zip": str, "color": str})
                typed = typed.astype({c: float for c in ("size", "weight")})
                partitions = ["zip"] if path == "parquet partitioned" else None
                source = _write_parquet(
                    typed, tmp / "table.parquet", path == "parquet folder", partitions
                )
            elif path == "dask":
                import dask.dataframe as dd

                source = dd.from_pandas(pd.DataFrame(df), npartitions=3)
            est = TabularPE(
                4.0,
                1e-5,
                table_metadata(description),
                n_synthetic=20,
                iterations=2,
                pool=200,
                adjacency=adjacency,
                noise=noise,
                target=target,
                pair_selection=pair_selection,
                random_state=SEED,
                **options,
            ).fit(source)
            sample = est.sample(30, random_state=1)
            return {
                "csv": sample.to_csv(index=False),
                "dtypes": [str(t) for t in sample.dtypes],
                "report": estimator_artefacts(est)["privacy_report_"],
            }

        return run

    return make


def _text(adjacency: str, labelled: bool, base: bool = False):
    """Text PE on stand-ins: a chat model, or with ``base`` a base model given public examples
    (with ``labelled``, each label's own)."""

    def make(tmp):
        def run(data):
            from helpers.text_doubles import (
                base_text_pe,
                labelled_base_text_pe,
                labelled_text_pe,
                text_pe,
            )

            if labelled:
                pe = labelled_base_text_pe if base else labelled_text_pe
                est = pe(epsilon=2.0, adjacency=adjacency, random_state=SEED).fit(
                    data[0], labels=data[1]
                )
                return {
                    **estimator_artefacts(est, "synthetic_texts_"),
                    "labels": list(est.synthetic_labels_),
                }
            pe = base_text_pe if base else text_pe
            est = pe(adjacency=adjacency, random_state=SEED).fit(data)
            return estimator_artefacts(est, "synthetic_texts_")

        return run

    return make


# -- runs: the command line -------------------------------------------------------------------


def cli_entry(argv: list[str], write: Callable[[Path, object], None]):
    """run(data) over ``privevo ARGV``: data written by ``write`` into a fresh folder ``{w}``;
    publishes the exit status and every file the command left there (the input removed)."""

    def make(tmp):
        def run(data):
            from privevo.cli import main

            work = Path(tmp) / "w"
            shutil.rmtree(work, ignore_errors=True)
            work.mkdir(parents=True)
            inputs = set(_listing(work))
            write(work, data)
            inputs = set(_listing(work)) - inputs
            code = main([a.replace("{w}", str(work)) for a in argv])
            for name in inputs:
                target = work / name
                shutil.rmtree(target) if target.is_dir() else target.unlink()
            return {"exit": code, "files": files_in(work)}

        return run

    return make


def _listing(folder: Path) -> list[str]:
    return [p.name for p in folder.iterdir()]


def _write_csv(folder: Path, columns, header: str) -> None:
    np.savetxt(folder / "data.csv", columns, delimiter=",", header=header, comments="", fmt="%.17g")


def _write_points_csv(folder: Path, X) -> None:
    _write_csv(folder, X, "x,y")


def _write_points_npy(folder: Path, X) -> None:
    np.save(folder / "data.npy", np.asarray(X, dtype=np.float64))


def _write_npy_parts(folder: Path, X) -> None:
    """The rows as a folder of three .npy parts."""
    (folder / "parts").mkdir()
    for i, part in enumerate(np.array_split(np.asarray(X, dtype=np.float64), 3)):
        np.save(folder / "parts" / f"p{i}.npy", part)


def _described_cli(argv: list[str]):
    """``privevo kmeans --metadata``: the points' public description beside the work folder."""
    make_cli = cli_entry(argv, _write_points_csv)

    def make(tmp):
        (Path(tmp) / "points.txt").write_text("x: numeric -8..8\ny: numeric -9..9\n")
        return make_cli(tmp)

    return make


def _write_users_csv(folder: Path, data) -> None:
    _write_csv(folder, np.column_stack(data), "x,y,u")


def _write_table_csv(folder: Path, df) -> None:
    df.to_csv(folder / "data.csv", index=False)


def _write_table_parquet(folder: Path, df) -> None:
    typed = df.astype({"zip": str, "color": str}).astype({"size": float, "weight": float})
    _write_parquet(typed, folder / "data.parquet", False)


def _write_wide_table_parquet(folder: Path, df) -> None:
    """The table plus a private column ``extra`` (a copy of ``size``) that ``--drop`` removes."""
    _write_table_parquet(folder, df.assign(extra=df["size"]))


def _write_texts_csv(folder: Path, data) -> None:
    import pandas as pd

    if isinstance(data, tuple):
        pd.DataFrame({"review": data[0], "y": data[1]}).to_csv(folder / "data.csv", index=False)
    else:
        pd.DataFrame({"review": data}).to_csv(folder / "data.csv", index=False)


_POINT_FLAGS = ["--epsilon", "1", "--iterations", "2", "--seed", CLI_SEED, "--radius", "8"]
SYNTH_ARGV = ["synth", "{w}/DATA", "--m", "5", "--selector", "rank", *_POINT_FLAGS]
KMEANS_ARGV = ["kmeans", "{w}/DATA", "--k", "3", *_POINT_FLAGS]
_TABLE = ["synth-table", "{w}/DATA", "--metadata", "{w}/../meta.json", "--epsilon", "4"]
_TABLE += ["--delta", "1e-5", "--population", "20", "--iterations", "2", "--seed", CLI_SEED]
_TEXT = ["synth-text", "{w}/data.csv", "--column", "review", "--m", "4", "--iterations", "2"]
_TEXT += ["--epsilon", "2", "--seed", CLI_SEED]


def argv_for(base: list[str], data_file: str, *extra: str) -> list[str]:
    return [a.replace("DATA", data_file) for a in base] + list(extra)


def _table_cli(adjacency: str, data_file: str, write, *extra: str):
    argv = argv_for(_TABLE, data_file, "--adjacency", adjacency, *extra, "-o", "{w}/out.csv")
    make_cli = cli_entry(argv, write)

    def make(tmp):
        Path(tmp).mkdir(parents=True, exist_ok=True)  # a plant's run folder is made here
        table_metadata().to_json(Path(tmp) / "meta.json")
        return make_cli(tmp)

    return make


def _write_texts_and_examples(folder: Path, data) -> None:
    """The private texts, and a public examples file with each label's own examples."""
    import pandas as pd

    from helpers.text_doubles import BASE_LABEL_EXAMPLES

    _write_texts_csv(folder, data)
    rows = [(text, label) for label, texts in BASE_LABEL_EXAMPLES.items() for text in texts]
    pd.DataFrame(rows, columns=["text", "label"]).to_csv(folder / "examples.csv", index=False)


def _text_cli(adjacency: str, labelled: bool, base: bool = False):
    """synth-text on stand-ins: a chat model (``WordLM``, ``TopicLM`` with labels) or, with
    ``base``, a base model (``BaseWordLM``) given the built-in food-review examples, or with
    labels each label's own from an ``--examples`` CSV."""
    argv = list(_TEXT) + ["--adjacency", adjacency, "-o", "{w}/out.csv"]
    if labelled:
        argv += ["--label-column", "y", "--labels", "great,other"]
    else:
        argv += ["--topics", "tea,bread"]
    if base:
        argv += ["--kind", "food review"]
    if base and labelled:
        argv += ["--examples", "{w}/examples.csv"]
    make_cli = cli_entry(argv, _write_texts_and_examples if base and labelled else _write_texts_csv)

    def make(tmp):
        from helpers.text_doubles import BaseWordLM, HashEmbedder, TopicLM, WordLM
        from privevo.cli import text as cli_text

        stand_in = BaseWordLM if base else TopicLM if labelled else WordLM
        model, original = stand_in(), cli_text._models
        run = make_cli(tmp)

        def patched(data):
            cli_text._models = lambda args: (model, HashEmbedder())
            try:
                return run(data)
            finally:
                cli_text._models = original

        return patched

    return make


def _entry_points() -> list[EntryPoint]:
    E = EntryPoint
    rows = []
    for adjacency in ("add_remove", "replace"):
        for selector in ("rank", "subsample", "weighted_kmeans", "gape", "gape_agg"):
            fast = selector in ("rank", "gape_agg")
            rows.append(
                E(f"pe {selector}", "points", adjacency, _pe(selector, adjacency), points, fast)
            )
        rows.append(
            E("pe users", "users", adjacency, _pe("rank", adjacency, users=True), users, True)
        )
        rows.append(E("dpkmeans", "points", adjacency, _dpkmeans(adjacency), points, True))
        for path in ("parquet folder", "dask"):
            rows.append(
                E(f"dpkmeans {path}", "points", adjacency, _dpkmeans(adjacency, path), points)
            )
        rows.append(
            E(
                "dpkmeans hdpe",
                "points",
                adjacency,
                _dpkmeans(adjacency, projection="pca"),
                wide_points,
            )
        )
        rows.append(
            E(
                "tabular discrete noise",
                "table",
                adjacency,
                _tabular(adjacency, noise="discrete_gaussian"),
                table,
            )
        )
        rows.append(  # the target's 2-way tables (target_marginals) and its tree model
            E("tabular target", "table", adjacency, _tabular(adjacency, target="color"), table)
        )
        rows.append(  # AIM's choices (exponential mechanism) and the chosen cliques' tables
            E(
                "tabular adaptive",
                "table",
                adjacency,
                _tabular(adjacency, pair_selection="adaptive"),
                table,
            )
        )
        rows.append(  # the target's tables fitted into the adaptive model, C − 1 rounds after
            E(
                "tabular adaptive target",
                "table",
                adjacency,
                _tabular(adjacency, target="color", pair_selection="adaptive"),
                table,
            )
        )
        growth = _tabular(adjacency, description=GROWTH_DESCRIPTION)
        rows.append(  # the pool's growth (grow_pool): public, but on the fit's path
            E(
                "tabular pool growth",
                "table",
                adjacency,
                growth,
                small_table,
                False,
                GROWTH_DESCRIPTION,
            )
        )
        structure = _tabular(adjacency, description=STRUCTURE_DESCRIPTION)
        rows.append(  # derived, value set, step, 'may be empty': post-processing only
            E("tabular structure", "table", adjacency, structure, table)
        )
        for name in ("dplloyd", "fastlloyd", "lsh_tree"):
            fast = name == "dplloyd"
            rows.append(
                E(f"baseline {name}", "points", adjacency, _baseline(name, adjacency), points, fast)
            )
        for path in ("memory", "parquet", "parquet folder", "parquet partitioned", "dask"):
            rows.append(
                E(
                    f"tabular {path}",
                    "table",
                    adjacency,
                    _tabular(adjacency, path),
                    table,
                    path == "memory",
                )
            )
        rows.append(E("text pe", "texts", adjacency, _text(adjacency, False), texts))
        rows.append(
            E("text pe base model", "texts", adjacency, _text(adjacency, False, base=True), texts)
        )
        rows.append(
            E(
                "labelled text pe",
                "labelled_texts",
                adjacency,
                _text(adjacency, True),
                labelled_texts,
            )
        )
        rows.append(
            E(
                "labelled text pe base model",
                "labelled_texts",
                adjacency,
                _text(adjacency, True, base=True),
                labelled_texts,
            )
        )
        for cmd, base in (("kmeans", KMEANS_ARGV), ("synth", SYNTH_ARGV)):
            for suffix, write in (("csv", _write_points_csv), ("npy", _write_points_npy)):
                argv = argv_for(
                    base, f"data.{suffix}", "--adjacency", adjacency, "-o", "{w}/out.csv"
                )
                fast = cmd == "synth" and suffix == "csv"
                rows.append(
                    E(
                        f"cli {cmd} {suffix}",
                        "points",
                        adjacency,
                        cli_entry(argv, write),
                        points,
                        fast,
                    )
                )
            argv = argv_for(base, "data.csv", "--adjacency", adjacency, "--json")
            rows.append(
                E(
                    f"cli {cmd} --json",
                    "points",
                    adjacency,
                    cli_entry(argv, _write_points_csv),
                    points,
                )
            )
        argv = argv_for(KMEANS_ARGV, "parts", "--adjacency", adjacency, "-o", "{w}/out.csv")
        rows.append(  # a folder streamed block by block (the domain is public)
            E("cli kmeans folder", "points", adjacency, cli_entry(argv, _write_npy_parts), points)
        )
        argv = [a for a in argv_for(KMEANS_ARGV, "data.csv") if a not in ("--radius", "8")]
        argv += ["--metadata", "{w}/../points.txt", "--adjacency", adjacency, "--json"]
        rows.append(E("cli kmeans --metadata", "points", adjacency, _described_cli(argv), points))
        argv = argv_for(SYNTH_ARGV, "data.csv", "--adjacency", adjacency, "--user-column", "u")
        argv += ["-o", "{w}/out.csv"]
        rows.append(
            E("cli synth users", "users", adjacency, cli_entry(argv, _write_users_csv), users)
        )
        for suffix, write in (("csv", _write_table_csv), ("parquet", _write_table_parquet)):
            rows.append(
                E(
                    f"cli synth-table {suffix}",
                    "table",
                    adjacency,
                    _table_cli(adjacency, f"data.{suffix}", write),
                    table,
                    suffix == "csv",
                )
            )
        drop = _table_cli(adjacency, "data.parquet", _write_wide_table_parquet, "--drop", "extra")
        rows.append(E("cli synth-table parquet --drop", "table", adjacency, drop, table))
        rows.append(E("cli synth-text", "texts", adjacency, _text_cli(adjacency, False), texts))
        base_cli = _text_cli(adjacency, False, base=True)
        rows.append(E("cli synth-text base model", "texts", adjacency, base_cli, texts))
        rows.append(
            E(
                "cli synth-text labels",
                "labelled_texts",
                adjacency,
                _text_cli(adjacency, True),
                labelled_texts,
            )
        )
        rows.append(
            E(
                "cli synth-text labels base model",
                "labelled_texts",
                adjacency,
                _text_cli(adjacency, True, base=True),
                labelled_texts,
            )
        )
    return rows


ENTRY_POINTS: dict[str, EntryPoint] = {e.id: e for e in _entry_points()}
