"""``privevo account``: σ from ε and back, for the Gaussian (GDP) and the discrete Gaussian
(zCDP), down to the tiniest δ."""

from __future__ import annotations

import json

import pytest

from privevo import accounting


def test_account_both_directions(cli):
    code, out, _ = cli(["account", "--epsilon", "1", "--delta", "1e-5", "--steps", "10", "--json"])
    forward = json.loads(out)
    assert code == 0 and forward["sigma"] == pytest.approx(accounting.gaussian_sigma(1.0, 1e-5, 10))
    code, out, _ = cli(
        ["account", "--sigma", str(forward["sigma"]), "--delta", "1e-5", "--steps", "10", "--json"],
    )
    assert json.loads(out)["epsilon"] == pytest.approx(1.0, rel=1e-9)


def test_account_tiny_delta_gives_the_gdp_sigma(cli):
    # guards against: sigma = 3.16e8 beside "epsilon: 1.0"
    argv = ["account", "--epsilon", "1", "--delta", "1e-300", "--steps", "10", "--json"]
    code, out, _ = cli(argv)
    result = json.loads(out)
    assert code == 0 and result["sigma"] == pytest.approx(116.5789, abs=1e-3)
    assert 1 - 1e-9 <= result["epsilon"] <= 1.0


def test_account_discrete_gaussian(cli):
    tail = ["--delta", "1e-5", "--steps", "10", "--noise", "discrete_gaussian", "--json"]
    code, out, err = cli(["account", "--epsilon", "1", *tail])
    assert code == 0, err
    out = json.loads(out)
    assert out["sigma"] == pytest.approx(accounting.discrete_gaussian_sigma(1.0, 1e-5, 10))
    assert out["rho"] == pytest.approx(10 / (2 * out["sigma"] ** 2)) and "mu" not in out
    code, back, err = cli(["account", "--sigma", str(out["sigma"]), *tail])
    assert code == 0, err
    assert json.loads(back)["epsilon"] == pytest.approx(1.0, abs=1e-6)
