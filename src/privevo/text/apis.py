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

A base model (a generator with ``chat`` False, such as Gemma 3 270M) follows no
instruction; it continues a document. It gets completion prompts instead: a few
public examples of the kind (:data:`KIND_EXAMPLES`, or the caller's; a label's own under the
label's heading, :func:`example_heading`), then the new entry's heading (:data:`DOCUMENT_PROMPT`);
its variation keeps the parent's first ``1 − mask_fraction`` of the words and writes the
rest (:data:`CONTINUE_PROMPT`, the partial regeneration of PE's image variations in text
form). A completion ends at its first line break.

Both see only public text (prompts and selected synthetic candidates). Every
draw — labels, topics, masks, LLM seeds — comes from the ``numpy.random.
Generator`` passed in.
"""

from __future__ import annotations

import string
from typing import Mapping, Sequence

import numpy as np

from .._validation import check_positive_int
from .labels import LABELS_MISMATCH
from .llm import TextGenerator
from .validity import TextChecker, instruction_ngrams

__all__ = [
    "LLMRandomAPI",
    "LLMVariationAPI",
    "mask_words",
    "FOOD_TOPICS",
    "LABEL_PROMPT",
    "KIND_EXAMPLES",
    "completes_documents",
    "default_prompt",
    "example_heading",
]

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
# Completion prompts of a base model: public examples (paragraphs under the entry's heading, its
# topic clause dropped), then the new entry's heading; the model writes the entry and stops at
# the line break.
TOPIC_CLAUSE = " about {topic}"  # an example paragraph's heading is the entry's without it
DOCUMENT_PROMPT = "{examples}{Kind} about {topic}:"
LABEL_DOCUMENT_PROMPT = "{examples}{Kind} about {topic} ({label}):"
CONTINUE_PROMPT = "{examples}{Kind}: {text}"
EXAMPLES_PER_PROMPT = 3
# Public examples of a kind, written by hand for the completion prompts (no private data).
KIND_EXAMPLES: Mapping[str, tuple[str, ...]] = {
    "food review": (
        "This snack tastes great and the price is fair. The bag arrived quickly and nothing was "
        "broken. I would buy it again.",
        "Disappointing. The crackers were stale and the box was half empty, so not worth the "
        "money.",
        "My kids love this cereal. It is not too sweet, stays crunchy in milk, and the large box "
        "lasts us two weeks.",
        "The coffee is smooth with no bitter aftertaste, but the bag is smaller than I expected "
        "for the price.",
        "I ordered two jars and one arrived with a broken seal. The one that was fine tastes "
        "good, but I will not order again.",
        "Our dog is a picky eater and finished the whole bowl. No stomach problems so far, and "
        "it costs less than the pet store.",
        "Too salty for me. My husband likes it, so it will not go to waste, but I will stick "
        "with the low sodium version.",
        "Good flavor and a nice kick. I use it on eggs and tacos. Shipping took a week longer "
        "than promised.",
    ),
}
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


def completes_documents(generator) -> bool:
    """Whether ``generator`` is a base model that continues a document (``chat`` is False)."""
    return getattr(generator, "chat", True) is False


def default_prompt(generator, labelled: bool = False) -> str:
    """The random API's template for ``generator``: an instruction for a chat model, a
    completion prompt for a base model."""
    if completes_documents(generator):
        return LABEL_DOCUMENT_PROMPT if labelled else DOCUMENT_PROMPT
    return LABEL_PROMPT if labelled else RANDOM_PROMPT


def _heading(kind: str) -> str:
    return kind[:1].upper() + kind[1:]


Examples = Sequence[str] | Mapping[str, Sequence[str]]


def example_heading(template: str, kind: str, label: str | None = None) -> str:
    """The heading of a label's own example paragraphs in ``template``'s prompts: the new entry's
    heading (the last line after ``{examples}``) without its topic clause :data:`TOPIC_CLAUSE`
    and final colon, so the examples read as earlier entries under the same heading.
    ``{Kind}`` when the heading has no topic clause."""
    tail = template.split("{examples}", 1)[-1].rsplit("\n", 1)[-1]
    if TOPIC_CLAUSE not in tail:
        return _heading(kind)
    try:
        heading = tail.replace(TOPIC_CLAUSE, "").format(
            kind=kind, Kind=_heading(kind), label=label or ""
        )
    except (KeyError, IndexError, ValueError):  # a field only the caller's template knows
        return _heading(kind)
    heading = " ".join(heading.split()).rstrip(":").rstrip()
    return heading or _heading(kind)


def _own_heading(
    examples: Examples | None, template: str | None, kind: str, label: str | None
) -> str | None:
    """The heading of ``label``'s own examples in ``template``'s prompts (:func:`example_heading`)
    when ``examples`` maps that label to its own; None (the plain ``{Kind}``) for examples shared
    by every prompt, or without a template."""
    if isinstance(examples, Mapping) and label in examples and template is not None:
        return example_heading(template, kind, label)
    return None


def _examples(
    kind: str,
    examples: Examples | None,
    rng: np.random.Generator,
    label: str | None = None,
    k: int = EXAMPLES_PER_PROMPT,
    heading: str | None = None,
) -> str:
    """``k`` public examples drawn without replacement, each a ``{heading}: text`` paragraph
    (default heading ``{Kind}``); from ``examples[label]`` if ``examples`` maps labels to
    examples (all of them pooled without a label), else from ``examples`` or
    :data:`KIND_EXAMPLES`."""
    if isinstance(examples, Mapping):
        named = examples.get(label) if label is not None else None
        examples = named if named is not None else [e for v in examples.values() for e in v]
    pool = list(KIND_EXAMPLES.get(kind.lower().strip(), ()) if examples is None else examples)
    if not pool:
        return ""
    chosen = rng.choice(len(pool), size=min(k, len(pool)), replace=False)
    heading = _heading(kind) if heading is None else heading
    return "".join(f"{heading}: {' '.join(pool[i].split())}\n\n" for i in chosen)


def first_line(start: str, completion: str) -> str:
    """A base model's entry: ``start`` (the kept words) and its completion, up to the first line
    break. A space joins them unless the completion begins with one or with punctuation
    (decoders drop the first token's leading space)."""
    if start and completion[:1].isalnum():
        completion = " " + completion
    return (start + completion).strip().split("\n", 1)[0].strip()


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
    document: bool = False,
) -> tuple[list[str], list[bool]]:
    """``n`` texts from ``make_prompts(indices)``; invalid ones regenerated with a fresh seed.

    ``make_prompts`` gives a ``(prompt, start)`` pair per index; ``start`` is the beginning of
    the text already written in the prompt (a completion prompt's kept words, else ``""``).
    With ``document`` (a base model's completion prompts) a text is ``start`` plus the
    completion, up to its first line break. Every text is repaired and judged by ``checker``
    (post-processing of public text); the failures are asked again — fresh prompts (new
    blanks) and a fresh seed, all drawn from ``rng`` — up to ``checker.retries`` times.
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
        prompts, starts = zip(*make_prompts(todo))
        texts = generator.generate(
            list(prompts), temperature=temperature, max_new_tokens=max_new_tokens, seed=_seed(rng)
        )
        if document:
            texts = [first_line(start, text or "") for start, text in zip(starts, texts)]
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
        judged = checker.gated(judged)
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


class LLMRandomAPI:
    """An LLM writes new samples from public prompts (the random API of text PE).

    Parameters
    ----------
    generator : a backend with ``generate(prompts, temperature=, max_new_tokens=, seed=)``
    prompt : a template with optional ``{kind}``, ``{Kind}`` (capitalised), ``{topic}`` and
        ``{examples}``, or a dict ``{label: template}`` for labelled data (one prompt per
        label); None: :func:`default_prompt` for the generator
    label_weights : public label probabilities for a dict ``prompt`` (default uniform)
    topics : public list filling ``{topic}`` uniformly at random
    kind : what a sample is, e.g. ``"food review"``
    examples : public examples of the kind for ``{examples}``, three drawn per prompt: a list,
        or a dict ``{label: list}`` (each label's prompts draw from its own); default
        :data:`KIND_EXAMPLES` of ``kind``
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
        prompt: str | Mapping[str, str] | None = None,
        *,
        label_weights: Sequence[float] | None = None,
        topics: Sequence[str] = ("any subject",),
        kind: str = "text",
        examples: Examples | None = None,
        temperature: float = 1.0,
        max_new_tokens: int = 64,
        checker: TextChecker | None = TextChecker(),
    ):
        self.generator = generator
        self.prompt = default_prompt(generator) if prompt is None else prompt
        self.examples = examples
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
        headings = {
            (t, label): _own_heading(self.examples, t, self.kind, label)
            for t, label in set(zip(templates, labels))
        }
        prompts = [
            t.format(
                kind=self.kind,
                Kind=_heading(self.kind),
                topic=topic,
                label=label,
                examples=(
                    _examples(self.kind, self.examples, rng, label, heading=headings[t, label])
                    if "{examples}" in t
                    else ""
                ),
            )
            for t, topic, label in zip(templates, topics, labels)
        ]
        echoes = {t: instruction_of(t, self.kind) for t in set(templates)}
        stats = _Validity()
        texts, valid = _checked_generate(
            self.generator,
            self.checker,
            lambda idx: [(prompts[i], "") for i in idx],
            n,
            rng,
            temperature=self.temperature,
            max_new_tokens=self.max_new_tokens,
            instructions=[echoes[t] for t in templates],
            stats=stats,
            document=completes_documents(self.generator),
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
    examples : public examples of the kind for a base model's completion prompts, as
        :class:`LLMRandomAPI`'s (a dict's lists pooled, unless ``label_prompts`` names the
        parent's label)
    label_prompts : the random API's templates ``{label: template}`` of a labelled run: a
        base model's rewrite of a parent of label l (``vary_texts(..., labels=)``) shows l's
        own examples (``examples[l]``) under l's heading (:func:`example_heading`) and
        continues the kept words under that heading, as l's new entries are written; a label
        without its own examples, and a chat model, are rewritten as without labels
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
        examples: Examples | None = None,
        label_prompts: Mapping[str, str] | None = None,
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
        self.examples = examples
        self.label_prompts = label_prompts
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
        self,
        texts: Sequence[str],
        rng: np.random.Generator,
        per_point: int | None = None,
        labels: Sequence | None = None,
    ) -> list[str]:
        """``per_point`` rewrites of each text, grouped by parent (rows i·k … i·k+k−1 of parent
        i); ``labels``: each text's public label (see ``label_prompts``)."""
        k = check_positive_int(per_point or self.per_point, "per_point")
        if labels is not None and len(labels) != len(texts):
            raise ValueError(LABELS_MISMATCH)
        parents = [t for t in texts for _ in range(k)]
        headings = self._headings([None] * len(texts) if labels is None else labels, k)
        temps = np.tile(self.temperatures(k), len(texts))
        out: list[str] = [""] * len(parents)
        stats = _Validity()
        for temp in np.unique(temps):  # one generate call per temperature (and retry)
            idx = np.flatnonzero(temps == temp)
            sub = [parents[i] for i in idx]
            texts_t, valid = _checked_generate(
                self.generator,
                self.checker,
                lambda todo, idx=idx, sub=sub: [
                    self._prompt_and_start(sub[j], rng, *headings[idx[j]]) for j in todo
                ],
                len(idx),
                rng,
                temperature=float(temp),
                max_new_tokens=self.max_new_tokens,
                references=sub,
                instructions=[self.instruction] * len(sub),
                stats=stats,
                document=completes_documents(self.generator),
            )
            for i, text, ok in zip(idx, texts_t, valid):
                out[i] = text if ok and text else parents[i]  # else keep the parent
                stats.fallback += not (ok and text)
        self.validity = stats.as_dict()
        return out

    @property
    def template(self) -> str:
        if completes_documents(self.generator):
            return CONTINUE_PROMPT
        return FILL_PROMPT if self.mask_fraction > 0 else PARAPHRASE_PROMPT

    @property
    def instruction(self) -> frozenset:
        """The prompt's instruction word runs (a reply repeating one is an echo)."""
        return instruction_of(self.template, self.kind)

    def prompt_for(self, text: str, rng: np.random.Generator) -> str:
        """The rewrite prompt of ``text``: its words left after blanking, as notes (or the whole
        text, to paraphrase); for a base model, public examples and the text's first words."""
        return self._prompt_and_start(text, rng)[0]

    def _headings(self, labels: Sequence, k: int) -> list[tuple[str | None, str | None]]:
        """(label, heading) of each of the k·len(labels) rewrites: the parent's label and its
        :func:`_own_heading` where ``label_prompts`` and ``examples`` both name it, else
        (None, None): the examples pooled under the plain heading."""
        prompts = self.label_prompts if isinstance(self.label_prompts, Mapping) else {}
        pairs = {}
        for label in set(labels):
            heading = _own_heading(self.examples, prompts.get(label), self.kind, label)
            pairs[label] = (None, None) if heading is None else (label, heading)
        return [pairs[label] for label in labels for _ in range(k)]

    def _prompt_and_start(
        self,
        text: str,
        rng: np.random.Generator,
        label: str | None = None,
        heading: str | None = None,
    ) -> tuple[str, str]:
        if completes_documents(self.generator):
            words = text.split()  # keep the first 1 − mask_fraction, rewrite at least one word
            start = " ".join(
                words[: min(int((1 - self.mask_fraction) * len(words)), len(words) - 1)]
            )
            heading = _heading(self.kind) if heading is None else heading
            examples = _examples(self.kind, self.examples, rng, label, heading=heading)
            prompt = self.template.format(examples=examples, Kind=heading, text=start)
            return prompt.rstrip(), start
        if self.mask_fraction > 0:
            kept = mask_words(text, self.mask_fraction, rng).split()
            text = " ".join(w for w in kept if w != MASK)
        return self.template.format(kind=self.kind, text=text), ""
