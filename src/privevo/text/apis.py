"""Text random and variation APIs: an LLM writes and rewrites public candidates.

- :class:`LLMRandomAPI` — S_0: the LLM writes samples from a public prompt,
  optionally one prompt per label (labels drawn with public weights) and with
  ``{topic}`` filled from a public topic list for variety.
- :class:`LLMVariationAPI` — Aug-PE's rewrite (Xie et al. 2024, §3): blank a
  share of a parent's words (each word independently with probability
  ``mask_fraction``) and ask the LLM to write the text again from the words
  left, at a given temperature; ``mask_fraction=0`` asks for a plain
  paraphrase. The blanks are not shown: a small model copies a ``_`` into its
  reply (SmolLM2-135M left one in over half of its first tries), so the prompt
  gives the kept words, in order, as notes.

Both see only public text (prompts and selected synthetic candidates). Every
draw — labels, topics, masks, LLM seeds — comes from the ``numpy.random.
Generator`` passed in.
"""

from __future__ import annotations

import string
from typing import Mapping, Sequence

import numpy as np

from .._validation import check_positive_int
from .llm import TextGenerator
from .validity import TextChecker, instruction_ngrams

__all__ = ["LLMRandomAPI", "LLMVariationAPI", "mask_words", "FOOD_TOPICS", "LABEL_PROMPT"]

MASK = "_"
RANDOM_PROMPT = "Write a short {kind} about {topic}. Reply with the {kind} only."
# one prompt per public label ({label} filled in) for labelled runs
LABEL_PROMPT = (
    'Write a short {kind} about {topic} that fits the label "{label}". Reply with the {kind} only.'
)
# the parent's kept words first, then the instruction (a small model follows what it read last);
# "notes", not "missing words" or "blanks": the reply then rarely talks about the task
FILL_PROMPT = "Notes: {text}\n\nWrite a {kind} from these notes. Reply with the {kind} only."
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


def instruction_of(template: str, kind: str) -> frozenset[tuple[str, ...]]:
    """The instruction's word runs in a prompt template (``{kind}`` filled; the other fields —
    the text, topic, label — are content and split it) and the kind's own name, for the
    checker's echo rule (:func:`~privevo.text.validity.instruction_ngrams`)."""
    pieces = [""]
    for literal, field, _, _ in string.Formatter().parse(template):
        pieces[-1] += literal
        if field == "kind":
            pieces[-1] += kind
        elif field is not None:
            pieces.append("")
    return instruction_ngrams(pieces, kind)


class _Validity:
    """Counts of one API call: texts written, invalid on first try, regenerations, fallbacks."""

    def __init__(self):
        self.generated = self.invalid = self.regenerated = self.fallback = 0
        self.reasons: dict[str, int] = {}

    def as_dict(self) -> dict:
        return {
            "generated": self.generated,
            "invalid": self.invalid,
            "regenerated": self.regenerated,
            "fallback": self.fallback,
            "reasons": dict(self.reasons),
        }


def _checked_generate(
    generator,
    checker: TextChecker | None,
    make_prompts,
    n: int,
    rng: np.random.Generator,
    *,
    temperature: float,
    max_new_tokens: int,
    references: Sequence[str] | None = None,
    instructions: Sequence[frozenset] | None = None,
    stats: _Validity | None = None,
) -> tuple[list[str], list[bool]]:
    """``n`` texts from ``make_prompts(indices)``; invalid ones regenerated with a fresh seed.

    Every text is repaired and judged by ``checker`` (post-processing of public
    text); the failures are asked again — fresh prompts (new blanks) and a fresh
    seed, all drawn from ``rng`` — up to ``checker.retries`` times.
    ``instructions[i]``: the instruction of text i's prompt (:func:`instruction_of`).
    Returns the texts and whether each is valid.
    """
    tokenizer = getattr(generator, "tokenizer", None)
    todo = list(range(n))
    out: list[str] = [""] * n
    valid = [checker is None] * n
    attempts = 0 if checker is None else checker.retries
    for attempt in range(attempts + 1):
        if not todo:
            break
        texts = generator.generate(
            make_prompts(todo),
            temperature=temperature,
            max_new_tokens=max_new_tokens,
            seed=_seed(rng),
        )
        if checker is None:
            for i, text in zip(todo, texts):
                out[i] = text
            break
        failed = []
        judged = [
            checker.check(
                text or "",
                max_new_tokens=max_new_tokens,
                reference=None if references is None else references[i],
                tokenizer=tokenizer,
                instruction=frozenset() if instructions is None else instructions[i],
            )
            for i, text in zip(todo, texts)
        ]
        judged = _gated(checker, judged)
        for i, (fixed, reason) in zip(todo, judged):
            if reason is None or not out[i]:
                out[i] = fixed
            if reason is None:
                valid[i] = True
            else:
                failed.append(i)
                if attempt == 0 and stats is not None:
                    stats.invalid += 1
                    stats.reasons[reason] = stats.reasons.get(reason, 0) + 1
        if stats is not None and attempt > 0:
            stats.regenerated += len(todo)
        todo = failed
    if stats is not None:
        stats.generated += n
    return out, valid


