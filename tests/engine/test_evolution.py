import json

import numpy as np
import pytest

from privevo import BudgetAccountant, PrivateEvolution, accounting
from privevo.selection import Rank, Selection, Subsample
from privevo.variation import GaussianVariation, UniformBall


def mixture(seed=0, n=2000):
    rng = np.random.default_rng(seed)
    big = rng.normal([-1, 0], 0.1, (int(0.9 * n), 2))
    small = rng.normal([1, 0], 0.1, (n - len(big), 2))
    return np.vstack([big, small])


def pe(selector=None, **kw):
    params = dict(
        random_api=np.array([[0.0, -2.0], [0.0, 0.0], [0.0, 2.0]]),
        variation_api=GaussianVariation(0.1, 2),
        selector=selector or Rank(),
        n_synthetic=3,
        iterations=10,
        epsilon=4.0,
        delta=1e-5,
        random_state=0,
    )
    params.update(kw)
    return PrivateEvolution(**params)


def test_fit_moves_points_to_the_data_and_reports_privacy():
    X = mixture()
    model = pe(iterations=20).fit(X)
    assert model.synthetic_.shape == (3, 2)
    # rank selection: every point ends on the big cluster
    assert np.all(np.linalg.norm(model.synthetic_ - [-1, 0], axis=1) < 0.4)
    report = model.privacy_report_
    for key in ("epsilon", "delta", "sigma", "mu", "steps", "adjacency", "sensitivity"):
        assert key in report
    assert (
        report["steps"] == 20
        and report["adjacency"] == "add_remove"
        and report["sensitivity"] == 1.0
    )
    assert report["sigma"] == pytest.approx(accounting.gaussian_sigma(4.0, 1e-5, 20))
    assert report["epsilon"] == pytest.approx(4.0, rel=1e-9)
    assert report["mu"] == pytest.approx(np.sqrt(20) / report["sigma"])
    assert report["dp_event"]["type"] == "SelfComposedDpEvent" and report["dp_event"]["count"] == 20
    json.dumps(report)  # serialisable as is


def test_history_records_every_round():
    X = mixture()
    seen = []
    model = pe(callbacks=[seen.append]).fit(X)
    assert len(model.history_) == 10 and [r.iteration for r in seen] == list(range(10))
    first = model.history_[0]
    assert first.candidates.shape == (3, 2) and first.noisy_counts.shape == (3,)
    later = model.history_[1]
    assert later.candidates.shape == (9, 2)  # 3 parents + 2 variations each
    np.testing.assert_array_equal(later.candidates[:3], model.history_[0].selected_points)
    assert set(first.seconds) == {"histogram", "selection", "variation"}
    np.testing.assert_array_equal(model.synthetic_, model.history_[-1].selected_points)


def test_same_seed_same_result_and_different_seed_differs():
    X = mixture()
    a = pe(selector=Subsample()).fit(X).synthetic_
    b = pe(selector=Subsample()).fit(X).synthetic_
    c = pe(selector=Subsample(), random_state=1).fit(X).synthetic_
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_generator_random_state_is_used_not_copied():
    X = mixture()
    rng = np.random.default_rng(5)
    pe(random_state=rng).fit(X)
    assert not np.array_equal(
        rng.bit_generator.state["state"], np.random.default_rng(5).bit_generator.state["state"]
    )


def test_replace_adjacency_doubles_noise_variance():
    X = mixture()
    a, b = pe().fit(X), pe(adjacency="replace").fit(X)
    assert b.sigma_ == pytest.approx(np.sqrt(2) * a.sigma_)
    assert b.privacy_report_["epsilon"] == pytest.approx(4.0, rel=1e-9)


def test_random_api_population_size():
    X = mixture()
    model = pe(random_api=UniformBall(3.0), population_size=50).fit(X)
    assert model.history_[0].candidates.shape == (50, 2)
    model = pe(random_api=UniformBall(3.0)).fit(X)
    assert model.history_[0].candidates.shape == (9, 2)  # m * (1 + per_point)


