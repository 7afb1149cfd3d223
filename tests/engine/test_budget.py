"""BudgetAccountant: exact GDP composition across fits, refusal before any data access."""

from __future__ import annotations

import math

import dp_accounting
import numpy as np
import pytest

from privevo import BudgetAccountant, accounting
from privevo.budget import BudgetExceededError
from privevo.private import Release

DELTA = 1e-5


def pld_epsilon(events, delta: float) -> float:
    acc = dp_accounting.pld.PLDAccountant(value_discretization_interval=1e-4)
    for event in events:
        acc.compose(event)
    return acc.get_epsilon(delta)


def fit_release(epsilon: float, steps: int = 5, sensitivity: float = 1.0) -> list[Release]:
    """The releases of a T-round Gaussian fit calibrated to (ε, δ)."""
    return [
        Release(
            "nn_histogram",
            accounting.gaussian_sigma(epsilon, DELTA, steps, sensitivity),
            sensitivity,
            count=steps,
        )
    ]


class Untouchable:
    """A data source that fails on any access."""

    def __getattr__(self, name):
        raise AssertionError(f"data accessed: {name}")

    def __len__(self):
        raise AssertionError("data accessed: len")


def guarded_fit(acc: BudgetAccountant, epsilon: float, data) -> None:
    """What an estimator's fit does: check, read the data, charge."""
    acc.check(epsilon=epsilon, delta=DELTA, name="fit")
    len(data)
    acc.charge(fit_release(epsilon), name="fit")


def test_two_fits_of_0_6_compose_exactly_and_a_third_is_refused_before_data_access():
    acc = BudgetAccountant(1.0, DELTA)
    guarded_fit(acc, 0.6, np.zeros(3))
    guarded_fit(
        acc, 0.6, np.zeros(3)
    )  # GDP: √2·μ(0.6) spends ε ≈ 0.876 < 1 (basic composition: 1.2)
    spent = acc.spent()[0]
    assert spent == pytest.approx(
        accounting.epsilon_of_mu(math.sqrt(2) * accounting.mu_of_epsilon(0.6, DELTA), DELTA)
    )
    assert 0.87 < spent < 0.89
    with pytest.raises(BudgetExceededError, match="budget"):
        guarded_fit(acc, 0.6, Untouchable())
    assert len(acc.ledger) == 2


def test_the_fit_that_would_exceed_is_refused_before_data_access():
    acc = BudgetAccountant(1.0, DELTA)
    guarded_fit(acc, 0.6, np.zeros(3))
    with pytest.raises(BudgetExceededError) as err:
        guarded_fit(acc, 0.8, Untouchable())
    assert "\n" not in str(err.value) and isinstance(err.value, ValueError)
    assert acc.spent()[0] == pytest.approx(0.6, rel=1e-9)


@pytest.mark.parametrize("epsilons", [(0.6, 0.6), (0.3, 0.5, 0.2), (1.0,)])
def test_spent_matches_dp_accounting_pld(epsilons):
    acc = BudgetAccountant(10.0, DELTA)
    events = []
    for eps in epsilons:
        acc.charge(fit_release(eps))
        r = fit_release(eps)[0]
        events.append(
            dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(r.sigma), r.count)
        )
    assert acc.spent()[0] == pytest.approx(pld_epsilon(events, DELTA), rel=2e-3)
    assert acc.spent()[0] == pytest.approx(pld_epsilon([acc.dp_event()], DELTA), rel=2e-3)


def test_remaining_is_the_largest_fit_that_passes():
    acc = BudgetAccountant(1.0, DELTA)
    acc.charge(fit_release(0.5))
    left, delta = acc.remaining()
    assert delta == DELTA and 0 < left < 1.0
    acc.check(epsilon=left * (1 - 1e-6), delta=DELTA)
    with pytest.raises(BudgetExceededError):
        acc.check(epsilon=left * 1.001, delta=DELTA)


def test_charge_over_budget_is_recorded_then_raises():
    acc = BudgetAccountant(0.5, DELTA)
    with pytest.raises(BudgetExceededError):
        acc.charge(fit_release(0.8))
    assert len(acc.ledger) == 1 and acc.spent()[0] == pytest.approx(0.8, rel=1e-9)


def test_discrete_gaussian_switches_to_zcdp():
    acc = BudgetAccountant(5.0, DELTA)
    acc.charge(fit_release(0.5))
    sigma = accounting.discrete_gaussian_sigma(0.5, DELTA, 3)
    acc.charge([Release("nn_histogram", sigma, 1.0, "discrete_gaussian", count=3)])
    assert acc.accountant == "zcdp" and acc.mu_spent is None
    rho = accounting.mu_of_epsilon(0.5, DELTA) ** 2 / 2 + accounting.zcdp_rho(sigma, 3)
    assert acc.spent()[0] == pytest.approx(accounting.epsilon_of_rho(rho, DELTA))


def test_charges_a_privacy_report_and_refuses_non_private_runs():
    from privevo.report import non_private_report, privacy_report

    acc = BudgetAccountant(2.0, DELTA)
    report = privacy_report(
        epsilon_target=1.0, delta=DELTA, adjacency="add_remove", releases=fit_release(1.0)
    )
    acc.charge(report)
    assert acc.spent()[0] == pytest.approx(1.0, rel=1e-9)
    with pytest.raises(ValueError, match="non-private"):
        acc.charge(non_private_report(delta=DELTA, adjacency="add_remove", steps=3))
    with pytest.raises(ValueError, match="non-private"):
        acc.check(epsilon=math.inf)


