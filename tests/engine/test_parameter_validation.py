"""Shared checks (privevo._validation): one range rule, messages that quote no cell, and
privevo's own parameter validator."""

from __future__ import annotations

import numpy as np
import pytest

from privevo import _validation as v


def test_ranges_are_one_rule():
    assert v.check_epsilon(1e-6) == 1e-6 and v.check_epsilon(1e6) == 1e6
    for bad in (1e-12, 0.0, 2e6, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="epsilon must be"):
            v.check_epsilon(bad)
    assert v.check_delta(1e-300) == 1e-300
    with pytest.raises(ValueError, match="delta must be at least 1e-300"):
        v.check_delta(5e-324)
    assert v.check_rounds(v.MAX_ROUNDS) == v.MAX_ROUNDS
    with pytest.raises(ValueError, match=f"iterations must be at most {v.MAX_ROUNDS}"):
        v.check_rounds(v.MAX_ROUNDS + 1)


def test_check_points_never_quotes_a_cell():
    with pytest.raises(ValueError) as err:
        v.check_points([["1.5", "Jane Roe"]])
    assert "Jane" not in str(err.value) and "numeric 2-D array" in str(err.value)


def test_interval_bounds_and_their_brackets():
    from numbers import Integral, Real

    ints = v.Interval(Integral, 1, None, closed="left")
    assert ints.accepts(1) and ints.accepts(np.int64(7)) and not ints.accepts(0)
    assert not ints.accepts(1.0) and not ints.accepts(True)  # a bool is not a count
    assert str(ints) == "an int in the range [1, inf)"
    unit = v.Interval(Real, 0, 1, closed="left")
    assert unit.accepts(0) and unit.accepts(0.5) and not unit.accepts(1.0)
    assert not unit.accepts(float("nan"))
    assert str(unit) == "a float in the range [0.0, 1.0)"
    assert str(v.Interval(Real, 0, None, closed="neither")) == "a float in the range (0.0, inf)"


def test_validate_params_says_what_to_fix_in_one_line():
    from numbers import Integral

    constraints = {
        "k": [v.Interval(Integral, 1, None, closed="left")],
        "mode": [v.StrOptions({"a", "b"})],
        "api": [v.HasMethods(("sample",)), None],
        "flag": ["boolean"],
    }
    good = {"k": 3, "mode": "a", "api": None, "flag": np.bool_(True), "free": object()}
    v.validate_params(constraints, good, "Thing")  # "free" has no constraint: not checked
    cases = {
        "k": (0, "The 'k' parameter of Thing must be an int in the range [1, inf). Got 0 instead."),
        "mode": ("c", "The 'mode' parameter of Thing must be a str among {'a', 'b'}. Got 'c'"),
        "api": (3, "must be an object implementing 'sample' or None. Got 3 instead."),
        "flag": (1, "The 'flag' parameter of Thing must be a bool. Got 1 instead."),
    }
    for name, (bad, message) in cases.items():
        with pytest.raises(v.InvalidParameterError) as err:
            v.validate_params(constraints, {**good, name: bad}, "Thing")
        assert message in str(err.value) and "\n" not in str(err.value)
        assert isinstance(err.value, ValueError) and isinstance(err.value, TypeError)


def test_validate_params_never_quotes_an_array_or_an_object():
    from numbers import Integral

    secret = np.array([[123456.789]])
    with pytest.raises(ValueError) as err:
        v.validate_params({"k": [v.Interval(Integral, 1, None)]}, {"k": secret}, "Thing")
    assert "123456" not in str(err.value) and "Got a ndarray instead" in str(err.value)
    with pytest.raises(ValueError) as err:
        v.validate_params({"s": [v.StrOptions({"a"})]}, {"s": "Jane Roe " * 10}, "Thing")
    assert "Jane" not in str(err.value)


def test_privevo_validates_without_scikit_learn_internals():
    import inspect

    from privevo import budget, evolution

    for module in (evolution, budget, v):
        assert "_param_validation" not in inspect.getsource(module)
