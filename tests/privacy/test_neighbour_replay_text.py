"""Neighbour replay for text PE (a stand-in generator and embedder): the library and the CLI.

See tests/helpers/neighbour.py for the check. The stand-ins are pure functions of their prompts and
texts, so with the releases pinned every published byte must match on D and D'.
"""

from __future__ import annotations

import pandas as pd
import pytest

from helpers.neighbour import assert_neighbour_safe, cli_run, estimator_artefacts
from helpers.text_doubles import (
    PRIVATE,
    REVIEW_LABELS,
    REVIEWS,
    HashEmbedder,
    TopicLM,
    WordLM,
    labelled_text_pe,
    text_pe,
)
from privevo.cli import text as cli_text

TEXT_NEIGHBOURS = {
    "add a long, odd text": [*PRIVATE, "Zzz " * 80 + "diagnosed 078-05-1120"],
    "remove a text": PRIVATE[1:],
    "add a text like a header": ["review", *PRIVATE],
}


@pytest.mark.parametrize("neighbour", sorted(TEXT_NEIGHBOURS))
@pytest.mark.parametrize("selector", ["rank", "gape_agg"])
def test_text_pe(neighbour, selector):
    kw = {"gape_R": 0.5} if selector == "gape_agg" else {}

    def run(texts):
        est = text_pe(selector=selector, **kw).fit(texts)
        assert 1 <= len(est.synthetic_texts_) <= 4  # a real run (gape_agg may keep fewer)
        return estimator_artefacts(est, "synthetic_texts_")

    assert_neighbour_safe(run, PRIVATE, TEXT_NEIGHBOURS[neighbour])


def synth_text_run(tmp_path, argv, columns, output: str):
    """run(data) for synth-text: ``columns(data)`` written as data.csv (tests/helpers/neighbour.py's
    cli_run), and a check that the run wrote ``output``."""

    def write(folder, data) -> None:
        pd.DataFrame(columns(data)).to_csv(folder / "data.csv", index=False)

    run = cli_run(tmp_path, argv, write)

    def checked(data):
        published = run(data)
        assert published["exit"] == 0 and published["files"][output]  # a real run
        return published

    return checked


@pytest.mark.parametrize("neighbour", sorted(TEXT_NEIGHBOURS))
def test_cli_synth_text(tmp_path, monkeypatch, neighbour):
    monkeypatch.setattr(cli_text, "_models", lambda args: (WordLM(), HashEmbedder()))
    argv = ["synth-text", "{w}/data.csv", "--column", "review", "--m", "4", "--iterations", "2"]
    argv += ["--epsilon", "2", "--seed", "3", "--topics", "tea,bread", "-o", "{w}/out.jsonl"]

    run = synth_text_run(tmp_path, argv, lambda texts: {"review": texts}, "out.jsonl")
    assert_neighbour_safe(run, PRIVATE, TEXT_NEIGHBOURS[neighbour])


LABELLED = (REVIEWS, REVIEW_LABELS)
LABELLED_NEIGHBOURS = {
    "add a text of the rarer label": (
        [*LABELLED[0], "a bland snack, 078-05-1120"],
        [*LABELLED[1], "other"],
    ),
    "remove a text": (LABELLED[0][1:], LABELLED[1][1:]),
}


@pytest.mark.parametrize("neighbour", sorted(LABELLED_NEIGHBOURS))
def test_labelled_text_pe(neighbour):
    def run(data):
        texts, labels = data
        est = labelled_text_pe(epsilon=2.0).fit(texts, labels=labels)
        return {
            **estimator_artefacts(est, "synthetic_texts_"),
            "labels": list(est.synthetic_labels_),
        }

    assert_neighbour_safe(run, LABELLED, LABELLED_NEIGHBOURS[neighbour])


@pytest.mark.parametrize("neighbour", sorted(LABELLED_NEIGHBOURS))
def test_cli_synth_text_with_labels(tmp_path, monkeypatch, neighbour):
    monkeypatch.setattr(cli_text, "_models", lambda args: (TopicLM(), HashEmbedder()))
    argv = ["synth-text", "{w}/data.csv", "--column", "review", "--label-column", "y"]
    argv += ["--labels", "great,other", "--m", "4", "--iterations", "2", "--epsilon", "2"]
    argv += ["--seed", "3", "-o", "{w}/out.csv"]

    run = synth_text_run(tmp_path, argv, lambda data: {"review": data[0], "y": data[1]}, "out.csv")
    assert_neighbour_safe(run, LABELLED, LABELLED_NEIGHBOURS[neighbour])
