"""Neighbour replay over the entry points: with releases pinned, D and D' publish the same bytes.

See tests/helpers/neighbour.py for the check and docs/privacy.md ("What may depend on the data") for
the rule. Each neighbour is valid input for its entry point and chosen to provoke: an extreme
value, a removed row, a replaced row, a user owning more rows, a row count crossing a
threshold, a missing value, decimals in an integer-looking column, a new category.
"""

from __future__ import annotations

import math
import shutil
from itertools import product

import numpy as np
import pandas as pd
import pytest

from helpers import slow_unless
from helpers.neighbour import assert_neighbour_safe, cli_run, estimator_artefacts, files_in
from privevo import BudgetAccountant, DPKMeans, PrivateEvolution, TabularPE
from privevo.baselines import DPLloyd, FastLloyd, LSHTreeKMeans
from privevo.selection import (
    GAPE,
    SELECTOR_NAMES,
    Rank,
    Subsample,
    WeightedKMeans,
    selector_names,
)
from privevo.tabular import metadata_from_description
from privevo.variation import GaussianVariation, UniformBall


def blobs(n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = np.array([[-1.0, -1.0], [1.0, 1.0], [1.0, -1.0]])
    return centres[rng.integers(0, 3, n)] + 0.2 * rng.standard_normal((n, 2))


D = blobs(300)
EXTREME = np.array([[1e6, -1e6]])
NEIGHBOURS = {
    "add an extreme row": np.vstack([D, EXTREME]),
    "remove a row": D[1:],
    "replace a row by an extreme one": np.vstack([EXTREME, D[1:]]),
}
REPLACE_ONLY = {"replace a row by an extreme one"}


def adjacency_of(name: str) -> str:
    return "replace" if name in REPLACE_ONLY else "add_remove"


# -- PrivateEvolution, each selector --------------------------------------------------

SELECTORS = {
    "rank": lambda: Rank(),
    "subsample": lambda: Subsample(),
    "weighted_kmeans": lambda: WeightedKMeans(n_init=1, max_iter=10),
    "gape": lambda: GAPE(R=0.5),
    "gape_agg": lambda: GAPE(R=0.5, aggregate="neighbourhood"),
}


def pe(selector, adjacency="add_remove", **kw) -> PrivateEvolution:
    return PrivateEvolution(
        UniformBall(3.0),
        GaussianVariation(0.1),
        selector,
        n_synthetic=6,
        iterations=3,
        epsilon=2.0,
        delta=1e-5,
        adjacency=adjacency,
        random_state=3,
        **kw,
    )


@pytest.mark.parametrize("selector", sorted(SELECTORS))
@pytest.mark.parametrize("neighbour", sorted(NEIGHBOURS))
def test_private_evolution(selector, neighbour):
    def run(X):
        est = pe(SELECTORS[selector](), adjacency_of(neighbour)).fit(X)
        return estimator_artefacts(est, "synthetic_")

    assert_neighbour_safe(run, D, NEIGHBOURS[neighbour])


class _Spy(Rank):
    """Rank that publishes what it was given: selector inputs must be public or released."""

    def __init__(self):
        super().__init__()
        self.seen = []

    def select(self, candidates, noisy_counts, context):
        self.seen.append((context.sigma, context.n_private, context.n_select))
        return super().select(candidates, noisy_counts, context)


@pytest.mark.parametrize("adjacency", ["add_remove", "replace"])
def test_user_level_pe_a_user_owning_more_rows(adjacency):
    groups = np.arange(len(D)) // 3  # 100 users, 3 rows each
    X2 = np.vstack([D, D[:4] + 0.01])  # user 0 now owns 7 rows (replace: same users, more rows)
    groups2 = np.concatenate([groups, np.zeros(4, dtype=int)])

    def run(data):
        X, g = data
        spy = _Spy()
        est = pe(spy, adjacency).fit(X, groups=g)
        return {**estimator_artefacts(est, "synthetic_"), "selector saw": spy.seen}

    assert_neighbour_safe(run, (D, groups), (X2, groups2))


def test_budget_accountant_wrapped_fit():
    def run(X):
        acc = BudgetAccountant(5.0, 1e-5)
        est = pe(Rank(), accountant=acc).fit(X)
        return {**estimator_artefacts(est, "synthetic_"), "spent": acc.spent()}

    assert_neighbour_safe(run, D, NEIGHBOURS["add an extreme row"])


def test_resume_from_a_state_and_from_a_checkpoint(tmp_path):
    def run(X):
        shutil.rmtree(tmp_path / "ck", ignore_errors=True)
        (tmp_path / "ck").mkdir()
        first = PrivateEvolution(
            UniformBall(3.0), GaussianVariation(0.1), Rank(), 6, 2, 2.0, 1e-5, random_state=3
        ).fit(X)
        state = first.final_state_
        state.completed = 1  # continue after round 1 (rounds 2 and 3 are new releases)
        half = pe(Rank(), checkpoint=tmp_path / "ck" / "run.ckpt").fit(X)
        again = pe(Rank(), checkpoint=tmp_path / "ck" / "run.ckpt").fit(X)  # resumes
        resumed = pe(Rank()).resume(X, state)
        return {
            **{f"half {k}": v for k, v in estimator_artefacts(half, "synthetic_").items()},
            **{f"again {k}": v for k, v in estimator_artefacts(again, "synthetic_").items()},
            **{f"state {k}": v for k, v in estimator_artefacts(resumed, "synthetic_").items()},
        }

    assert_neighbour_safe(run, D, NEIGHBOURS["add an extreme row"])


# -- DPKMeans and the baselines ---------------------------------------------------------


@pytest.mark.parametrize("neighbour", sorted(NEIGHBOURS))
def test_dpkmeans(neighbour):
    def run(X):
        est = DPKMeans(
            3,
            epsilon=2.0,
            delta=1e-5,
            radius=3.0,
            iterations=2,
            adjacency=adjacency_of(neighbour),
            random_state=0,
        ).fit(X)
        return estimator_artefacts(est, "cluster_centers_")

    assert_neighbour_safe(run, D, NEIGHBOURS[neighbour])


BASELINES = {
    "dplloyd": lambda: DPLloyd(3, epsilon=1.0, bounds=(-3.0, 3.0), random_state=0),
    "fastlloyd": lambda: FastLloyd(3, epsilon=1.0, bounds=(-3.0, 3.0), random_state=0),
    "lsh_tree": lambda: LSHTreeKMeans(3, epsilon=1.0, bounds=(-3.0, 3.0), random_state=0),
}


def baseline_run(name):
    def run(X):
        est = BASELINES[name]().fit(X)
        return estimator_artefacts(est, "cluster_centers_", "n_iter_")

    return run


@pytest.mark.parametrize("name", sorted(BASELINES))
@pytest.mark.parametrize("neighbour", sorted(NEIGHBOURS))
def test_baselines(name, neighbour):
    assert_neighbour_safe(baseline_run(name), D, NEIGHBOURS[neighbour])


@pytest.mark.parametrize("name", ["dplloyd", "fastlloyd"])
def test_baselines_row_count_crossing_the_iteration_threshold(name):
    """n = 1580 → 1581 crosses Su et al.'s T = ε/ε_m rule at ε = 1, k = 3, d = 2 (T 2 → 3)."""
    X = blobs(1580, seed=1)
    assert_neighbour_safe(baseline_run(name), X, np.vstack([X, X[:1]]))


# -- TabularPE -----------------------------------------------------------------------

DESCRIPTION = """
color: categorical red, green, blue, other | other=other
size: integer 0..100
weight: integer 0..2000 | nullable
amount: numeric 0..2000
"""


def table(n: int = 120) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame(
        {
            "color": rng.choice(["red", "green", "blue"], n),
            "size": rng.integers(0, 100, n),
            "weight": rng.integers(500, 1500, n),  # integer-looking numbers: int64
            "amount": rng.integers(500, 1500, n),
        }
    )


def _added(**row) -> pd.DataFrame:
    return pd.concat([table(), pd.DataFrame([row])], ignore_index=True)


TABLE_NEIGHBOURS = {
    "a missing value": _added(color="red", size=5, weight=np.nan, amount=9),
    "decimals in an integer-looking column": _added(color="red", size=5, weight=9, amount=1200.5),
    "an extreme value": _added(color="red", size=5, weight=10**9, amount=9),
    "a new category (other)": _added(color="purple", size=5, weight=700, amount=9),
}


TABLE_SELECTORS = ("tabpe", *selector_names(keeps_candidates=True))


@pytest.mark.parametrize(
    "selector, neighbour",
    # test-fast: the default (tabpe) and gape_agg, which thresholds neighbourhood sums of the votes
    slow_unless(
        lambda selector, _: selector in ("tabpe", "gape_agg"),
        product(TABLE_SELECTORS, sorted(TABLE_NEIGHBOURS)),
    ),
)
def test_tabular_pe(selector, neighbour):
    meta = metadata_from_description(DESCRIPTION)

    def run(df):
        est = TabularPE(
            4.0,
            1e-5,
            meta,
            n_synthetic=20,
            iterations=2,  # the first round's selection shapes the published sample
            pool=200,
            selector=selector,
            random_state=0,
        ).fit(df)
        sample = est.sample(50, random_state=1)
        return {
            "csv": sample.to_csv(index=False),
            "dtypes": [str(t) for t in sample.dtypes],
            "report": estimator_artefacts(est)["privacy_report_"],
        }

    assert_neighbour_safe(run, table(), TABLE_NEIGHBOURS[neighbour])


def write_parquet(folder, df) -> None:
    """The table as a folder of two Parquet parts (row groups of 50 rows)."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir()
    half = len(df) // 2
    df.iloc[:half].to_parquet(folder / "part-0.parquet", row_group_size=50)
    df.iloc[half:].to_parquet(folder / "part-1.parquet", row_group_size=50)


@pytest.mark.parametrize("neighbour", sorted(TABLE_NEIGHBOURS))
def test_tabular_pe_parquet_folder(tmp_path, neighbour):
    """The block-by-block path: the table read from a Parquet folder."""
    pytest.importorskip("pyarrow")
    meta = metadata_from_description(DESCRIPTION)

    def run(df):
        write_parquet(tmp_path / "table", df)
        est = TabularPE(4.0, 1e-5, meta, n_synthetic=20, iterations=1, pool=200, random_state=0)
        sample = est.fit(tmp_path / "table").sample(50, random_state=1)
        return {"csv": sample.to_csv(index=False), "report": estimator_artefacts(est)}

    assert_neighbour_safe(run, table(), TABLE_NEIGHBOURS[neighbour])


def test_tabular_pe_dask_dataframe():
    dd = pytest.importorskip("dask.dataframe")
    meta = metadata_from_description(DESCRIPTION)

    def run(df):
        est = TabularPE(4.0, 1e-5, meta, n_synthetic=20, iterations=1, pool=200, random_state=0)
        sample = est.fit(dd.from_pandas(df, npartitions=3)).sample(50, random_state=1)
        return {"csv": sample.to_csv(index=False), "report": estimator_artefacts(est)}

    assert_neighbour_safe(run, table(), TABLE_NEIGHBOURS["an extreme value"])


def test_tabular_pe_default_delta_refusal():
    """The fixed default δ is refused from the marginals' noisy count, never from n."""
    meta = metadata_from_description("a: categorical x, y\nb: integer 0..9\n")
    big = pd.DataFrame({"a": np.tile(["x", "y"], 150_000), "b": np.arange(300_000) % 10})

    def run(df):
        with pytest.raises(ValueError, match="default delta") as err:
            TabularPE(1.0, None, meta, random_state=0).fit(df)
        return str(err.value)

    assert_neighbour_safe(run, big, big.iloc[1:])


# -- the CLI, in process -------------------------------------------------------------


def write_points(folder, X) -> None:
    np.savetxt(folder / "data.csv", X, delimiter=",", header="x,y", comments="")


def write_table(folder, df) -> None:
    df.to_csv(folder / "data.csv", index=False)


CLI_POINTS = {
    "kmeans": ["kmeans", "{w}/data.csv", "--k", "3", "--epsilon", "1", "--radius", "3"],
    "synth": ["synth", "{w}/data.csv", "--m", "5", "--selector", "rank", "--epsilon", "1"],
}


@pytest.mark.parametrize("command", sorted(CLI_POINTS))
@pytest.mark.parametrize("neighbour", ["add an extreme row", "remove a row"])
@pytest.mark.parametrize("json_out", [False, True])
def test_cli_points(tmp_path, command, neighbour, json_out):
    argv = [*CLI_POINTS[command], "--iterations", "2", "--seed", "5"]
    argv += ["--radius", "3"] if command == "synth" else []
    argv += ["--json"] if json_out else ["-o", "{w}/out.csv"]
    run = cli_run(tmp_path, argv, write_points)
    assert_neighbour_safe(run, D, NEIGHBOURS[neighbour])


@pytest.mark.parametrize(
    "selector, neighbour",
    # test-fast: gape_agg, whose neighbourhood sums no library-level replay runs through the CLI
    slow_unless(
        lambda selector, _: selector == "gape_agg",
        product(SELECTOR_NAMES, ["add an extreme row", "remove a row"]),
    ),
)
@pytest.mark.parametrize("json_out", [False, True])
def test_cli_synth_every_selector(tmp_path, selector, neighbour, json_out):
    argv = ["synth", "{w}/data.csv", "--m", "5", "--selector", selector, "--epsilon", "1"]
    argv += ["--radius", "3", "--iterations", "2", "--seed", "5"]
    argv += ["--json"] if json_out else ["-o", "{w}/out.csv"]
    assert_neighbour_safe(cli_run(tmp_path, argv, write_points), D, NEIGHBOURS[neighbour])


def write_users(folder, data) -> None:
    X, users = data
    np.savetxt(
        folder / "data.csv", np.column_stack([X, users]), delimiter=",", header="x,y,u", comments=""
    )


def test_cli_synth_user_level_replace_default_delta(tmp_path):
    users = np.arange(len(D)) // 3
    argv = [
        *CLI_POINTS["synth"],
        "--radius",
        "3",
        "--iterations",
        "2",
        "--seed",
        "5",
        "--user-column",
        "u",
        "--adjacency",
        "replace",
        "-o",
        "{w}/out.csv",
    ]
    more = (np.vstack([D, D[:6]]), np.concatenate([users, np.zeros(6, dtype=int)]))
    assert_neighbour_safe(cli_run(tmp_path, argv, write_users), (D, users), more)


@pytest.mark.parametrize("selector", ["tabpe", "gape_agg"])
def test_cli_synth_table_with_metadata(tmp_path, selector):
    metadata_from_description(DESCRIPTION).to_json(tmp_path / "meta.json")
    argv = ["synth-table", "{w}/data.csv", "--metadata", str(tmp_path / "meta.json")]
    argv += ["--epsilon", "4", "--delta", "1e-5", "--population", "20", "--iterations", "2"]
    argv += ["--selector", selector, "--seed", "2", "-o", "{w}/out.csv"]
    run = cli_run(tmp_path, argv, write_table)
    assert_neighbour_safe(run, table(), TABLE_NEIGHBOURS["a new category (other)"])


def test_cli_synth_table_parquet_folder(tmp_path):
    pytest.importorskip("pyarrow")
    from privevo.cli import main

    metadata_from_description(DESCRIPTION).to_json(tmp_path / "meta.json")
    argv = ["synth-table", str(tmp_path / "table"), "--metadata", str(tmp_path / "meta.json")]
    argv += ["--epsilon", "4", "--delta", "1e-5", "--population", "20", "--iterations", "1"]
    argv += ["--seed", "2", "-o", str(tmp_path / "w" / "out.csv")]

    def run(df):
        write_parquet(tmp_path / "table", df)
        shutil.rmtree(tmp_path / "w", ignore_errors=True)
        (tmp_path / "w").mkdir()
        return {"exit": main(argv), "files": files_in(tmp_path / "w")}

    assert_neighbour_safe(run, table(), TABLE_NEIGHBOURS["a missing value"])


def test_cli_synth_table_first_row_like_a_header(tmp_path):
    argv = ["synth-table", "{w}/data.csv", "--epsilon", "4", "--delta", "1e-5"]
    argv += ["--population", "20", "--iterations", "1", "--seed", "2", "-o", "{w}/out.csv"]

    def write(folder, first):
        (folder / "data.csv").write_text(f"{first}\nalpha,1\nbeta,2\ngamma,3\nalpha,4\n")

    assert_neighbour_safe(cli_run(tmp_path, argv, write), "name,score", "bob smith,secret")


def test_cli_metadata_first_row_like_a_header(tmp_path):
    (tmp_path / "desc.txt").write_text("name: categorical a, b\nscore: integer 0..9\n")
    argv = ["metadata", "{w}/data.csv", "--public-description", str(tmp_path / "desc.txt")]

    def write(folder, first):
        (folder / "data.csv").write_text(f"{first}\na,1\nb,2\n")

    run = cli_run(tmp_path, argv, write)  # metadata from a description makes no release
    assert_neighbour_safe(run, "name,score", "alice@example.org,52000", releases=False)


def test_cli_account_reads_no_data(tmp_path):
    argv = ["account", "--epsilon", "1", "--delta", "1e-5", "--steps", "3", "--json"]
    run = cli_run(tmp_path, argv, write_points)
    assert_neighbour_safe(run, D, NEIGHBOURS["remove a row"], releases=False)


def test_a_planted_leak_is_caught():
    """The check can fail: publishing the exact row count beside a pinned release is caught."""

    def run(X):
        est = pe(Rank()).fit(X)
        return {**estimator_artefacts(est, "synthetic_"), "n": len(X)}

    with pytest.raises(AssertionError, match="result n"):
        assert_neighbour_safe(run, D, NEIGHBOURS["remove a row"])
    assert math.isfinite(pe(Rank()).fit(D).sigma_)
