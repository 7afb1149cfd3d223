"""Helpers the test folders share (``tests/`` is on pytest's ``pythonpath``)."""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterable

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]


def slow_unless(keep: Callable[..., bool], cases: Iterable) -> list:
    """``cases`` as pytest parameters, those ``keep(*case)`` rejects marked slow: ``make
    test-fast`` runs the representative few, ``make test`` all of them."""
    params = []
    for case in cases:
        case = case if isinstance(case, tuple) else (case,)
        params.append(pytest.param(*case, marks=() if keep(*case) else pytest.mark.slow))
    return params


def import_graph_tool():
    """``tools/import_graph.py`` (not a package) loaded as the module ``import_graph``."""
    import importlib.util
    import sys

    if "import_graph" in sys.modules:
        return sys.modules["import_graph"]
    spec = importlib.util.spec_from_file_location(
        "import_graph", REPO_ROOT / "tools" / "import_graph.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules["import_graph"] = module
    spec.loader.exec_module(module)
    return module
