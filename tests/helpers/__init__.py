"""Helpers the test folders share (``tests/`` is on pytest's ``pythonpath``)."""

from __future__ import annotations

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
