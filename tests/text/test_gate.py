"""The publishability gate: meta-talk, off-topic and incoherent candidates are regenerated."""

from __future__ import annotations

import numpy as np
import pytest

from helpers.text_doubles import needs_models
from privevo.text import LLMRandomAPI, LLMVariationAPI
from privevo.text.gate import PublishabilityGate, artefact, meta_talk
from privevo.text.validity import TextChecker

# the texts a reader would not publish, from the quick start's output (a reader's examples)
META = [
    "Dear Emma,\n\nI hope this letter finds you well. The cookies were lovely.",
    "Hey Alex! The chips were great, see you soon.",
    "Sure! The coffee is rich and smooth.",
    "I am very sorry, no. It is not possible to respond to this.",
    "The Original: a tasty tea with a floral finish.",
    "Great jam, sweet and fresh.</pre>",
    "The pasta was fine (laughs) and cheap.",
    "This review is about a hot sauce that I tried last week.",
    "Best regards, a happy buyer of this honey.",
    "Dear Dr. Elena,\n\nThe food tonight was sublime.",
    "@Alex the cereal was great!",
]
PUBLISHABLE = [
    "This coffee is smooth and rich, with no bitter aftertaste. I order it every month.",
    "The chips arrived stale and half the bag was crumbs. Not worth the money.",
    "I'm sorry to say the original flavor was better; this one is too sweet.",
    "My dog loves this food. It arrived quickly and the bag was sealed well.",
    "Hi-chew candies are my kids' favourite, a bit pricey though.",
]
GIBBERISH = [
    "The too many there are no The 'Nutraceutical' on high, cereal.",
    "Cereal crunch the good of box not but yes sweet flavor many is the morning bowl great.",
]


@pytest.mark.parametrize("text", META)
def test_meta_talk_refusals_letters_echoes_and_artefacts_are_caught(text):
    assert meta_talk(text)


@pytest.mark.parametrize("text", PUBLISHABLE)
def test_plain_reviews_are_not_meta_talk(text):
    assert not meta_talk(text)


ARTEFACTS = [
    "Babies love it 🍏💡🍜 and so do we.",
    "Great cat food, but if you want one specifically for cats,",
    "Serves: 4. The soup was rich and hot.",
    "Tasty crackers, fair price.\nRating: 1/4",
]


@pytest.mark.parametrize("text", ARTEFACTS)
def test_emoji_strings_field_labels_and_unfinished_tails_are_artefacts(text):
    assert artefact(text)


@pytest.mark.parametrize("text", PUBLISHABLE + ["Lovely tea 🍵 and cake!"])
def test_plain_reviews_are_not_artefacts(text):
    assert not artefact(text)


@pytest.mark.parametrize(
    "text",
    [
        "I'm glad you found it interesting, my friend. The food was great.",
        "It seems the chef was tired (slides open) and the soup was cold.",
    ],
)
def test_chat_replies_and_stage_directions_are_meta_talk(text):
    assert meta_talk(text)


def test_a_text_naming_its_own_kind_is_meta():
    gate = PublishabilityGate("food review")
    verdicts = gate.judge(["The most incredible food review ever has arrived.", "Good tea."])
    assert verdicts == ["meta", None]


class AxisEmbedder:
    """Texts naming "letter" point along one axis, everything else along another."""

    def embed(self, texts, cache=None):
        return np.array([[1.0, 0.0] if "letter" in t.lower() else [0.0, 1.0] for t in texts])


class OrderScorer:
    """Coherence stand-in: a text scores high only if it starts with a capital (reversed
    texts do not) and holds no "zz"."""

    def __init__(self):
        self.prompts = []

    def mean_log_prob(self, texts, prompt):
        self.prompts.append(prompt)
        return [-1.0 if t[:1].isupper() and "zz" not in t else -9.0 for t in texts]


def test_the_gate_names_each_reason_and_scores_only_what_passed_before():
    scorer = OrderScorer()
    gate = PublishabilityGate(
        "food review",
        embedder=AxisEmbedder(),
        scorer=scorer,
        description=["A food review."],
        anchors={"letter": ["A letter to a friend."]},
    )
    verdicts = gate.judge(
        ["Sure! Nice tea.", "My letter about tea.", "Tea zz zz tea!", "Good tea, fair price."]
    )
    assert verdicts == ["meta", "off-topic", "incoherent", None]
    assert scorer.prompts == ["Write a short food review."]  # one batch, the public kind only


