"""Would a reader publish this text? Meta-talk, off-topic and incoherence checks (public only).

:class:`PublishabilityGate` judges every candidate that passed
:class:`~privevo.text.validity.TextChecker`, in one batch per generation call,
and names why a text is not publishable:

- ``meta``: the reply is about the task, not the text — a refusal ("I am very
  sorry, no. It is not possible to respond"), a chat opener ("Sure!",
  "Certainly!"), a letter or chat addressed to the reader ("Dear Emma,",
  "Hey Alex!", "I hope this message finds you well", "Best regards"), talk
  about "the original", "the review" or the kind itself ("the most incredible
  food review"), a chat reply ("I'm glad you found it"), or an artefact
  (``</pre>``, markup, a stage direction such as ``(laughs)`` or ``*smiles*``);
- ``artefact``: debris a reader would cut — three or more emoji, a form's field
  label ("Serves:", "Rating:", "Pros:"), or a text that stops without ending its
  last sentence (on a comma, a dash or a word);
- ``off-topic``: in the public embedding, the text lies nearer to one of the
  public off-topic anchors (:data:`OFF_TOPIC_ANCHORS`: a letter, a chat
  message, a recipe, instructions, a refusal, a self-introduction, an
  advertisement) than to the public description of the kind, by more than
  ``topic_margin``;
- ``incoherent``: word order carries little of the text's likelihood. The
  reference model scores the text, as the reply to "Write a short {kind}.",
  and the same words in reverse order; the gain in mean log-likelihood per
  token is below ``min_order_gain``. Fluent text loses 3–5 nats a token when
  its words are reversed, word salad and mock foreign language (whose order
  means nothing to the model) under 2.5. The gain, unlike the plain
  likelihood, does not punish rare words: a terse, specific review scores
  low likelihood but a high gain (the acceptability score of Lau et al. 2017
  normalises by word frequency for the same reason). Neither a higher gain
  threshold nor a floor on the plain likelihood is used: the thresholds that
  would catch more of the generator's gibberish (gain 3.7, likelihood −3.6)
  also reject terse hand-written reviews (gain 3.1, likelihood −5.0), which
  read like the private data.

Every input is public: the candidates (written by the model from public
prompts), the kind, its description and the anchors. The thresholds were
set on public text only: hand-written examples in ``tests/text/test_gate.py``
and the tuning half of a hand reading of texts SmolLM2-135M wrote from the
public food-review prompts (``benchmarks/text_gate.py``; ``docs/text.md``,
"Publishable candidates", gives the held-out half's figures). The gate is post-processing of
public text: it costs no privacy.
"""

from __future__ import annotations

import re
from typing import Mapping, Sequence

import numpy as np

__all__ = ["PublishabilityGate", "GATE_REASONS", "meta_talk", "artefact", "OFF_TOPIC_ANCHORS"]

GATE_REASONS = ("meta", "artefact", "off-topic", "incoherent")

_META = re.compile(
    # refusals and the assistant's voice
    r"\b(?:i am|i'm) (?:very |so |really |truly )?sorry\b(?!,? (?:to say|to report|but the))|"
    r"\bnot (?:possible|able) to (?:respond|answer|help|write|provide|comply|assist)\b|"
    r"\bi (?:can't|cannot|can not|won't|am unable to|am not able to) "
    r"(?:help|assist|respond|answer|provide|write|comply)\b|"
    r"^\W*(?:sure|certainly|of course|absolutely|okay|ok|alright)\b\W|"
    # a letter or chat addressed to someone
    r"^\W*(?:dear|hey|hi|hello|greetings|hiya|howdy)\b(?![-'’])[^!?\n]{0,40}?[,!:\n]|^\W*@\w|"
    r"\bi hope (?:this|my|the) (?:letter|message|email|note) finds you\b|"
    r"\bhope you(?:'re| are) (?:doing )?(?:well|great|good)\b|"
    r"\b(?:best|kind|warm) regards\b|\bsincerely,|\byours truly\b|\bp\.s\.|"
    r"\bthanks? (?:you )?for (?:your|the) (?:message|letter|email|reply|question|note)\b|"
    r"\bnice to meet you\b|\bmy name is\b|"
    r"\bi(?:'m| am) (?:so |really |very )?(?:glad|happy) (?:you|to (?:hear|see|have you))\b|"
    # the text talking about itself or its source
    r"\bthe original\b(?!\s+(?:flavou?r|recipe|formula|taste|version of the product|one|"
    r"product|brand|packaging|size))|"
    r"\b(?:the|this) review\b(?!s)(?!\s+(?:is|was) (?:right|correct|true|accurate|spot on))|"
    r"\b(?:original|rewritten|revised|review|text|output|title)\s*:|"
    # markup and stage directions
    r"</?[a-z][a-z0-9]*\s*/?>|<<|>>|^\s*#{1,6}\s|\*\*|"
    r"\((?:laughs?|smiles?|sighs?|pauses?|winks?|giggles?|chuckles?|gulping|applause)\)|"
    r"\([a-z]+(?:s|ing)(?: [a-z]+)?\)|"  # "(slides open)", "(whispering)"
    r"\*[a-z][^*\n]{0,30}\*",
    re.IGNORECASE | re.MULTILINE,
)

