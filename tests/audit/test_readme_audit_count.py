"""Counts the README states are computed here from the code, not typed."""

from __future__ import annotations

import re

import privevo.audit.suite as audit
from helpers import REPO_ROOT

README = (REPO_ROOT / "README.md").read_text()


def _default_audit_settings(monkeypatch) -> int:
    """The settings ``privevo audit`` runs with its defaults, each audit function stubbed out."""
    names = [n for n in dir(audit) if n.startswith("audit_")]
    assert len(names) >= 5  # the suite's audit functions, all stubbed
    for name in names:
        monkeypatch.setattr(audit, name, lambda *args, _name=name, **kw: _name)
    return len(audit.run_audit())  # the CLI's defaults: 3 epsilons, 2 noises, 2 adjacencies


def test_the_readme_audit_count_is_the_number_of_default_settings(monkeypatch):
    claims = re.findall(r"(\d+) of (\d+) settings", README)
    assert claims, "the README states no audit count"
    settings = _default_audit_settings(monkeypatch)
    for passed, total in claims:
        assert int(total) == settings and int(passed) <= settings
