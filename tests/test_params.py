"""Plug-ins' get_params and repr are generated from their constructors."""

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