def _gated(checker: TextChecker, judged: list[tuple[str, str | None]]) -> list:
    """The checker's verdicts, with the texts it passed judged again by its publishability gate
    (:mod:`privevo.text.gate`; one batch), if it has one."""
    gate = getattr(checker, "gate", None)
    passed = [j for j, (_, reason) in enumerate(judged) if reason is None]
    if gate is None or not passed:
        return judged
    verdicts = gate.judge([judged[j][0] for j in passed])
    out = list(judged)
    for j, verdict in zip(passed, verdicts):
        out[j] = (judged[j][0], verdict)
    return out


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
    checker : :class:`~privevo.text.validity.TextChecker` every text passes
        (None: no check); a text still invalid after its retries is replaced
        by another valid text of its label

    ``validity`` holds the counts of the last call (written, invalid on the
    first try, regenerations, fallbacks).
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
        checker: TextChecker | None = TextChecker(),
    ):
        self.generator = generator
        self.prompt = prompt
        self.label_weights = label_weights
        self.topics = topics
        self.kind = kind
        self.temperature = temperature
        self.max_new_tokens = max_new_tokens
        self.checker = checker
        self.validity: dict = {}

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
        prompts = [
            t.format(kind=self.kind, topic=topic, label=label)
            for t, topic, label in zip(templates, topics, labels)
        ]
        echoes = {t: instruction_of(t, self.kind) for t in set(templates)}
        stats = _Validity()
        texts, valid = _checked_generate(
            self.generator,
            self.checker,
            lambda idx: [prompts[i] for i in idx],
            n,
            rng,
            temperature=self.temperature,
            max_new_tokens=self.max_new_tokens,
            instructions=[echoes[t] for t in templates],
            stats=stats,
        )
        for i in np.flatnonzero(~np.asarray(valid, dtype=bool)):  # fall back to a valid text
            pool = [j for j in range(n) if valid[j] and labels[j] == labels[i]]
            if pool:
                texts[i] = texts[pool[int(rng.integers(len(pool)))]]
                stats.fallback += 1
        self.validity = stats.as_dict()
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
    checker : :class:`~privevo.text.validity.TextChecker` every rewrite passes
        (None: no check); failures are asked again with fresh blanks and a fresh
        seed, and a rewrite still invalid after its retries keeps its parent

    ``validity`` holds the counts of the last call.
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
        checker: TextChecker | None = TextChecker(),
    ):
        if not 0 <= mask_fraction < 1:
            raise ValueError(f"mask_fraction must be in [0, 1), got {mask_fraction}")
        self.generator = generator
        self.mask_fraction = mask_fraction
        self.temperature = temperature
        self.per_point = per_point
        self.kind = kind
        self.max_new_tokens = max_new_tokens
        self.checker = checker
        self.validity: dict = {}

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
        temps = np.tile(self.temperatures(k), len(texts))
        out: list[str] = [""] * len(parents)
        stats = _Validity()
        for temp in np.unique(temps):  # one generate call per temperature (and retry)
            idx = np.flatnonzero(temps == temp)
            sub = [parents[i] for i in idx]
            texts_t, valid = _checked_generate(
                self.generator,
                self.checker,
                lambda todo, sub=sub: [self.prompt_for(sub[j], rng) for j in todo],
                len(idx),
                rng,
                temperature=float(temp),
                max_new_tokens=self.max_new_tokens,
                references=sub,
                instructions=[self.instruction] * len(sub),
                stats=stats,
            )
            for i, text, ok in zip(idx, texts_t, valid):
                out[i] = text if ok and text else parents[i]  # else keep the parent
                stats.fallback += not (ok and text)
        self.validity = stats.as_dict()
        return out

    @property
    def template(self) -> str:
        return FILL_PROMPT if self.mask_fraction > 0 else PARAPHRASE_PROMPT

    @property
    def instruction(self) -> frozenset:
        """The prompt's instruction word runs (a reply repeating one is an echo)."""
        return instruction_of(self.template, self.kind)

    def prompt_for(self, text: str, rng: np.random.Generator) -> str:
        """The rewrite prompt of ``text``: its words left after blanking, as notes (or the whole
        text, to paraphrase)."""
        if self.mask_fraction > 0:
            kept = mask_words(text, self.mask_fraction, rng).split()
            text = " ".join(w for w in kept if w != MASK)
        return self.template.format(kind=self.kind, text=text)