def test_fit_does_not_change_parameters():
    model = pe()
    before = dict(vars(model))
    model.fit(mixture())
    assert all(vars(model)[k] is v for k, v in before.items())


class NewPoints:
    """A selector that returns fresh points (like weighted k-means) and resizes the next
    population."""

    def select(self, candidates, noisy_counts, context):
        # n is private under add/remove adjacency: selectors never see the exact n
        assert context.n_private is None and context.iterations == 4
        centre = candidates[np.argmax(noisy_counts)]
        return Selection(points=centre[None, :] + 0.0, variations_per_point=5)


def test_selector_may_make_new_points_and_resize_population():
    model = pe(selector=NewPoints(), iterations=4).fit(mixture())
    assert model.history_[1].candidates.shape == (6, 2)
    assert model.history_[0].selected is None


@pytest.mark.parametrize(
    "kwargs,match",
    [
        (dict(epsilon=0), "epsilon"),
        (dict(epsilon=-1), "epsilon"),
        (dict(delta=0), "delta"),
        (dict(delta=1.5), "delta"),
        (dict(iterations=0), "iterations"),
        (dict(n_synthetic=0), "n_synthetic"),
        (dict(adjacency="swap"), "adjacency"),
        (dict(random_api=np.zeros((3, 5))), "features"),
        (dict(selector=object()), "selector"),
        (dict(random_state="seed"), "random_state"),
    ],
)
def test_bad_parameters(kwargs, match):
    with pytest.raises(ValueError, match=match):
        pe(**kwargs).fit(mixture())


@pytest.mark.parametrize(
    "X,match",
    [
        (np.full((5, 2), np.nan), "NaN"),
        (np.array([[1.0, np.inf], [0.0, 0.0]]), "NaN"),
        (np.zeros(5), "2-D"),
        (np.zeros((0, 2)), "at least 1 row"),
        (np.zeros((5, 3)), "features"),
    ],
)
def test_bad_data(X, match):
    with pytest.raises(ValueError, match=match):
        pe().fit(X)


def test_a_defaulted_delta_too_large_for_the_data_is_refused_from_the_first_release():
    X = mixture(n=2000)  # ~2000 noisy votes: 1/(10 n) = 5e-5, below a default of 1e-3
    with pytest.raises(ValueError, match="default delta 0.001 is too large") as refused:
        pe(delta=accounting.DefaultDelta(1e-3), iterations=3).fit(X)
    assert "2000" not in str(refused.value)  # a noisy order of magnitude, never the exact n
    budget = BudgetAccountant(epsilon=10.0, delta=1e-2)
    with pytest.raises(ValueError, match="too large"):
        pe(delta=accounting.DefaultDelta(1e-3), iterations=3, accountant=budget).fit(X)
    assert budget.spent()[0] > 0  # the release behind the refusal is paid for
    assert pe(delta=1e-3, iterations=3).fit(X).synthetic_.shape == (3, 2)  # a chosen δ stands
    assert pe(delta=accounting.DefaultDelta(1e-5), iterations=3).fit(X).synthetic_.shape == (3, 2)


def test_the_plug_in_contracts_are_protocols_checked_at_run_time():
    from privevo.protocols import RandomAPI, SelectionVariationAPI, VariationAPI
    from privevo.selection import Selector

    assert isinstance(UniformBall(1.0), RandomAPI)
    assert isinstance(GaussianVariation(0.1, 2), VariationAPI)
    assert not isinstance(GaussianVariation(0.1, 2), SelectionVariationAPI)
    assert isinstance(Rank(), Selector) and not isinstance(UniformBall(1.0), Selector)
    X = np.random.default_rng(0).normal(size=(40, 2))
    for bad in ("random_api", "variation_api", "selector"):
        params = dict(random_api=UniformBall(3.0), variation_api=GaussianVariation(0.2, 2))
        params["selector"] = Rank()
        params[bad] = object()
        pe = PrivateEvolution(**params, n_synthetic=3, iterations=1, epsilon=1.0, delta=1e-5)
        with pytest.raises(ValueError, match=f"The '{bad}' parameter of PrivateEvolution"):
            pe.fit(X)
