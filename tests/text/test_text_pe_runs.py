"""Text PE: engine seams (no models) and end-to-end runs with the real offline models.

The model tests load SmolLM2-135M-Instruct and all-MiniLM-L6-v2 once per
session and keep every generation tiny; they skip only if the ``text`` extra
is not installed.
"""

from __future__ import annotations

import json
import math
import urllib.request
import warnings

import numpy as np
import pytest

from helpers.text_doubles import ChatWordLM, HashEmbedder, TopicLM, needs_models, text_pe
from privevo import PrivacyLeakWarning, PrivateEvolution
from privevo.cli.text import write_texts
from privevo.private import read_texts
from privevo.selection import Rank
from privevo.text import (
    LLMRandomAPI,
    LLMVariationAPI,
    OpenAICompatibleLM,
    clean_completion,
    mask_words,
    variation_intrinsic_dimension,
)
from privevo.variation import GaussianVariation, UniformBall

REVIEWS = [
    "great coffee, rich and smooth, i buy it every month",
    "the dog loves these treats and they arrive fresh",
    "stale chips, half the bag was crumbs, not buying again",
    "this tea has a lovely floral smell and no bitterness",
    "the chocolate melted in shipping and tasted waxy",
    "best hot sauce i have tried, spicy but full of flavour",
    "my cat refused this food after two days",
    "good value pasta, cooks evenly and holds sauce well",
    "honey was crystallised but still tasted great",
    "too sweet for me, the cereal is mostly sugar",
    "crunchy almonds, lightly salted, perfect snack",
    "the protein bars taste like chalk, avoid",
]


# -- engine seams (no models) --------------------------------------------------------


def test_non_private_run_uses_exact_counts_and_never_claims_an_epsilon(tmp_path):
    X = np.random.default_rng(0).normal(size=(200, 2))
    with pytest.warns(PrivacyLeakWarning, match="non-private"):
        pe = PrivateEvolution(
            UniformBall(3.0), GaussianVariation(0.2), Rank(), 4, 3, math.inf, 1e-5, random_state=1
        ).fit(X)
    counts = pe.history_[0].noisy_counts
    assert np.array_equal(counts, np.round(counts)) and counts.sum() == 200 and (counts >= 0).all()
    report = pe.privacy_report_
    assert report["epsilon"] is None and report["mu"] is None and report["sigma"] == 0.0
    assert report["guarantee_holds"] is False and report["noise"] == "none" and report["steps"] == 3
    json.dumps(report, allow_nan=False)  # a strict-JSON report: no Infinity anywhere


def test_private_run_is_unchanged_by_the_non_private_path():
    X = np.random.default_rng(0).normal(size=(200, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        pe = PrivateEvolution(
            UniformBall(3.0), GaussianVariation(0.2), Rank(), 4, 3, 2.0, 1e-5, random_state=1
        ).fit(X)
    assert pe.sigma_ > 0 and pe.privacy_report_["guarantee_holds"] is True
    assert pe.privacy_report_["epsilon"] == pytest.approx(2.0, rel=1e-6)
    assert not np.array_equal(pe.history_[0].noisy_counts, np.round(pe.history_[0].noisy_counts))


class _IndexEcho:
    """A vector variation API using the engine's vary_selection seam; records what it was given."""

    per_point = 2

    def __init__(self):
        self.calls = []

    def vary_selection(self, selection, rng):
        self.calls.append(selection.indices.copy())
        return np.repeat(selection.points, self.per_point, axis=0) + 0.1 * rng.standard_normal(
            (len(selection.points) * self.per_point, selection.points.shape[1])
        )


def test_vary_selection_seam_receives_the_selected_candidate_indices():
    X = np.random.default_rng(0).normal(size=(300, 3))
    api = _IndexEcho()
    pe = PrivateEvolution(UniformBall(3.0), api, Rank(), 5, 4, 4.0, 1e-5, random_state=0).fit(X)
    assert len(api.calls) == 3  # no variation after the last round
    for idx, record in zip(api.calls, pe.history_):
        assert np.array_equal(idx, record.selected)
        assert np.array_equal(record.candidates[idx], record.selected_points)
    assert all(len(r.candidates) == 15 for r in pe.history_)  # m·(1 + per_point)


# -- pure text helpers ---------------------------------------------------------------


def test_mask_words_blanks_about_the_requested_share_reproducibly():
    text = " ".join(f"w{i}" for i in range(2000))
    a = mask_words(text, 0.3, np.random.default_rng(5))
    assert a == mask_words(text, 0.3, np.random.default_rng(5))
    kept = sum(w.startswith("w") for w in a.split())
    assert 0.65 < kept / 2000 < 0.75
    assert " _ _ " not in a  # runs of blanks merge into one
    assert mask_words(text, 0.0, np.random.default_rng(5)) == text


def test_clean_completion_strips_chatty_wrappers():
    assert (
        clean_completion('  Sure! Here is the rewritten review:\n\n"Tasty and cheap."  ')
        == "Tasty and cheap."
    )
    assert (
        clean_completion("Here it is: fresh bread") == "Here it is: fresh bread"
    )  # no line break: kept


@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".jsonl", ".txt"])
def test_text_files_round_trip(tmp_path, suffix):
    texts = ["plain", 'with, comma and "quotes"', "ünïcode ✓"]
    path = tmp_path / f"t{suffix}"
    write_texts(path, texts, column="review")
    assert read_texts(path, column="review") == texts


