"""Neighbour replay for text PE (a stand-in generator and embedder): the library and the CLI.

See tests/neighbour.py for the check. The stand-ins are pure functions of their prompts and
texts, so with the releases pinned every published byte must match on D and D'.
"""

from __future__ import annotations

import shutil

import pandas as pd
import pytest

import test_text_validity
from neighbour import assert_neighbour_safe, estimator_artefacts, files_in
from privevo.cli import main
from privevo.cli import text as cli_text
from test_text_features import PRIVATE, HashEmbedder, WordLM, _model

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
        est = _model(selector=selector, **kw).fit(texts)
        assert 1 <= len(est.synthetic_texts_) <= 4  # a real run (gape_agg may keep fewer)
        return estimator_artefacts(est, "synthetic_texts_")

    assert_neighbour_safe(run, PRIVATE, TEXT_NEIGHBOURS[neighbour])


def cli_run(tmp_path, argv, columns, output: str):
    """run(data): write ``columns(data)`` as data.csv, call synth-text, collect every file."""

    def run(data):
        shutil.rmtree(tmp_path / "w", ignore_errors=True)
        (tmp_path / "w").mkdir()
        pd.DataFrame(columns(data)).to_csv(tmp_path / "w" / "data.csv", index=False)
        code = main([a.replace("{w}", str(tmp_path / "w")) for a in argv])
        (tmp_path / "w" / "data.csv").unlink()
        assert code == 0 and (tmp_path / "w" / output).stat().st_size > 0  # a real run
        return {"exit": code, "files": files_in(tmp_path / "w")}

    return run


@pytest.mark.parametrize("neighbour", sorted(TEXT_NEIGHBOURS))
def test_cli_synth_text(tmp_path, monkeypatch, neighbour):
    monkeypatch.setattr(cli_text, "_models", lambda args: (WordLM(), HashEmbedder()))
    argv = ["synth-text", "{w}/data.csv", "--column", "review", "--m", "4", "--iterations", "2"]
    argv += ["--epsilon", "2", "--seed", "3", "--topics", "tea,bread", "-o", "{w}/out.jsonl"]

    run = cli_run(tmp_path, argv, lambda texts: {"review": texts}, "out.jsonl")
    assert_neighbour_safe(run, PRIVATE, TEXT_NEIGHBOURS[neighbour])


LABELLED = (test_text_validity.PRIVATE, test_text_validity.PRIVATE_LABELS)
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
        est = test_text_validity._labelled(epsilon=2.0).fit(texts, labels=labels)
        return {
            **estimator_artefacts(est, "synthetic_texts_"),
            "labels": list(est.synthetic_labels_),
        }

    assert_neighbour_safe(run, LABELLED, LABELLED_NEIGHBOURS[neighbour])


@pytest.mark.parametrize("neighbour", sorted(LABELLED_NEIGHBOURS))
def test_cli_synth_text_with_labels(tmp_path, monkeypatch, neighbour):
    monkeypatch.setattr(
        cli_text, "_models", lambda args: (test_text_validity.TopicLM(), HashEmbedder())
    )
    argv = ["synth-text", "{w}/data.csv", "--column", "review", "--label-column", "y"]
    argv += ["--labels", "great,other", "--m", "4", "--iterations", "2", "--epsilon", "2"]
    argv += ["--seed", "3", "-o", "{w}/out.csv"]

    run = cli_run(tmp_path, argv, lambda data: {"review": data[0], "y": data[1]}, "out.csv")
    assert_neighbour_safe(run, LABELLED, LABELLED_NEIGHBOURS[neighbour])