def test_an_anchor_named_in_the_kind_is_dropped():
    gate = PublishabilityGate("recipe", embedder=AxisEmbedder())
    assert "recipe" not in gate.anchors and "letter" in gate.anchors


class ScriptedLM:
    def __init__(self, script):
        self.script, self.calls = list(script), []

    def generate(self, prompts, *, temperature=1.0, max_new_tokens=64, seed=0):
        self.calls.append(list(prompts))
        reply = self.script.pop(0) if self.script else None
        return [
            reply[i] if reply else f"Good tea number {i}, fair price." for i in range(len(prompts))
        ]


def test_gate_failures_are_regenerated_and_counted_by_reason():
    lm = ScriptedLM([["Dear Emma, the tea was nice.", "Good tea, I drink it daily."]])
    gate = PublishabilityGate("review")
    api = LLMRandomAPI(lm, topics=("tea",), checker=TextChecker(gate=gate))
    texts, _ = api.sample_texts(2, np.random.default_rng(0))
    assert len(lm.calls) == 2 and len(lm.calls[1]) == 1
    assert not any(meta_talk(t) for t in texts)
    assert api.validity["reasons"] == {"meta": 1}


def test_a_rewrite_that_stays_meta_keeps_its_parent():
    lm = ScriptedLM([["Sure! Here you go, a tea."]] * 10)
    api = LLMVariationAPI(lm, checker=TextChecker(retries=1, gate=PublishabilityGate("review")))
    parent = "Smooth green tea, no bitterness at all."
    assert api.vary_texts([parent], np.random.default_rng(0)) == [parent]
    assert api.validity["fallback"] == 1


@needs_models
@pytest.mark.slow  # loads SmolLM2 and MiniLM
def test_real_models_reject_letters_chat_recipes_and_gibberish_but_keep_reviews():
    from privevo.text import SentenceEmbedder, smollm2

    gate = PublishabilityGate("food review", embedder=SentenceEmbedder(), scorer=smollm2())
    off_topic = [
        "I hope you had a good week at work, say hello to your parents from me.",
        "Mix two cups of flour with the butter, then bake for twenty minutes at 180 degrees.",
    ]
    verdicts = gate.judge(PUBLISHABLE + off_topic + GIBBERISH)
    assert verdicts[: len(PUBLISHABLE)] == [None] * len(PUBLISHABLE)
    assert verdicts[len(PUBLISHABLE) : -len(GIBBERISH)] == ["off-topic"] * len(off_topic)
    assert verdicts[-len(GIBBERISH) :] == ["incoherent"] * len(GIBBERISH)


class LineEmbedder:
    """Private-looking texts on one side of a line, unrelated ones far on the other."""

    def embed(self, texts, cache=None):
        return np.array(
            [[-5.0 if t.startswith("unrelated") else 0.0, float(t.split()[-1])] for t in texts]
        )


def test_text_precision_counts_synthetic_texts_inside_the_private_balls():
    from privevo.evaluation import text_precision_recall

    private = [f"private review {i}" for i in range(12)]
    far = [f"unrelated text {i}" for i in range(2)]
    copies = text_precision_recall(private, private[:6], LineEmbedder(), k=3)
    assert copies["precision"] == 1.0 and 0.5 <= copies["recall"] < 1 and copies["k"] == 3
    mixed = text_precision_recall(private, private[:6] + far, LineEmbedder(), k=3)
    assert mixed["precision"] == 0.75 and mixed["recall"] == copies["recall"]


def test_synth_text_gates_by_default_with_the_rules_its_models_allow():
    from argparse import Namespace

    from helpers.text_doubles import HashEmbedder, TopicLM
    from privevo.cli.synth_text import _gate

    assert _gate(Namespace(gate=False, kind="food review"), TopicLM(), HashEmbedder()) is None
    gate = _gate(Namespace(gate=True, kind="food review"), TopicLM(), HashEmbedder())
    # a stand-in embedder is no sentence embedding, a stand-in generator has no likelihood
    assert (
        gate.embedder is None and gate.scorer is None and gate.judge(META) == ["meta"] * len(META)
    )