_EMOJI = re.compile("[\U0001f000-\U0001ffff\u2600-\u27bf]")
MAX_EMOJI = 2
_FIELD = re.compile(
    r"\b(?:rating|serves|complaint|ingredients|pros|cons|verdict|score|language|lingua \w+)\s*:",
    re.IGNORECASE,
)
_UNFINISHED = re.compile(r"(?:[,;:\-–—]|\w)[\s\"')\]]*$")


def artefact(text: str) -> bool:
    """Whether ``text`` carries debris (the ``artefact`` rule of the module docstring)."""
    return (
        len(_EMOJI.findall(text)) > MAX_EMOJI
        or bool(_FIELD.search(text))
        or bool(_UNFINISHED.search(_EMOJI.sub("", text).rstrip()))
    )


#: Public off-topic anchors: what the small model writes instead of the kind asked for.
OFF_TOPIC_ANCHORS: Mapping[str, tuple[str, ...]] = {
    "letter": (
        "Dear Sarah, I hope this letter finds you well. I am writing to tell you about my week.",
        "Best regards, and thank you for your kind message. Sincerely, John",
    ),
    "chat": (
        "Hey! Thanks for your message, see you tomorrow. Let me know what you think!",
        "Hi there, nice to meet you! How are you doing today?",
    ),
    "recipe": (
        "Preheat the oven to 350 degrees, mix the flour, sugar and eggs in a bowl, and bake for "
        "20 minutes.",
        "Ingredients: 2 cups of flour, 1 cup of sugar, 3 eggs. Serves 4.",
    ),
    "instructions": (
        "Step 1: open the settings menu. Step 2: click the button to continue.",
        "Follow these instructions carefully to complete the task.",
    ),
    "refusal": (
        "I'm sorry, I cannot help with that request.",
        "As an AI assistant, I am not able to respond to this.",
    ),
    "self-introduction": (
        "Hello, my name is Alex and I am a chef. Let me introduce myself and my story.",
        "Ladies and gentlemen, welcome! I am so excited to be here with you tonight.",
    ),
    "advertisement": (
        "Subscribe now and get 20% off your next order! Visit our website for exclusive deals.",
    ),
}

#: Public descriptions of known kinds (domain knowledge); any other kind is described as itself.
KIND_DESCRIPTIONS: Mapping[str, tuple[str, ...]] = {
    "food review": (
        "A customer's review of a food product: how it tastes, its quality and price, and "
        "whether they would buy it again.",
        "This snack tastes great and the price is fair. I would buy it again.",
        "Disappointing product: it tasted stale and was not worth the money.",
    ),
}


def meta_talk(text: str) -> bool:
    """Whether ``text`` is meta-talk or an artefact (the ``meta`` rule of the module docstring)."""
    return bool(_META.search(text))


