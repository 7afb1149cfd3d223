"""Helpers and fixtures shared by the test files: the in-process CLI runner, small PE runs,
and the 2-D mixture most command-line tests read."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Callable

import numpy as np
import pytest

# One OpenMP thread per process unless the caller says otherwise: on a shared 2-core machine the
# OpenMP runtimes of scikit-learn, faiss and torch spin-wait for busy cores, and a 1-second fit
# (HistGradientBoostingClassifier in metrics.downstream_accuracy) took minutes. Read when each
# runtime loads, i.e. on the first import of those libraries, after this file.
os.environ.setdefault("OMP_NUM_THREADS", "1")


def run_cli(argv, capsys) -> tuple[int, str, str]:
    """``privevo ARGV`` in this process: (exit status, stdout, stderr); argparse errors too."""
    from privevo.cli import main

    try:
        code = main([str(a) for a in argv])
    except SystemExit as exit_:  # argparse usage errors
        code = exit_.code
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def cli(capsys) -> Callable[[list], tuple[int, str, str]]:
    """``cli(argv)`` runs ``privevo ARGV`` in this process: (exit status, stdout, stderr)."""
    return lambda argv: run_cli(argv, capsys)


@pytest.fixture(scope="session")
def mixture400() -> np.ndarray:
    """400 rows of the demo's 2-D mixture (seed 0): the command-line tests' data."""
    from privevo.demo import mixture_2d

    return mixture_2d(400, np.random.default_rng(0))[0]


@pytest.fixture
def small_pe() -> Callable[..., object]:
    """A factory of small PE runs: uniform ball S₀, Gaussian variation, rank selection, all in
    the unit ball; keyword arguments override any parameter, the plug-ins too (``random_api``,
    ``variation_api``, ``selector``)."""
    from privevo import PrivateEvolution
    from privevo.selection import Rank
    from privevo.variation import GaussianVariation, UniformBall

    def make(**overrides):
        plugins = dict(random_api=UniformBall(1.0), selector=Rank())
        plugins["variation_api"] = GaussianVariation(0.1, per_point=2, radius=1.0)
        params = dict(n_synthetic=10, iterations=3, epsilon=2.0, delta=1e-5, random_state=5)
        return PrivateEvolution(**{**plugins, **params, **overrides})

    return make


# -- the privacy checks' tables: each process (pytest-xdist worker) writes what it saw, the main
# process prints the merged tables at the end of the run ------------------------------------------

_TABLES = "PRIVEVO_TEST_TABLES"


def pytest_configure(config) -> None:
    if not hasattr(config, "workerinput"):  # the main process; workers inherit the variable
        os.environ[_TABLES] = tempfile.mkdtemp(prefix="privevo-test-tables-")


def pytest_sessionfinish(session) -> None:
    neighbour = sys.modules.get("helpers.neighbour")
    if neighbour is None or _TABLES not in os.environ:
        return
    seen = {"ratios": neighbour.LARGEST_RATIOS, "plants": neighbour.PLANT_RESULTS}
    Path(os.environ[_TABLES], f"{os.getpid()}.json").write_text(json.dumps(seen))


def pytest_terminal_summary(terminalreporter, config) -> None:
    if hasattr(config, "workerinput") or _TABLES not in os.environ:
        return
    ratios: dict[str, list] = {}
    plants: dict[str, str] = {}
    for path in Path(os.environ[_TABLES]).glob("*.json"):
        seen = json.loads(path.read_text())
        for family, (ratio, where) in seen["ratios"].items():
            if ratio > ratios.get(family, [-1.0])[0]:
                ratios[family] = [ratio, where]
        plants.update(seen["plants"])
    write = terminalreporter.write_line
    if ratios:
        write("sensitivity replay: largest observed change / declared sensitivity per release")
        for family, (ratio, where) in sorted(ratios.items()):
            write(f"  {family:<28} {ratio:8.4f}   {where}")
    if plants:
        caught = sum(verdict.startswith("caught") for verdict in plants.values())
        write(f"planted-leak catalogue: {caught} of {len(plants)} plants caught")
        for name, verdict in sorted(plants.items()):
            write(f"  {name:<44} {verdict}")
