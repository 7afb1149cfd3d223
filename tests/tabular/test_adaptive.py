"""TabularPE(pair_selection="adaptive"): AIM's choose-then-measure rounds (docs/tabular.md,
"Adaptive selection"): the exponential mechanism's release and its zCDP accounting, and what the
chosen cliques keep that a tree of pairs cannot."""

from __future__ import annotations

import math

import numpy as np
import pytest

pd = pytest.importorskip("pandas")

from helpers.tables import DESCRIPTION, small_table  # noqa: E402
from privevo import TabularPE  # noqa: E402
from privevo.private import exponential_choice  # noqa: E402
from privevo.tabular import metadata_from_description  # noqa: E402

EPSILON, DELTA = 4.0, 1e-5


def _softmax(quality: np.ndarray, epsilon: float, sensitivity: float) -> np.ndarray:
    z = epsilon * quality / (2 * sensitivity)
    p = np.exp(z - z.max())
    return p / p.sum()


def test_exponential_choice_counts_the_cliques_and_draws_the_softmax():
    """q_r = ‖counts − estimate‖₁ − penalty on the exact joint counts; the Gumbel-max draw
    follows P(r) ∝ exp(ε·q_r/2) (a χ²-sized tolerance over 20 000 draws)."""
    rng = np.random.default_rng(0)
    cells = rng.integers(0, 2, size=(200, 3))
    cliques = [(0, 1), (1, 2), (0, 1, 2)]
    joints = [np.bincount(cells[:, 0] * 2 + cells[:, 1], minlength=4)]
    joints.append(np.bincount(cells[:, 1] * 2 + cells[:, 2], minlength=4))
    joints.append(np.bincount(cells[:, 0] * 4 + cells[:, 1] * 2 + cells[:, 2], minlength=8))
    estimates = [np.full(4, 50.0), np.full(4, 50.0), np.full(8, 25.0)]
    penalties = [0.0, 3.0, 6.0]
    quality = np.array([np.abs(j - e).sum() - p for j, e, p in zip(joints, estimates, penalties)])
    epsilon = 0.2
    draws = [
        exponential_choice(
            "c", cells, [2, 2, 2], cliques, estimates, penalties, epsilon, np.random.default_rng(s)
        ).value
        for s in range(20_000)
    ]
    observed = np.bincount(draws, minlength=3) / len(draws)
    expected = _softmax(quality, epsilon, 1.0)
    assert np.all(np.abs(observed - expected) < 4 * np.sqrt(expected / len(draws)) + 1e-3)
    release = exponential_choice(
        "c", cells, [2, 2, 2], cliques, estimates, penalties, 1e6, np.random.default_rng(0)
    )
    assert release.value == int(np.argmax(quality))  # ε → ∞: the best clique
    assert (release.noise, release.sensitivity) == ("exponential", 1.0)
    assert release.selection_epsilon == pytest.approx(1e6)


@pytest.mark.parametrize("adjacency", ["add_remove", "replace"])
def test_the_exponential_mechanism_is_within_its_zcdp_bound(adjacency):
    """ε-bounded range ⇒ ε²/8-zCDP: the Rényi divergence of the choice's distributions on
    generated neighbouring quality vectors (each q_r moved by at most Δ, extremes included)
    stays within α·ε²/8 for every order α tried."""
    sensitivity = 1.0 if adjacency == "add_remove" else 2.0
    rng = np.random.default_rng(1)
    epsilon = 0.7
    worst = 0.0
    for _ in range(300):
        q = rng.normal(0, 5, size=rng.integers(2, 9))
        shift = rng.choice([-1.0, 1.0, 0.0], size=len(q)) * sensitivity
        shift = np.where(rng.random(len(q)) < 0.3, rng.uniform(-1, 1, len(q)) * sensitivity, shift)
        p, p2 = _softmax(q, epsilon, sensitivity), _softmax(q + shift, epsilon, sensitivity)
        for alpha in (1.5, 2.0, 4.0, 16.0, 64.0):
            renyi = math.log(np.sum(p**alpha * p2 ** (1 - alpha))) / (alpha - 1)
            worst = max(worst, renyi / (alpha * epsilon**2 / 8))
    assert 0.5 < worst <= 1.0 + 1e-9  # tight enough to matter, never above the bound


