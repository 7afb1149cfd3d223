"""Plug-ins' get_params, repr and fingerprint are generated from their constructors; the
fingerprint holds every parameter but no credential."""

from __future__ import annotations

import json

import numpy as np
import pytest

from privevo._params import constructor_params, describe, params_repr
from privevo.selection import GAPE, Rank, Subsample, WeightedKMeans
from privevo.variation import (
    GaussianVariation,
    LevyVariation,
    MultiScaleVariation,
    SpherePacking,
    UniformBall,
)

PLUGINS = [
    Rank(),
    Subsample(replace=False),
    GAPE(R=2.0, beta=0.1),
    WeightedKMeans(n_init=5),
    UniformBall(3.0),
    SpherePacking(),
    GaussianVariation(0.2, 3),
    MultiScaleVariation(2.0, max_level=6),
    LevyVariation(gamma=0.02),
]


@pytest.mark.parametrize("plugin", PLUGINS, ids=lambda p: type(p).__name__)
def test_get_params_round_trips_through_the_constructor(plugin):
    params = plugin.get_params()
    clone = type(plugin)(**params)
    assert describe(clone) == describe(plugin)
    assert repr(clone) == repr(plugin) == params_repr(plugin)


def test_repr_lists_the_parameters_that_differ_from_their_defaults():
    assert repr(GAPE(R=2.0, beta=0.1)) == "GAPE(R=2.0, beta=0.1)"
    assert repr(Rank()) == "Rank()"
    assert repr(UniformBall(1.0, center=np.zeros(20))) == "UniformBall(center=array(shape=(20,)))"


def test_a_plugin_that_does_not_store_a_parameter_is_named():
    class Forgetful:
        def __init__(self, scale: float = 1.0):
            self.size = scale

    with pytest.raises(TypeError, match=r"Forgetful must store its parameters \['scale'\]"):
        constructor_params(Forgetful())


def _changed(value):
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value + 1 if value == value else 0.5
    if isinstance(value, str):
        return value + "x"
    if value is None:
        return 0.25
    return None


@pytest.mark.parametrize("plugin", PLUGINS, ids=lambda p: type(p).__name__)
def test_changing_any_plugin_parameter_changes_the_fingerprint(plugin):
    names = list(constructor_params(plugin))  # every __init__ parameter, read back from the object
    for name in names:
        value = _changed(getattr(plugin, name))
        assert value is not None, f"no changed value for {type(plugin).__name__}.{name}"
        other = type(plugin)(**{n: getattr(plugin, n) for n in names if n != name}, **{name: value})
        assert describe(other) != describe(plugin), (
            f"{type(plugin).__name__}.{name} is not in the fingerprint"
        )


def test_fingerprint_hides_credentials_but_keeps_token_counts():
    from privevo._params import Plugin

    class Generator(Plugin):
        def __init__(self, max_new_tokens=40, api_key="sk-1", auth_token="t", temperature=1.0):
            self.max_new_tokens, self.api_key = max_new_tokens, api_key
            self.auth_token, self.temperature = auth_token, temperature

    Generator.__module__ = "privevo.text.llm"  # described as a privevo plug-in
    seen = describe(Generator())
    assert "sk-1" not in json.dumps(seen) and '"t"' not in json.dumps(seen)
    assert describe(Generator(max_new_tokens=41)) != seen  # a count, not a credential
    assert describe(Generator(api_key="sk-2")) == seen