@pytest.mark.parametrize("args", [(0, DELTA), (1.0, 0), (1.0, 1.5), (math.inf, DELTA)])
def test_bad_budget(args):
    with pytest.raises(ValueError):
        BudgetAccountant(*args)


def test_empty_budget():
    acc = BudgetAccountant(1.0, DELTA)
    assert acc.spent() == (0.0, 0.0) and acc.remaining()[0] == pytest.approx(1.0, rel=1e-9)


class _Untouchable:
    """Private data that fails the test if anything reads it."""

    def __array__(self, *args, **kwargs):
        raise AssertionError("the data was read")

    def __len__(self):
        raise AssertionError("the data was read")

    @property
    def shape(self):
        raise AssertionError("the data was read")


@pytest.mark.parametrize(
    "make",
    [
        lambda acc: __import__("privevo").DPKMeans(
            2, epsilon=0.6, radius=1.0, random_state=0, accountant=acc
        ),
        lambda acc: __import__("privevo").PrivateEvolution(
            __import__("privevo.demo", fromlist=["x"]).MIXTURE_START,
            __import__("privevo.variation", fromlist=["x"]).GaussianVariation(0.1, 2),
            __import__("privevo.selection", fromlist=["x"]).Rank(),
            3,
            2,
            0.6,
            1e-6,
            random_state=0,
            accountant=acc,
        ),
    ],
    ids=["DPKMeans", "PrivateEvolution"],
)
def test_estimators_take_an_accountant(make):
    import numpy as np

    from privevo import BudgetAccountant

    X = np.random.default_rng(0).normal(0, 0.3, (300, 2))
    acc = BudgetAccountant(1.0, 1e-6)
    make(acc).fit(X)
    make(acc).fit(X)  # two 0.6 fits compose (GDP) to about 0.88
    assert 0.8 < acc.spent()[0] <= 1.0
    with pytest.raises(ValueError, match="would bring the spent epsilon"):
        make(acc).fit(_Untouchable())  # refused before the data is read


# -- every entry point checks its real cost before any data access -------------------


def _pe(accountant=None, **kw):
    from privevo import PrivateEvolution
    from privevo.selection import Rank
    from privevo.variation import GaussianVariation, UniformBall

    params = dict(n_synthetic=4, iterations=3, epsilon=1.0, delta=1e-5, random_state=0)
    params.update(kw)
    return PrivateEvolution(
        UniformBall(3.0), GaussianVariation(0.1), Rank(), accountant=accountant, **params
    )


def _points(n=200):
    return np.random.default_rng(0).normal(size=(n, 2))


def test_resume_checks_the_budget_before_drawing():
    """Replays the attack: with the budget spent, resume() drew releases and set synthetic_."""
    X = _points()
    first = _pe().fit(X)
    state = first.final_state_
    state.completed = 1
    acc = BudgetAccountant(1.0, 1e-5)
    acc.charge(fit_release(1.0))  # the whole budget spent
    late = _pe(acc)
    with pytest.raises(BudgetExceededError, match="would bring"):
        late.resume(X, state)
    assert not getattr(late, "releases_", None) and not hasattr(late, "synthetic_")
    assert len(acc.ledger) == 1


def test_noise_scale_is_checked_at_its_real_cost():
    """Replays the attack: noise_scale=0.05 at epsilon=0.1 passed the check, then overspent."""
    acc = BudgetAccountant(1.0, 1e-5)
    est = _pe(acc, epsilon=0.1, noise_scale=0.05)
    with pytest.raises(BudgetExceededError, match="would bring"):
        est.fit(_NoTouch())
    assert acc.ledger == [] and not est.releases_


def test_fit_without_groups_then_resume_with_groups_is_refused():
    """One run, one privacy unit: row-level rounds cannot be relabelled user-level."""
    X = _points()
    est = _pe(iterations=3)
    est.fit(X)
    state = est.final_state_
    state.completed = 1
    with pytest.raises(ValueError, match="one privacy unit"):
        est.resume(X, state, groups=np.arange(len(X)) // 10)
    est.resume(X, state)  # the same unit continues


class _NoTouch:
    """Private data whose every access fails the test: the check must come first."""

    def __getattr__(self, name):
        raise AssertionError(f"the data was read ({name}) before the budget check")

    def __array__(self, *args, **kwargs):
        raise AssertionError("the data was read before the budget check")

    def __len__(self):
        raise AssertionError("the data was read before the budget check")


def test_the_budget_is_checked_against_its_declared_constraints():
    for epsilon, delta in ((0.0, DELTA), (2e6, DELTA), (float("nan"), DELTA), (1.0, 1.0)):
        with pytest.raises(ValueError, match="parameter of BudgetAccountant must be a float"):
            BudgetAccountant(epsilon, delta)
    acc = BudgetAccountant(np.float32(1.0), 1e-6)
    assert type(acc.epsilon) is float and acc.epsilon == 1.0
