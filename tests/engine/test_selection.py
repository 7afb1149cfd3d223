import numpy as np

from privevo.selection import Rank, SelectionContext, Selector, Subsample


def ctx(m, seed=0):
    return SelectionContext(
        sigma=1.0,
        iteration=0,
        iterations=1,
        n_select=m,
        n_private=100,
        rng=np.random.default_rng(seed),
    )


CANDS = np.arange(12.0).reshape(6, 2)


def test_rank_takes_top_m_with_stable_ties():
    counts = np.array([5.0, 9.0, -1.0, 9.0, 3.0, 0.0])
    sel = Rank().select(CANDS, counts, ctx(3))
    assert sel.indices.tolist() == [1, 3, 0]
    np.testing.assert_array_equal(sel.points, CANDS[[1, 3, 0]])
    assert isinstance(Rank(), Selector)


def test_rank_with_more_slots_than_candidates():
    assert len(Rank().select(CANDS, np.ones(6), ctx(10)).indices) == 6


def test_subsample_is_proportional_to_clipped_counts():
    counts = np.array([30.0, -50.0, 10.0, 0.0, 60.0, -1.0])
    sel = Subsample().select(CANDS, counts, ctx(20000))
    freq = np.bincount(sel.indices, minlength=6) / 20000
    np.testing.assert_allclose(freq, [0.3, 0, 0.1, 0, 0.6, 0], atol=0.015)
    assert set(sel.indices) <= {0, 2, 4}


def test_subsample_all_negative_is_uniform():
    sel = Subsample().select(CANDS, -np.ones(6), ctx(6000))
    np.testing.assert_allclose(np.bincount(sel.indices, minlength=6) / 6000, 1 / 6, atol=0.03)


def test_subsample_without_replacement():
    sel = Subsample(replace=False).select(CANDS, np.array([1.0, 0, 0, 2.0, 0, 0]), ctx(4))
    assert sorted(sel.indices.tolist()) == [0, 3]


def test_subsample_is_seeded():
    counts = np.arange(6.0)
    a = Subsample().select(CANDS, counts, ctx(10, seed=3)).indices
    b = Subsample().select(CANDS, counts, ctx(10, seed=3)).indices
    np.testing.assert_array_equal(a, b)


def test_the_selector_registry_builds_every_name_and_passes_objects_through():
    from privevo.selection import (
        GAPE,
        SELECTOR_NAMES,
        WeightedKMeans,
        make_selector,
        selector_names,
    )

    built = {name: make_selector(name, R=0.5) for name in SELECTOR_NAMES}
    assert all(isinstance(s, Selector) for s in built.values())
    assert isinstance(built["rank"], Rank) and isinstance(built["subsample"], Subsample)
    assert isinstance(built["weighted_kmeans"], WeightedKMeans)
    assert built["gape"].R == 0.5 and built["gape"].aggregate is None
    assert built["gape_agg"].aggregate == "neighbourhood"
    gape = make_selector("gape", R=2.0, fill=True, refill=True)
    assert isinstance(gape, GAPE) and gape.fill and gape.refill
    mine = Rank()
    assert make_selector(mine) is mine
    assert "weighted_kmeans" not in selector_names(keeps_candidates=True)
    assert set(selector_names(keeps_candidates=True)) | {"weighted_kmeans"} == set(SELECTOR_NAMES)


def test_an_unknown_selector_is_refused_with_the_names():
    import pytest

    from privevo.selection import make_selector

    with pytest.raises(ValueError, match="selector must be one of rank, subsample, gape"):
        make_selector("best")
    with pytest.raises(ValueError, match="got a int"):
        make_selector(3)
    with pytest.raises(ValueError, match="need R"):
        make_selector("gape")


def test_the_registry_builds_every_name_privevo_names_states_and_no_other():
    from privevo import names
    from privevo.selection import registry

    assert tuple(registry._REGISTRY) == names.SELECTORS == registry.SELECTOR_NAMES
