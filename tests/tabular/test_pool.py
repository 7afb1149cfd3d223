"""The output pool grows where raking alone would pile the mass on a few rows (grow_pool)."""

from __future__ import annotations

import numpy as np

from privevo.tabular.marginals import rake
from privevo.tabular.pool import _new_rows, grow_pool, systematic_draw

N = 2000
TARGETS = [np.array([0.2, 0.2, 0.2, 0.4])]  # measured: column a; b is free


def _scarce_pool(rng: np.random.Generator) -> np.ndarray:
    """Rows (a, b): the measurement wants 40 % of rows with a = 3, the pool has five."""
    codes = np.column_stack([rng.integers(3, size=N), rng.integers(500, size=N)]).astype(float)
    codes[:5, 0] = 3
    return codes


def _constraints(rows: np.ndarray):
    return rows[:, :1].astype(np.int64), TARGETS


def _vary_b(rows: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    out = rows.copy()
    out[:, 1] = rng.integers(500, size=len(rows))
    return out


def _as_drawn(rows: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return rows


def test_grow_pool_spreads_the_mass_raking_piles_on_few_rows():
    """Raked alone, each of the five a = 3 rows carries 8 % of the mass (160 of 2000 draws);
    grown, the mass spreads over their variations, and every measurement still holds."""
    rng = np.random.default_rng(0)
    codes = _scarce_pool(rng)
    plain = rake(np.ones(N), _constraints(codes)[0], TARGETS)
    grown, weights = grow_pool(codes, _constraints, _vary_b, _as_drawn, N, rng)
    assert (N * plain).max() > 100
    assert (N * weights).max() < 5
    assert np.array_equal(grown[:N], codes)  # the pool's rows stay, in place
    for j, target in enumerate(TARGETS):
        shares = np.bincount(grown[:, j].astype(np.int64), weights=weights, minlength=len(target))
        np.testing.assert_allclose(shares, target, atol=2e-3)
    assert len(np.unique(grown[N:], axis=0)) == len(grown) - N  # no added row twice
    assert len(_new_rows(grown[N:], codes)) == len(grown) - N  # nor one the pool had


def test_grow_pool_stops_once_the_spread_draw_repeats_no_rows():
    """The same heavy rows, but ``sample``'s spread would set every drawn row apart (a
    continuous column to redraw): the trial draw repeats none, and nothing is added."""
    rng = np.random.default_rng(1)
    codes = _scarce_pool(rng)
    distinct = lambda rows, rng: rows + rng.random(rows.shape)  # noqa: E731
    grown, weights = grow_pool(codes, _constraints, _vary_b, distinct, N, rng)
    assert np.array_equal(grown, codes)
    np.testing.assert_allclose(weights, rake(np.ones(N), _constraints(codes)[0], TARGETS))


def test_new_rows_keeps_first_seen_order_and_missing_values():
    codes = np.array([[0.0, np.nan], [1.0, 2.0]])
    candidates = np.array([[1.0, 2.0], [0.0, 3.0], [0.0, np.nan], [0.0, 3.0], [5.0, np.nan]])
    np.testing.assert_array_equal(
        _new_rows(candidates, codes), np.array([[0.0, 3.0], [5.0, np.nan]])
    )


def test_systematic_draw_takes_each_row_its_expected_times():
    """Row i comes back ⌊n·w_i⌋ or ⌈n·w_i⌉ times, n·w_i on average; a row of n·w ≤ 1 never
    twice (n independent draws from these 400 rows would repeat a third of them)."""
    rng = np.random.default_rng(0)
    weights = rng.uniform(0.5, 1.5, size=400)
    weights[:3] *= 40  # three heavy rows
    weights[-50:] = 0.0  # never drawn
    n = 300
    expected = n * weights / weights.sum()
    total = np.zeros(len(weights))
    for _ in range(200):
        counts = np.bincount(systematic_draw(weights, n, rng), minlength=len(weights))
        assert counts.sum() == n
        assert np.all(counts >= np.floor(expected)) and np.all(counts <= np.ceil(expected))
        total += counts
    np.testing.assert_allclose(total / 200, expected, atol=0.15)
    assert expected[3:].max() < 1 <= expected[:3].min() and total[-50:].sum() == 0


def test_rows_a_zero_target_empties_skip_the_voronoi_search_and_rake_alike():
    """A row that a measurement puts in a cell of target 0 gets weight 0 from any raking: its
    later rounds' Voronoi cells are not searched (it takes each round's extra cell of target 0),
    and the raked weights match those of the full search."""
    from privevo.tabular import TableEmbedding
    from privevo.tabular.metadata import metadata_from_description
    from privevo.tabular.pool import carries_mass, constraint_cells, nearest

    meta = metadata_from_description("a: categorical x, y, z\nb: numeric 0..1")
    embedding = TableEmbedding(meta)
    rng = np.random.default_rng(0)
    codes = np.column_stack([rng.integers(3, size=3000), rng.random(3000)]).astype(float)
    marginals = [np.array([0.5, 0.5, 0.0]), np.full(10, 0.1)]  # no row may have a = z
    rounds = []
    for _ in range(2):
        candidates = embedding.embed(codes[rng.choice(3000, size=40, replace=False)])
        votes = rng.integers(0, 30, size=40).astype(float)
        votes[::3] = 0.0  # a third of the candidates voted away
        rounds.append((candidates, votes))

    cells, targets = constraint_cells(codes, embedding, 10, marginals, rounds)
    live = carries_mass(cells, targets)
    points = embedding.embed(codes)
    full = [cells[:, :2]]
    for k, (candidates, _) in enumerate(rounds):
        searched = cells[:, 2 + k] < len(candidates)
        if k == 0:  # the a = z rows, and only they, are never searched
            assert np.array_equal(~searched, codes[:, 0] == 2)
        else:  # nor the rows the first round's zero votes emptied
            assert (~searched & (codes[:, 0] != 2)).any()
        np.testing.assert_array_equal(cells[searched, 2 + k], nearest(points[searched], candidates))
        full.append(nearest(points, candidates)[:, None])
    assert not live[codes[:, 0] == 2].any() and live.mean() > 0.1
    full_targets = targets[:2] + [t[:-1] for t in targets[2:]]
    pruned = rake(np.ones(3000), cells, targets, sweeps=200)
    searched_all = rake(np.ones(3000), np.hstack(full), full_targets, sweeps=200)
    np.testing.assert_allclose(pruned, searched_all, atol=1e-9)
    assert (pruned[~live] == 0).all()
