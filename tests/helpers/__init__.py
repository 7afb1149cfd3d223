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
