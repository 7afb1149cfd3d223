"""Neighbour replay of ``privevo synth`` with every selector the command offers: with the
releases pinned, D and D' give the same output files, report and JSON (tests/neighbour.py)."""

from __future__ import annotations

from itertools import product

import numpy as np
import pytest

from helpers import slow_unless
from neighbour import assert_neighbour_safe, cli_run
from privevo.selection import SELECTOR_NAMES

_RNG = np.random.default_rng(0)
D = np.array([[-1.0, -1.0], [1.0, 1.0], [1.0, -1.0]])[_RNG.integers(0, 3, 300)]
D += 0.2 * _RNG.standard_normal(D.shape)
NEIGHBOURS = {"add an extreme row": np.vstack([D, [[1e6, -1e6]]]), "remove a row": D[1:]}


def write_points(folder, X) -> None:
    np.savetxt(folder / "data.csv", X, delimiter=",", header="x,y", comments="")


@pytest.mark.parametrize(
    "selector, neighbour",
    # test-fast: gape_agg, whose neighbourhood sums no library-level replay runs through the CLI
    slow_unless(lambda selector, _: selector == "gape_agg", product(SELECTOR_NAMES, NEIGHBOURS)),
)
@pytest.mark.parametrize("json_out", [False, True])
def test_cli_synth_every_selector(tmp_path, selector, neighbour, json_out):
    argv = ["synth", "{w}/data.csv", "--m", "5", "--selector", selector, "--epsilon", "1"]
    argv += ["--radius", "3", "--iterations", "2", "--seed", "5"]
    argv += ["--json"] if json_out else ["-o", "{w}/out.csv"]
    assert_neighbour_safe(cli_run(tmp_path, argv, write_points), D, NEIGHBOURS[neighbour])
