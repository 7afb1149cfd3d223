"""Fixtures of the command-line tests; tests/ on the path for the neighbour check."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/neighbour.py


@pytest.fixture
def no_model(monkeypatch):
    """The text commands may not load a model in these tests."""
    from privevo.cli import text as cli_text

    monkeypatch.setattr(cli_text, "_models", lambda args: pytest.fail("a model was loaded"))
