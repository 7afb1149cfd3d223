"""k-neighbour and user-level votes through the PE loop: the report names the unit, the
checkpoint binds the user ids, discrete noise is refused."""

from __future__ import annotations

import numpy as np
import pytest

from privevo import PrivateEvolution
from privevo.demo import MIXTURE_START, mixture_2d
from privevo.selection import Rank
from privevo.variation import GaussianVariation


def make(**kw):
    params = dict(n_synthetic=3, iterations=3, epsilon=2.0, delta=1e-5, random_state=0)
    params.update(kw)
    return PrivateEvolution(MIXTURE_START, GaussianVariation(0.1, 2), Rank(), **params)


@pytest.fixture(scope="module")
def data():
    X = mixture_2d(rng=np.random.default_rng(0))[0][:400]
    return X, np.arange(len(X)) // 4  # 100 users of 4 rows


def test_user_level_votes_report_the_unit_and_keep_no_ids(data):
    X, users = data
    model = make().fit(X, groups=users)
    report = model.privacy_report_
    assert report["unit"] == "user" and report["sensitivity"] == 1.0
    assert not any(
        isinstance(v, np.ndarray) and v.shape == users.shape for v in vars(model).values()
    )
    # each user of 4 rows adds at most norm 1: the total vote mass is about n_users, not n
    total = sum(r.noisy_counts.sum() for r in model.history_) / len(model.history_)
    assert abs(total - 100) < 6 * report["sigma"] * np.sqrt(len(model.history_[0].noisy_counts))
    assert make().fit(X).privacy_report_["unit"] == "row"


def test_k_neighbour_votes_keep_sigma(data):
    X, _ = data
    one, three = make().fit(X), make(n_neighbors=3).fit(X)
    assert one.sigma_ == three.sigma_  # sensitivity stays 1 for every k
    assert three.privacy_report_["public_parameters"]["n_neighbors"] == 3


def test_discrete_noise_refused_with_votes_that_are_not_integers(data):
    X, users = data
    with pytest.raises(ValueError, match="not integers"):
        make(noise="discrete_gaussian").fit(X, groups=users)
    with pytest.raises(ValueError, match="not integers"):
        make(noise="discrete_gaussian", n_neighbors=2).fit(X)


def test_checkpoint_binds_the_user_ids(tmp_path, data):
    X, users = data
    path = tmp_path / "run.ckpt"
    make(checkpoint=path).fit(X, groups=users)
    other = users.copy()
    other[:8] = other[8]  # the first two users' rows given to a third
    with pytest.raises(ValueError, match="made on other data"):
        make(checkpoint=path).fit(X, groups=other)
