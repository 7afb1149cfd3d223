import numpy as np
import pytest
from scipy import stats

from privevo.variation import (
    GaussianVariation,
    LevyVariation,
    MultiScaleVariation,
    SpherePacking,
    UniformBall,
    levy_steps,
    mantegna_sigma,
)


def test_uniform_ball_is_inside_and_uniform_in_radius():
    pts = UniformBall(2.0, center=[1.0, 1.0, 1.0]).sample(20000, 3, np.random.default_rng(0))
    r = np.linalg.norm(pts - 1.0, axis=1)
    assert r.max() <= 2.0
    # uniform in the 3-ball: P(r <= 2 t) = t^3
    assert np.mean(r <= 1.0) == pytest.approx(1 / 8, abs=0.01)


def test_sphere_packing_spacing_and_containment():
    sp = SpherePacking(1.0)
    pts = sp.sample(40, 2, np.random.default_rng(0))
    assert pts.shape == (40, 2)
    assert np.linalg.norm(pts, axis=1).max() <= 1.0 + 1e-12
    d = np.linalg.norm(pts[:, None] - pts[None], axis=-1) + np.eye(40) * 10
    assert d.min() >= 2 * sp.spacing_ - 1e-12
    assert sp.spacing_ < 0.5  # 40 points do not fit at the initial spacing R/2


def test_sphere_packing_first_point_and_halving():
    sp = SpherePacking(1.0)
    pts = sp.sample(1, 5, np.random.default_rng(1))
    assert sp.spacing_ == 0.5 and np.linalg.norm(pts) <= 0.5  # drawn in the ball of radius R - p
    pts = sp.sample(3, 5, np.random.default_rng(1))
    # two points 2p = 1 apart inside the 0.5-ball are (almost surely) impossible: p halves to 0.25
    assert sp.spacing_ == 0.25 and np.linalg.norm(pts, axis=1).max() <= 0.75


def test_gaussian_variation_scale_and_grouping():
    parents = np.array([[0.0, 0.0], [10.0, 10.0]])
    out = GaussianVariation(0.5, 3000).vary(parents, np.random.default_rng(0))
    assert out.shape == (6000, 2)
    np.testing.assert_allclose(out[:3000].mean(0), [0, 0], atol=0.05)
    np.testing.assert_allclose(out[3000:].mean(0), [10, 10], atol=0.05)
    assert out[:3000].std() == pytest.approx(0.5, rel=0.05)
    assert GaussianVariation(0.5, 3).vary(parents, np.random.default_rng(0), per_point=7).shape == (
        14,
        2,
    )


def test_gaussian_variation_can_clip_to_ball():
    out = GaussianVariation(5.0, 100, radius=1.0).vary(np.zeros((1, 3)), np.random.default_rng(0))
    assert np.linalg.norm(out, axis=1).max() <= 1.0 + 1e-12


def test_multiscale_levels_and_scales():
    mv = MultiScaleVariation(R=2.0, max_level=1, per_scale=2)
    # l_min = ceil(-log2 4) = -2 ; levels -2..1 ; s^2 = 2^-l
    assert mv.levels.tolist() == [-2, -1, 0, 1]
    np.testing.assert_allclose(mv.scales**2, [4, 2, 1, 0.5])
    assert mv.per_point == 8
    out = MultiScaleVariation(R=2.0, max_level=1, per_scale=4000).vary(
        np.zeros((1, 2)), np.random.default_rng(0)
    )
    stds = out.reshape(4, 4000, 2).std(axis=(1, 2))
    np.testing.assert_allclose(stds, mv.scales, rtol=0.05)


def test_mantegna_sigma_known_value():
    # beta = 1.5 gives sigma_u ~= 0.6966 (Mantegna 1994; Yang's cuckoo search)
    assert mantegna_sigma(1.5) == pytest.approx(0.6966, abs=1e-4)


def test_levy_steps_are_heavy_tailed():
    rng = np.random.default_rng(0)
    levy = levy_steps((200000, 1), 1.5, rng).ravel()
    gauss = rng.standard_normal(200000)
    assert stats.kurtosis(levy) > 50 * max(stats.kurtosis(gauss), 0.1)
    # P(|s| > 10) decays like a power law, not like a Gaussian
    assert np.mean(np.abs(levy) > 10) > 1e-3 > np.mean(np.abs(gauss) > 10)
    assert np.array_equal(
        levy_steps((3, 2), 2.0, np.random.default_rng(1)),
        np.random.default_rng(1).standard_normal((3, 2)),
    )


def test_levy_variation_step_size_and_ball():
    var = LevyVariation(gamma=0.01, beta=1.75, per_point=20000, radius=1.0)
    out = var.vary(np.zeros((1, 2)), np.random.default_rng(0))
    assert np.linalg.norm(out, axis=1).max() <= 1.0 + 1e-12
    assert np.median(np.abs(out)) < 0.02  # typical steps are ~ gamma * R
    far = var.vary(np.array([[0.999, 0.0]]), np.random.default_rng(0))
    assert np.linalg.norm(far, axis=1).max() <= 1.0 + 1e-12


@pytest.mark.parametrize(
    "api,match",
    [
        (lambda: UniformBall(-1.0).sample(3, 2, np.random.default_rng(0)), "radius"),
        (lambda: SpherePacking(0.0).sample(3, 2, np.random.default_rng(0)), "radius"),
        (lambda: UniformBall(1.0).sample(0, 2, np.random.default_rng(0)), "n"),
        (lambda: GaussianVariation(-0.1).vary(np.zeros((1, 2)), np.random.default_rng(0)), "scale"),
        (lambda: LevyVariation(gamma=0).vary(np.zeros((1, 2)), np.random.default_rng(0)), "gamma"),
        (lambda: MultiScaleVariation(R=1.0, max_level=-5).levels, "max_level"),
    ],
)
def test_bad_parameters(api, match):
    with pytest.raises(ValueError, match=match):
        api()