def test_read_texts_names_a_missing_column(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("a,b\n1,2\n")
    with pytest.raises(ValueError, match="no column 'text' in line 1") as err:
        read_texts(path)
    assert "a, b" not in str(err.value)  # line 1 is not quoted: it could be data


# -- real offline models ---------------------------------------------------------------


@pytest.fixture(scope="session")
def lm():
    import torch

    from privevo.cli.text import load_generator

    torch.set_num_threads(1)  # tiny batches: one thread is fastest, and CI cores may be shared

    return load_generator(
        batch_size=16
    )  # the CLI's per-process cache: its commands reuse this model


@pytest.fixture(scope="session")
def embedder():
    from privevo.cli.text import load_embedder

    return load_embedder()


REAL_MODELS = pytest.param("real", marks=[pytest.mark.slow, needs_models])


@pytest.fixture(params=["stand-ins", REAL_MODELS])
def models(request):
    """(generator, embedder): the stand-ins (make test-fast), or SmolLM2 and MiniLM (slow)."""
    if request.param == "stand-ins":
        return TopicLM(), HashEmbedder()
    return request.getfixturevalue("lm"), request.getfixturevalue("embedder")


@needs_models
def test_embedder_is_unit_norm_and_caches_public_texts_only(embedder):
    embedder.clear_cache()
    private = embedder.embed(REVIEWS[:4], cache=False)
    assert embedder.cache_info()["size"] == 0
    public = embedder.embed(REVIEWS[:4] + REVIEWS[:2])
    assert public.shape == (6, 384) and np.allclose(np.linalg.norm(public, axis=1), 1.0, atol=1e-5)
    assert np.allclose(public[:4], private, atol=1e-6) and np.array_equal(public[4:], public[:2])
    assert embedder.cache_info() == {"hits": 2, "misses": 4, "size": 4}
    sims = public[:4] @ public[:4].T  # coffee/tea reviews closer to each other than to pet food
    assert sims[0, 3] > sims[0, 1]


def test_text_pe_end_to_end_keeps_texts_aligned_with_embeddings(models):
    lm, embedder = models
    kw = dict(kind="food review", max_new_tokens=12)
    model = text_pe(
        lm=lm,
        embedder=embedder,
        n_synthetic=3,
        iterations=2,
        random_api=LLMRandomAPI(lm, topics=("coffee", "dog treats", "chips"), **kw),
        variation_api=LLMVariationAPI(lm, mask_fraction=0.4, **kw),
    ).fit(REVIEWS)
    assert len(model.synthetic_texts_) == 3 and all(t.strip() for t in model.synthetic_texts_)
    assert np.allclose(embedder.embed(model.synthetic_texts_), model.synthetic_, atol=1e-6)
    last = model.history_[-1]  # the final population's texts embed to the last round's candidates
    assert np.allclose(embedder.embed(model.population_.texts), last.candidates, atol=1e-6)
    assert len(last.candidates) == 6 and len(model.history_) == 2
    parents = model.history_[0].candidates[model.history_[0].selected]
    assert np.array_equal(last.candidates[:3], parents)  # population = [selected; variations]
    report = model.privacy_report_
    assert (
        report["epsilon"] == pytest.approx(2.0, rel=1e-6)
        and report["steps"] == 2
        and report["guarantee_holds"]
    )
    assert report["public_parameters"]["embedder"] == repr(embedder)


@pytest.fixture(params=["stand-in", REAL_MODELS])
def chat_lm(request):
    """A local chat model to serve: the stand-in (make test-fast), or SmolLM2 (slow)."""
    if request.param == "stand-in":
        return ChatWordLM()
    from privevo.cli.text import load_generator

    return load_generator(batch_size=16, bundled="smollm2-135m")


def test_openai_compatible_backend_against_a_real_local_server(chat_lm):
    from privevo.text.server import LocalServer

    lm = chat_lm
    prompts = ["Write one sentence about soup.", "Write one sentence about jam."]
    with LocalServer(lm, model_name="smol") as server:
        chat = OpenAICompatibleLM(server.base_url, "smol", api="chat", max_workers=2)
        got = chat.generate(prompts, temperature=1.0, max_new_tokens=10, seed=11)
        # the server runs the same model: prompt i with seed 11 + i, batch of one
        assert got == [
            lm.generate([p], temperature=1.0, max_new_tokens=10, seed=11 + i)[0]
            for i, p in enumerate(prompts)
        ]
        comp = OpenAICompatibleLM(server.base_url, "smol", api="completions", batch_size=2)
        raw = ["The best coffee I ever had", "My dog ate"]
        got = comp.generate(raw, temperature=0.7, max_new_tokens=8, seed=2)
        want = lm.complete(
            raw,
            temperature=0.7,
            max_new_tokens=8,
            seed=2,
            add_special_tokens=True,
            top_p=comp.top_p,
        )
        assert got == [clean_completion(t) for t in want]
        with urllib.request.urlopen(server.base_url + "/models") as r:
            assert json.loads(r.read())["data"][0]["id"] == "smol"
        from privevo.text.llm import EndpointError

        bad = OpenAICompatibleLM(server.base_url + "/nowhere", "smol", retries=0)
        with pytest.raises(EndpointError, match="HTTP 404"):
            bad.generate(["hi"], max_new_tokens=2)
        varied = LLMVariationAPI(chat, mask_fraction=0.3, max_new_tokens=8).vary_texts(
            REVIEWS[:2], np.random.default_rng(0)
        )
        assert len(varied) == 2 and all(varied)


def test_intrinsic_dimension_of_variations(models):
    lm, embedder = models
    rows = variation_intrinsic_dimension(
        REVIEWS[:2],
        lm,
        embedder,
        temperatures=(0.6, 1.4),
        n_variations=3,
        max_new_tokens=8,
        random_state=0,
    )
    assert [r["temperature"] for r in rows] == [0.6, 1.4]
    for r in rows:
        assert r["ambient_dim"] == embedder.embed(["tea"]).shape[1] and r["max_rank"] == 4
        assert 1 <= r["intrinsic_dim"] <= 4


def test_cli_synth_text_writes_texts_and_a_non_private_report(
    tmp_path, models, monkeypatch, capsys
):
    from privevo.cli import main
    from privevo.cli import text as cli_text

    if isinstance(models[1], HashEmbedder):  # the stand-ins; else the command loads the models
        monkeypatch.setattr(cli_text, "_models", lambda args: models)

    data = tmp_path / "reviews.csv"
    write_texts(data, REVIEWS, column="review")
    out = tmp_path / "syn.jsonl"
    flags = "--column review --m 2 --iterations 2 --epsilon inf --selector gape --max-tokens 8"
    code = main(["synth-text", str(data), *flags.split(), "--seed", "0", "-q", "-o", str(out)])
    assert code == 0, capsys.readouterr().err
    texts = read_texts(out, column="review")
    assert 1 <= len(texts) <= 2
    report = json.loads((tmp_path / "syn.privacy.json").read_text())
    assert report["epsilon"] is None and report["guarantee_holds"] is False and report["steps"] == 2
    assert "non-private" in capsys.readouterr().err


def test_cli_rejects_bad_input_before_loading_anything(tmp_path, capsys):
    from privevo.cli import main

    data = tmp_path / "t.csv"
    data.write_text("a\nx\n")
    assert (
        main(["synth-text", str(data), "--m", "2", "--epsilon", "1", "-o", str(tmp_path / "o.npy")])
        == 2
    )
    assert "unsupported" in capsys.readouterr().err
    assert main(["synth-text", str(data), "--m", "2", "--epsilon", "1"]) == 2
    assert "no column 'text'" in capsys.readouterr().err
    assert main(["synth-text", str(data), "--m", "0", "--epsilon", "1"]) == 2
    assert "--m" in capsys.readouterr().err
