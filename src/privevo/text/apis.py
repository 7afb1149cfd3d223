"""Text random and variation APIs: an LLM writes and rewrites public candidates.

- :class:`LLMRandomAPI` — S_0: the LLM writes samples from a public prompt,
  optionally one prompt per label (labels drawn with public weights) and with
  ``{topic}`` filled from a public topic list for variety.
- :class:`LLMVariationAPI` — Aug-PE's rewrite (Xie et al. 2024, §3): blank a
  share of a parent's words (each word independently with probability
  ``mask_fraction``) and ask the LLM to fill the blanks and rewrite, at a
  given temperature; ``mask_fraction=0`` asks for a plain paraphrase.

Both see only public text (prompts and selected synthetic candidates). Every
draw — labels, topics, masks, LLM seeds — comes from the ``numpy.random.
Generator`` passed in.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from .._validation import check_positive_int
from .llm import TextGenerator

__all__ = ["LLMRandomAPI", "LLMVariationAPI", "mask_words", "FOOD_TOPICS"]

MASK = "_"
RANDOM_PROMPT = "Write a short {kind} about {topic}. Reply with the {kind} only."
FILL_PROMPT = (
    "Fill in the blanks (_) in this {kind} and write it out as one complete {kind}. "
    "Reply with the {kind} only.\n\n{text}"
)
PARAPHRASE_PROMPT = "Rewrite this {kind} in your own words. Reply with the {kind} only.\n\n{text}"
# Public domain knowledge for the food-review example (no private data involved).
FOOD_TOPICS = (
    "coffee",
    "tea",
    "dark chocolate",
    "potato chips",
    "dog food",
    "cat food",
    "pasta",
    "hot sauce",
    "breakfast cereal",
    "honey",
    "olive oil",
    "cookies",
    "protein bars",
    "baby food",
    "candy",
    "nuts",
    "popcorn",
    "jerky",
    "spices",
    "energy drinks",
    "crackers",
    "gluten-free bread mix",
    "soup",
    "jam",
)


def _seed(rng: np.random.Generator) -> int:
    return int(rng.integers(0, 2**31 - 1))


class LLMRandomAPI:
    """An LLM writes new samples from public prompts (the random API of text PE).

    Parameters
    ----------
    generator : a backend with ``generate(prompts, temperature=, max_new_tokens=, seed=)``
    prompt : a template with optional ``{kind}`` and ``{topic}``, or a dict
        ``{label: template}`` for labelled data (one prompt per label)
    label_weights : public label probabilities for a dict ``prompt`` (default uniform)
    topics : public list filling ``{topic}`` uniformly at random
    kind : what a sample is, e.g. ``"food review"``
    temperature, max_new_tokens : sampling settings
    """

    def __init__(
        self,
        generator: TextGenerator,
        prompt: str | Mapping[str, str] = RANDOM_PROMPT,
        *,
        label_weights: Sequence[float] | None = None,
        topics: Sequence[str] = ("any subject",),
        kind: str = "text",
        temperature: float = 1.0,
        max_new_tokens: int = 64,
    ):
        self.generator = generator
        self.prompt = prompt
        self.label_weights = label_weights
        self.topics = topics
        self.kind = kind
        self.temperature = temperature
        self.max_new_tokens = max_new_tokens

    def __repr__(self) -> str:
        labels = list(self.prompt) if isinstance(self.prompt, Mapping) else None
        return (
            f"LLMRandomAPI({self.generator!r}, kind={self.kind!r}, labels={labels}, "
            f"topics={len(self.topics)}, "
            f"temperature={self.temperature}, max_new_tokens={self.max_new_tokens})"
        )

    def sample_texts(self, n: int, rng: np.random.Generator) -> tuple[list[str], list[str | None]]:
        """``n`` new texts and the label of the prompt each came from (None without labels)."""
        n = check_positive_int(n, "n")
        labels, templates = self._labels(n, rng)
        topics = np.asarray(self.topics, dtype=object)[rng.integers(0, len(self.topics), n)]
        prompts = [t.format(kind=self.kind, topic=topic) for t, topic in zip(templates, topics)]
        texts = self.generator.generate(
            prompts,
            temperature=self.temperature,
            max_new_tokens=self.max_new_tokens,
            seed=_seed(rng),
        )
        return texts, labels

    def _labels(self, n: int, rng: np.random.Generator) -> tuple[list[str | None], list[str]]:
        if not isinstance(self.prompt, Mapping):
            return [None] * n, [self.prompt] * n
        names = list(self.prompt)
        p = (
            None
            if self.label_weights is None
            else np.asarray(self.label_weights, float) / np.sum(self.label_weights)
        )
        drawn = [names[i] for i in rng.choice(len(names), size=n, p=p)]
        return drawn, [self.prompt[name] for name in drawn]


def mask_words(text: str, fraction: float, rng: np.random.Generator) -> str:
    """Replace each word by ``_`` independently with probability ``fraction`` (runs of blanks
    merge)."""
    words = text.split()
    if not words or fraction <= 0:
        return text
    blank = rng.random(len(words)) < fraction
    out = [MASK if b else w for w, b in zip(words, blank)]
    return " ".join(
        w for i, w in enumerate(out) if not (w == MASK and i > 0 and out[i - 1] == MASK)
    )


class LLMVariationAPI:
    """Aug-PE-style variation: blank part of the words, let the LLM fill them and rewrite.

    Parameters
    ----------
    generator : the language-model backend
    mask_fraction : probability that a word is blanked (0 = paraphrase instead)
    temperature : a number, or a sequence cycled over a parent's variations
        (e.g. ``(0.6, 1.0, 1.4)`` for variations at several scales)
    per_point : variations per parent
    kind : what a sample is, e.g. ``"food review"``
    max_new_tokens : length cap of a rewrite
    """

    def __init__(
        self,
        generator: TextGenerator,
        *,
        mask_fraction: float = 0.5,
        temperature: float | Sequence[float] = 1.0,
        per_point: int = 1,
        kind: str = "text",
        max_new_tokens: int = 64,
    ):
        if not 0 <= mask_fraction < 1:
            raise ValueError(f"mask_fraction must be in [0, 1), got {mask_fraction}")
        self.generator = generator
        self.mask_fraction = mask_fraction
        self.temperature = temperature
        self.per_point = per_point
        self.kind = kind
        self.max_new_tokens = max_new_tokens

    def __repr__(self) -> str:
        return (
            f"LLMVariationAPI({self.generator!r}, mask_fraction={self.mask_fraction}, "
            f"temperature={self.temperature}, "
            f"per_point={self.per_point}, kind={self.kind!r}, max_new_tokens={self.max_new_tokens})"
        )

    def temperatures(self, k: int) -> np.ndarray:
        """The temperature of each of a parent's ``k`` variations."""
        return np.resize(np.atleast_1d(np.asarray(self.temperature, dtype=float)), k)

    def vary_texts(
        self, texts: Sequence[str], rng: np.random.Generator, per_point: int | None = None
    ) -> list[str]:
        """``per_point`` rewrites of each text, grouped by parent (rows i·k … i·k+k−1 of parent
        i)."""
        k = check_positive_int(per_point or self.per_point, "per_point")
        parents = [t for t in texts for _ in range(k)]
        prompts = [self.prompt_for(t, rng) for t in parents]
        temps = np.tile(self.temperatures(k), len(texts))
        out: list[str] = [""] * len(prompts)
        for temp in np.unique(temps):  # one generate call per temperature
            idx = np.flatnonzero(temps == temp)
            for i, text in zip(
                idx,
                self.generator.generate(
                    [prompts[i] for i in idx],
                    temperature=float(temp),
                    max_new_tokens=self.max_new_tokens,
                    seed=_seed(rng),
                ),
            ):
                out[i] = text or parents[i]  # an empty reply keeps the parent
        return out

    def prompt_for(self, text: str, rng: np.random.Generator) -> str:
        if self.mask_fraction > 0:
            return FILL_PROMPT.format(
                kind=self.kind, text=mask_words(text, self.mask_fraction, rng)
            )
        return PARAPHRASE_PROMPT.format(kind=self.kind, text=text)
