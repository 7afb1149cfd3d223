"""Every command's --help has examples; the demo's quick run writes its tables and plots."""

from __future__ import annotations

import os

import pytest


def test_help_has_examples_for_every_command(cli):
    for command in ("kmeans", "synth", "account", "demo"):
        code, out, _ = cli([command, "--help"])
        assert code == 0 and "examples:" in out and f"privevo {command}" in out


@pytest.mark.slow  # the demo's quick run fits every method at two epsilons
def test_demo_quick_writes_tables_and_plots(tmp_path):
    from privevo.demo import run_demo

    result = run_demo(seed=0, out_dir=tmp_path, quick=True)
    kmeans, mixture = result["tables"]
    floor = next(r for r in kmeans["rows"] if r["method"].startswith("k-means++"))["ε=1"]
    for row in kmeans["rows"]:
        assert row["ε=1"] >= floor * 0.99  # DP centres do not beat the non-private fit
    assert {r["selector"] for r in mixture["rows"]} >= {"rank", "subsample"}
    assert all(r["small cluster kept"].endswith("%") for r in mixture["rows"])
    names = sorted(os.path.basename(p) for p in result["plots"])
    assert "kmeans_loss_vs_epsilon.png" in names and "mixture_trajectories.png" in names
    assert all((tmp_path / n).stat().st_size > 10_000 for n in names)
