"""The audits that call a real release function once per release: TabularPE's release
families and text PE's labelled votes. Correct releases stay below their claim; each planted
bug (tests/helpers/planted_bugs.py) is caught.

The factor-2 bugs (a row counted twice, a halved sensitivity) are audited at δ = 1e-3: a
claim whose δ is near 1/(certifying samples) is the one a sample of 10⁴ refutes best, at a
margin of ≥ 0.3 in ε over seeds 0–2 (docs/privacy.md, "The empirical audit").
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from helpers.planted_bugs import LABEL_VOTES_BUG, TABLE_RELEASE_BUGS, exact_last_histogram
from privevo import audit
from privevo.audit import TABLE_FAMILIES, audit_label_votes, audit_table_release
from privevo.audit.table_releases import _FAMILIES, table_scenario

DELTA = 1e-5
ADJACENCIES = ["add_remove", "replace"]

# family, ε, δ, adjacency, releases per data set, the planted bug the audit must catch
TABLE_BUGS = [(f, eps, delta, adj, n, bug) for f, eps, delta, adj, n, _, bug in TABLE_RELEASE_BUGS]


def test_every_family_has_a_planted_bug():
    assert [row[0] for row in TABLE_BUGS] == list(TABLE_FAMILIES)


@pytest.mark.parametrize("adjacency", ADJACENCIES)
@pytest.mark.parametrize("family", TABLE_FAMILIES)
def test_the_table_canary_moves_every_part_by_its_sensitivity(family, adjacency):
    """The scenario is a worst case: the LLR test's power is that of the claimed mechanism."""
    sc = table_scenario(adjacency)
    fam = _FAMILIES[family](sc, adjacency)
    h0, h1 = fam.exact(fam.prepare(sc.codes)), fam.exact(fam.prepare(sc.codes_prime))
    norms = [np.linalg.norm(b - a) for a, b in zip(h0, h1)]
    assert len(norms) == len(fam.names) >= 1
    np.testing.assert_allclose(norms, fam.sensitivity, rtol=1e-12)
    vote = 1.0 if adjacency == "add_remove" else 2**0.5  # a score: 1 or 2, the square
    assert fam.sensitivity == pytest.approx(vote**2 if family == "pair scores" else vote)


@pytest.mark.parametrize("adjacency", ADJACENCIES)
@pytest.mark.parametrize("family", TABLE_FAMILIES)
def test_table_release_lower_bound_below_claim(family, adjacency):
    r = audit_table_release(
        family, 1.0, DELTA, adjacency=adjacency, n_releases=3000, random_state=0
    )
    assert r.claimed_epsilon == pytest.approx(1.0, rel=1e-6)  # the release's own ledger entry
    assert r.consistent and r.n_samples == 3000


@pytest.mark.parametrize(
    "family, epsilon, delta, adjacency, n_releases, bug", TABLE_BUGS, ids=list(TABLE_FAMILIES)
)
def test_planted_bug_in_a_table_release_is_caught(
    family, epsilon, delta, adjacency, n_releases, bug
):
    r = audit_table_release(
        family,
        epsilon,
        delta,
        adjacency=adjacency,
        n_releases=n_releases,
        random_state=1,
        release=bug,
    )
    assert r.epsilon_lower > r.claimed_epsilon


@pytest.mark.parametrize(
    "family, epsilon, delta, adjacency, n_releases, bug", TABLE_BUGS, ids=list(TABLE_FAMILIES)
)
def test_correct_table_release_at_the_planted_bug_sizes_stays_below(
    family, epsilon, delta, adjacency, n_releases, bug
):
    r = audit_table_release(
        family, epsilon, delta, adjacency=adjacency, n_releases=n_releases, random_state=1
    )
    assert r.consistent and r.claimed_epsilon == pytest.approx(epsilon, rel=1e-6)


def test_exact_last_table_is_caught_by_that_table_alone():
    r = audit_table_release(
        "pair tables", 1.0, DELTA, n_releases=2000, random_state=1, release=exact_last_histogram
    )
    assert r.statistic == "LLR of size × flag"


def test_unknown_family_is_refused():
    with pytest.raises(ValueError, match="family must be one of"):
        audit_table_release("three-way tables", 1.0)


@pytest.mark.parametrize(
    "noise, k, adjacency, n_releases",
    [
        ("gaussian", 1, "add_remove", 10_000),
        ("gaussian", 1, "replace", 10_000),
        ("gaussian", 3, "add_remove", 10_000),
        ("discrete_gaussian", 1, "replace", 1000),  # one exact sampler call per release: slow
    ],
)
def test_label_restricted_votes_lower_bound_below_claim(noise, k, adjacency, n_releases):
    r = audit_label_votes(
        1.0,
        noise=noise,
        n_neighbors=k,
        adjacency=adjacency,
        n_releases=n_releases,
        random_state=0,
    )
    assert r.claimed_epsilon == pytest.approx(1.0, abs=1e-9)
    assert r.consistent


def test_label_restricted_votes_audit_has_power():
    r = audit_label_votes(1.0, n_releases=20_000, random_state=0)
    assert 0.2 < r.epsilon_lower <= r.claimed_epsilon  # it does tell D from D′


@pytest.mark.parametrize("adjacency", ADJACENCIES)
def test_label_canary_votes_in_its_own_label(adjacency):
    """The canary stands on an "a" candidate but is a "b" text: the restriction moves its vote."""
    from privevo.audit.votes import _votes_per_label

    (X, lab), (X1, lab1), cands, cand_labels = audit.label_scenario(adjacency)
    v = _votes_per_label(X1, lab1, cands, cand_labels, 1) - _votes_per_label(
        X, lab, cands, cand_labels, 1
    )
    gained = np.flatnonzero(v > 0)
    assert len(gained) == 1 and cand_labels[gained[0]] == "b" and v[0] <= 0
    assert np.linalg.norm(v) == pytest.approx(1.0 if adjacency == "add_remove" else 2**0.5)


def test_class_balanced_label_votes_are_caught():
    epsilon, delta, n_releases, bug = LABEL_VOTES_BUG
    r = audit_label_votes(epsilon, delta, n_releases=n_releases, random_state=1, release=bug)
    assert r.epsilon_lower > r.claimed_epsilon


def test_the_module_docstring_names_every_audit():
    names = [n for n in audit.__all__ if n.startswith("audit_")]
    assert len(names) == 11
    for name in names:
        assert f":func:`{name}`" in inspect.getdoc(audit), name


@pytest.mark.parametrize("adjacency", ADJACENCIES)
def test_marginal_choice_lower_bound_below_claim(adjacency):
    """The adaptive choice (exponential mechanism, accounted by zCDP) stays below its claim, with
    a test that sees it: the canary moves half the qualities up and half down by Δ."""
    r = audit.audit_marginal_choice(
        1.0, DELTA, adjacency=adjacency, n_releases=3000, random_state=0
    )
    assert r.claimed_epsilon == pytest.approx(1.0, rel=1e-6) and r.consistent
    assert r.epsilon_lower > 0  # the statistic has power: not a test that cannot fail


def test_marginal_choice_at_a_tenth_of_its_scale_is_caught():
    from helpers.planted_bugs import MARGINAL_CHOICE_BUG, tenth_scale_choice

    epsilon, delta, n_releases, _ = MARGINAL_CHOICE_BUG  # the setting benchmarks/audit.py runs
    r = audit.audit_marginal_choice(
        epsilon, delta, n_releases=n_releases, random_state=1, release=tenth_scale_choice
    )
    assert r.epsilon_lower > r.claimed_epsilon