class PublishabilityGate:
    """Judges public candidates: ``meta``, ``off-topic``, ``incoherent`` (module docstring).

    Parameters
    ----------
    kind : what a sample is (``"food review"``)
    embedder : the run's public embedder (``embed(texts)``; its cache is reused
        for the candidates' own embeddings); None: no ``off-topic`` rule
    scorer : a model with ``mean_log_prob(texts, prompt)`` (the generator's own
        or a small reference model's; two forward passes a text); None: no
        ``incoherent`` rule
    description : public texts describing the kind (default
        :data:`KIND_DESCRIPTIONS`, else ``"A {kind}."``)
    anchors : public off-topic anchors (default :data:`OFF_TOPIC_ANCHORS`, minus
        any whose name is in ``kind``)
    topic_margin : off-topic when the nearest anchor is this much more similar
        (cosine) than the nearest description
    min_order_gain : incoherent below this gain of mean log-likelihood per
        token over the reversed text (nats; set for SmolLM2-135M int8,
        ``docs/text.md``)
    """

    def __init__(
        self,
        kind: str = "text",
        *,
        embedder=None,
        scorer=None,
        description: Sequence[str] | None = None,
        anchors: Mapping[str, Sequence[str]] | None = None,
        topic_margin: float = 0.0,
        min_order_gain: float = 2.5,
    ):
        self.kind = kind
        self.embedder = embedder
        self.scorer = scorer
        self.description = list(
            description or KIND_DESCRIPTIONS.get(kind.lower().strip(), (f"A {kind}.",))
        )
        anchors = OFF_TOPIC_ANCHORS if anchors is None else anchors
        self.anchors = {k: list(v) for k, v in anchors.items() if k not in kind.lower()}
        self.topic_margin = float(topic_margin)
        self.min_order_gain = float(min_order_gain)
        self._reference: tuple[np.ndarray, np.ndarray] | None = None

    def __repr__(self) -> str:
        rules = ["meta", "artefact"] + ["off-topic"] * (self.embedder is not None)
        rules += ["incoherent"] * (self.scorer is not None)
        return f"PublishabilityGate(kind={self.kind!r}, rules={rules})"

    @property
    def prompt(self) -> str:
        """The context the coherence score conditions on (public)."""
        return f"Write a short {self.kind}."

    def judge(self, texts: Sequence[str]) -> list[str | None]:
        """Each text's reason (one of :data:`GATE_REASONS`) or None if publishable."""
        texts = list(texts)
        own_kind = re.compile(rf"\b{re.escape(self.kind)}s?\b", re.IGNORECASE)
        out: list[str | None] = [
            "meta" if meta_talk(t) or own_kind.search(t) else "artefact" if artefact(t) else None
            for t in texts
        ]
        todo = [i for i, r in enumerate(out) if r is None]
        if todo and self.embedder is not None:
            margin = self.topic_margins([texts[i] for i in todo])
            for i, m in zip(todo, margin):
                if m < -self.topic_margin:
                    out[i] = "off-topic"
            todo = [i for i in todo if out[i] is None]
        if todo and self.scorer is not None:
            for i, gain in zip(todo, self.order_gains([texts[i] for i in todo])):
                if gain < self.min_order_gain:
                    out[i] = "incoherent"
        return out

    def order_gains(self, texts: Sequence[str]) -> np.ndarray:
        """Mean log-likelihood per token of each text minus that of its words reversed."""
        texts = list(texts)
        backwards = [" ".join(t.split()[::-1]) for t in texts]
        scores = np.asarray(self.scorer.mean_log_prob(texts + backwards, self.prompt), float)
        return scores[: len(texts)] - scores[len(texts) :]

    def topic_margins(self, texts: Sequence[str]) -> np.ndarray:
        """Cosine to the nearest description minus cosine to the nearest anchor, per text."""
        topic, anchors = self._anchor_embeddings()
        E = _unit(self.embedder.embed(list(texts)))
        near_topic = (E @ topic.T).max(axis=1)
        near_anchor = (E @ anchors.T).max(axis=1) if len(anchors) else np.full(len(E), -1.0)
        return near_topic - near_anchor

    def _anchor_embeddings(self) -> tuple[np.ndarray, np.ndarray]:
        if self._reference is None:
            anchors = [t for v in self.anchors.values() for t in v]
            self._reference = (
                _unit(self.embedder.embed(self.description)),
                _unit(self.embedder.embed(anchors)) if anchors else np.empty((0, 1)),
            )
        return self._reference


def _unit(X) -> np.ndarray:
    X = np.asarray(X, dtype=np.float64)
    return X / np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1e-12)
