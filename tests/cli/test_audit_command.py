"""``privevo audit``: the JSON rows and the table, and a failing exit status when a claim is
violated (its bad inputs are in test_bad_inputs.py)."""

from __future__ import annotations

import json

import pytest

from privevo import audit
from privevo.audit import audit_release
from privevo.cli import main
from privevo.private.release import _NOISES

DELTA = 1e-5


def _quarter_sigma(counts, sigma, rng):
    """A planted bug: the release draws with σ/4 and claims σ."""
    return _NOISES["gaussian"](counts, sigma / 4, rng)


def test_cli_audit_json(capsys):

    from privevo.cli import main

    code = main(
        [
            "audit",
            "--epsilon",
            "1",
            "--releases",
            "4000",
            "--runs",
            "0",
            "--noise",
            "gaussian",
            "--adjacency",
            "add_remove",
            "--seed",
            "2",
            "--json",
        ]
    )
    rows = json.loads(capsys.readouterr().out)
    assert code == 0
    settings = [r["setting"] for r in rows]
    assert settings == [
        "single release",
        "noisy row count",
        "user-level votes (k = 1, 4 rows per user)",
        "user-level votes (k = 3, 4 rows per user)",
        "DPLloyd iteration (box without 0)",
        *(f"TabularPE {family} (one release)" for family in audit.TABLE_FAMILIES),
        "TabularPE marginal choice (one release)",
        "label-restricted votes (2 labels, k = 1)",
        "label-restricted votes (2 labels, k = 3)",
    ]
    for row in rows:
        assert row["epsilon_lower"] <= row["claimed_epsilon"] == pytest.approx(1.0)


def test_cli_audit_table_and_failing_exit_status(capsys, monkeypatch):

    code = main(
        [
            "audit",
            "--epsilon",
            "4",
            "--releases",
            "4000",
            "--runs",
            "0",
            "--noise",
            "discrete_gaussian",
            "--adjacency",
            "replace",
            "-q",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    settings = 6 + len(audit.TABLE_FAMILIES)  # six besides the table families (one: the choice)
    assert "| single release | discrete_gaussian | replace |" in out
    assert f"{settings} of {settings} settings" in out

    broken = audit_release(1.0, DELTA, n_releases=20_000, random_state=1, add_noise=_quarter_sigma)
    monkeypatch.setattr(audit, "run_audit", lambda **kwargs: [broken])
    assert main(["audit", "--runs", "0", "-q"]) == 1
    assert "VIOLATED in 1" in capsys.readouterr().out