def fit(noise: str = "gaussian", adjacency: str = "add_remove", **kw) -> TabularPE:
    meta = metadata_from_description(DESCRIPTION)
    kw = {"n_synthetic": 60, "iterations": 2, "pool": 1000, "random_state": 0, **kw}
    return TabularPE(
        EPSILON, DELTA, meta, noise=noise, adjacency=adjacency, pair_selection="adaptive", **kw
    ).fit(small_table())


@pytest.mark.parametrize("adjacency", ["add_remove", "replace"])
@pytest.mark.parametrize("noise", ["gaussian", "discrete_gaussian"])
def test_adaptive_fits_are_accounted_by_zcdp_at_the_target(noise, adjacency):
    """The C choices and C cliques are listed; the report composes them by zCDP (ρ = ε²/8 per
    choice) to the target ε, and dp_accounting's RDP accountant agrees."""
    import dp_accounting

    report = fit(noise, adjacency).privacy_report_
    names = [r["name"] for r in report["releases"]]
    assert {"marginal_choices", "clique_marginals"} <= set(names)
    assert "pair_scores" not in names
    choices = next(r for r in report["releases"] if r["name"] == "marginal_choices")
    columns = len(metadata_from_description(DESCRIPTION).columns)
    assert choices["noise"] == "exponential" and choices["count"] == columns
    assert report["accountant"] == "zcdp"
    assert EPSILON * (1 - 1e-6) <= report["epsilon"] <= EPSILON
    acc = dp_accounting.rdp.RdpAccountant()
    for r in report["releases"]:
        if r.get("noise") == "exponential":
            rho = (2 * r["sensitivity"] / r["sigma"]) ** 2 / 8  # ε = 2Δ/σ of each choice
        else:
            rho = r["sensitivity"] ** 2 / (2 * r["sigma"] ** 2)
        acc.compose(dp_accounting.ZCDpEvent(rho=rho), r["count"])
    reference = acc.get_epsilon(DELTA)
    assert report["epsilon"] <= reference + 1e-9 and reference <= report["epsilon"] * 1.001


def test_a_three_way_relation_no_pair_shows_is_chosen():
    """c = a XOR b (flipped in 5 % of rows): every pair is independent, so no pair score sees
    it; the adaptive rounds choose the triple (a, b, c), and the synthetic rows keep it."""
    rng = np.random.default_rng(0)
    n = 20_000
    a, b = rng.integers(0, 2, n), rng.integers(0, 2, n)
    c = (a ^ b) ^ (rng.random(n) < 0.05)
    d = rng.integers(0, 3, n)
    df = pd.DataFrame({k: [f"v{x}" for x in v] for k, v in dict(a=a, b=b, c=c, d=d).items()})
    meta = metadata_from_description(
        f"n_rows: {n}\na: categorical v0, v1\nb: categorical v0, v1\n"
        "c: categorical v0, v1\nd: categorical v0, v1, v2\n"
    )
    model = TabularPE(1.0, 1e-6, meta, pair_selection="adaptive", random_state=0).fit(df)
    assert (0, 1, 2) in [tuple(clique) for clique, _ in model.pairs_["cliques"]]
    out = model.sample(n, random_state=1)
    assert ((out.a != out.b) == (out.c == "v1")).mean() > 0.9


@pytest.mark.parametrize("floor", [0.0, None])
def test_tables_whose_zero_cells_disagree_keep_a_small_category(monkeypatch, floor):
    """The target's table puts every 'yes' of a 2 % category in deny = yes; a noisy triple
    with it has that category's deny = yes cells below 0, clipped to 0. Raked to both, p̂
    would empty the category for good (floor 0); with ``MODEL_FLOOR`` it keeps about its
    released share."""
    from types import SimpleNamespace

    from privevo.tabular import adaptive

    if floor is not None:
        monkeypatch.setattr(adaptive, "MODEL_FLOOR", floor)
    shares = [np.array([0.88, 0.12]), np.array([0.98, 0.02]), np.array([0.5, 0.5])]
    binnings = [SimpleNamespace(size=2, p=p) for p in shares]  # deny, insurance, school
    model = adaptive.CliqueModel(binnings, np.random.default_rng(0), total=2000)
    model.add((0, 1), np.array([1760.0, 0.0, 200.0, 40.0]), 0.0, 2000)  # unshrunk, as a star
    triple = np.array([880, 880, 20, 20, 100, 100, -30, -30], dtype=float)  # deny, ins, school
    model.add((0, 1, 2), triple, 5.0, 2000)
    kept = model.marginal((1,))[1]
    assert kept < 1e-6 if floor == 0.0 else kept > 0.015
