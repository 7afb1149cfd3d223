"""Which generated texts a user could publish: leftover blanks, echoed prompts, truncation, length.

Every text a random or variation API writes goes through :class:`TextChecker`
before it enters the population. The checker first *repairs* what can be
repaired without changing the content (a leading echo of the instruction such
as ``"Rewrite the sentence:"`` is cut; a text cut off by the token cap mid
sentence is trimmed to its last complete sentence), then *judges* the rest:

- ``mask``: a leftover blank — a lone ``_``, a word holding ``_`` (``_post``,
  ``[the_ item]``) or a bracketed placeholder (``[product name]``, ``[blank]``);
- ``echo``: the instruction or the prompt in the reply (``"fill in the
  blanks"``, ``"reply with the review only"``, ``"Rewrite this review"``, ...),
  any four words in a row of the instruction it answers, or the assistant
  talking about itself or the request (``"Here's a short review:"``, ``"as an
  AI"``, ``"sorry for the confusion"``);
- ``empty``: fewer than ``min_words`` words (or no letters at all);
- ``truncated``: stopped by the token cap mid sentence with no complete
  sentence of ``min_words`` words to keep;
- ``length``: far outside the requested range — fewer than
  ``min_ratio`` × or more than ``max_ratio`` × the words of the text it
  rewrites (variations only).

Checking and regenerating see only public text (the prompts and the model's
replies): it is post-processing, with no privacy cost.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

__all__ = ["TextChecker", "INVALID_REASONS", "invalid_reason", "instruction_ngrams", "repair"]

INVALID_REASONS = ("mask", "echo", "empty", "truncated", "length")
# a PublishabilityGate adds "meta", "off-topic", "incoherent" (privevo.text.gate)

# a lone "_", a run of them, or a word with "_" inside; bracketed placeholders (up to 60
# characters: "[Unspecified detail, no description included]")
_MASK = re.compile(r"_|\[[^\]\n]{0,60}\]|\{[^}\n]{0,60}\}|<(?:blank|mask)>", re.IGNORECASE)
# instruction words that never belong to the text itself (anywhere in the reply)
_ECHO_ANYWHERE = re.compile(
    r"fill(?:ed|ing)? in the blanks?|the blanks\b|reply with the|"
    r"in your own words|rewrite (?:this|the) (?:sentence|text|review|paragraph|following)|"
    r"write (?:it )?out as one complete|\b(?:here is|here's) (?:the|a|my|your) "
    r"(?:rewritten|revised|completed|filled|new|rephrased|paraphrased)|"
    r"\b(?:rewritten|revised|completed|filled-in|paraphrased) (?:version|text|review|sentence)\b|"
    r"as an ai\b|i'm sorry, but|i cannot (?:fill|rewrite|complete)|"
    r"\bi'?d be (?:happy|glad) to\b|\bhappy to (?:help|assist)\b|"
    # the assistant announcing a text, apologising, or talking about itself or the request
    r"\bhere(?:'s| is| are) (?:the|a|an|my|your)\b[^\n.!?:]{0,40}\b(?:review|text|version|"
    r"summary|description|example|sample|edit|answer|response|paragraph|sentence|note)s?\b|"
    r"\bhere(?:'s| is) your\b|"
    r"\b(?:sorry|apologi[sz]e) (?:for|about) (?:any|the|my) "
    r"(?:confusion|misunderstanding|inconvenience|mistake|error)|"
    r"\b(?:your|this) (?:request|prompt|conversation)\b|\bhow can i (?:help|assist)\b|"
    r"\blet me know if\b|\bsmol|hugging ?face|\bai (?:assistant|model)\b|"
    r"\blanguage model\b|(?-i:\bAI\b)|"
    # the prompt's notes, text or topic referred to ("in this note", "the topic you chose")
    r"\b(?:this|these|the|your|my) notes?\b(?!\s+of\b)|\bthe (?:provided|given|following|above|"
    r"original) (?:text|notes?|words|review|information|sentence|version)\b|"
    r"\bprovided (?:text|notes?)\b|\bi'?m here to (?:help|assist)\b|\bthis text\b|"
    r"\b(?:glad|happy) (?:that )?i (?:could|can) help\b|\btoday's notes?\b|"
    r"\btopic you\b|\byou (?:chose|asked for|provided|gave me)\b|"
    r"\bi'?m (?:so |very )?sorry\b(?!,? (?:to say|to report|but\b))|\bmy apologies\b|"
    r"\bi apologi[sz]e\b|"
    # the reply describing the text, or promising to write it, instead of being it
    r"\b(?:this|the|my) (?:review|text|post|sentence|paragraph) (?:is about|highlights|describes|"
    r"focuses on|mentions|talks about|is complete)\b|\bis a (?:\w+ ){0,2}review that\b|"
    r"\bi(?:'ll| will) (?:just )?(?:write|provide|give you|do my best|rewrite)\b|"
    r"\b(?:this|the|each|every|one|a) sentence\b|\bwrite it again\b|"
    r"\blet me (?:just )?(?:set|fix|rewrite|write)\b",
    re.IGNORECASE,
)
_ECHO_NGRAM = 4  # a reply repeating this many words in a row of its instruction echoes it
# a leading clause ending in ":" (or a first line) that announces the text rather than being it
_LEAD_COLON = re.compile(r"^\s*([^\n:]{0,80}?)\s*:\s*")
_LEAD_LINE = re.compile(r"^\s*([^\n]{0,80}?)\s*\n\s*")
_ANNOUNCE = (
    r"rewrite|rewritten|rephrase|rephrased|paraphrase|paraphrased|fill|filled|blanks?|"
    r"completed?|revised|version|sure|certainly|okay"
)
_LEAD_WORDS = re.compile(
    rf"\b(?:{_ANNOUNCE}|sentence|answer|output|reply|response|text|review|result|input)\b",
    re.IGNORECASE,
)
_LINE_WORDS = re.compile(rf"\b(?:{_ANNOUNCE})\b", re.IGNORECASE)
_SENTENCE_END = re.compile(r"[.!?…](?:[\"')\]]*)(?=\s|$)")
_WORD = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*")


def _words(text: str) -> int:
    return len(_WORD.findall(text))


def repair(text: str, *, capped: bool = False, min_words: int = 3) -> str:
    """Cut a leading echo of the instruction, and trim a capped text to its last full sentence.

    ``capped``: the text reached the token cap (likely cut mid sentence).
    Repairs only remove the model's own wrapper or an unfinished tail; they
    never rewrite the words in between.
    """
    text = text.strip()
    for _ in range(2):  # "Sure! Here is the rewritten review:\nReview: ..." has two
        lead = _LEAD_COLON.match(text)
        if lead is None or not _LEAD_WORDS.search(lead.group(1)):
            lead = _LEAD_LINE.match(text)
            if lead is None or not _LINE_WORDS.search(lead.group(1)):
                break
        rest = text[lead.end() :].strip()
        if _words(rest) < min_words:
            break
        text = rest
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        text = text[1:-1].strip()
    if capped and not _ends_sentence(text):
        ends = [m.end() for m in _SENTENCE_END.finditer(text)]
        if ends and _words(text[: ends[-1]]) >= min_words:
            text = text[: ends[-1]].strip()
    return text


def _ends_sentence(text: str) -> bool:
    tail = text.rstrip("\"')] ")
    return bool(tail) and (tail[-1] in ".!?…" or not tail[-1].isalnum())


def _ngrams(text: str, n: int = _ECHO_NGRAM) -> set[tuple[str, ...]]:
    words = [w.lower() for w in _WORD.findall(text)]
    return {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}


_DETERMINERS = ("a", "the", "this", "my", "your", "our")


def instruction_ngrams(instruction: Sequence[str], kind: str = "") -> frozenset[tuple[str, ...]]:
    """The word runs a reply must not repeat: every 4 words in a row of an instruction's pieces
    (each piece a stretch of the prompt that is instruction, not content: a template's text
    between its ``{text}``/``{topic}`` fields), and, for a ``kind`` of two words or more (the
    prompt's own term, e.g. "food review"), the kind after a determiner ("this food review":
    the reply talking about itself)."""
    grams = frozenset().union(*(_ngrams(piece) for piece in instruction))
    words = tuple(w.lower() for w in _WORD.findall(kind))
    if len(words) >= 2:
        grams |= {(det, *words) for det in _DETERMINERS}
    return grams


def _echoes(text: str, instruction: frozenset[tuple[str, ...]]) -> bool:
    """Whether ``text`` repeats one of the word runs of :func:`instruction_ngrams` (a run that
    starts with a determiner also with one word after it: "a good food review")."""
    words = [w.lower() for w in _WORD.findall(text)]
    for n in {len(gram) for gram in instruction}:
        for i in range(len(words) - n + 1):
            if tuple(words[i : i + n]) in instruction or (
                words[i] in _DETERMINERS and (words[i], *words[i + 2 : i + n + 1]) in instruction
            ):
                return True
    return False


def invalid_reason(
    text: str,
    *,
    reference_words: int | None = None,
    capped: bool = False,
    min_words: int = 3,
    min_ratio: float = 0.25,
    max_ratio: float = 4.0,
    instruction: frozenset[tuple[str, ...]] = frozenset(),
) -> str | None:
    """Why ``text`` is not publishable (one of :data:`INVALID_REASONS`), or None if it is.

    ``reference_words``: words of the text being rewritten (its requested
    length); ``capped``: the text reached the token cap; ``instruction``: the
    :func:`instruction_ngrams` of the prompt it answers (a shared one is an echo).
    """
    if _MASK.search(text):
        return "mask"
    if not text or not text.strip() or _words(text) < min_words:
        return "empty"
    if _ECHO_ANYWHERE.search(text) or _echoes(text, instruction):
        return "echo"
    if capped and not _ends_sentence(text):
        return "truncated"
    if reference_words:
        n = _words(text)
        # short parents are not held to the lower ratio below min_words
        if n < min(min_ratio * reference_words, max(min_words, reference_words)) or (
            n > max_ratio * reference_words + min_words
        ):
            return "length"
    return None


@dataclass
class TextChecker:
    """Repairs, then judges, each generated text (see the module docstring).

    Parameters
    ----------
    min_words : fewer words than this is ``empty``
    min_ratio, max_ratio : a rewrite outside [min_ratio, max_ratio] × its
        parent's words is ``length``
    cap_fraction : a text of at least this share of the token cap (in
        characters, ~4 per token) that does not end a sentence counts as
        reaching the cap
    retries : regenerations (fresh seed, fresh blanks) of a failed text
        before it falls back to its parent (variations) or to another valid
        text of its label (random API)
    gate : a :class:`~privevo.text.gate.PublishabilityGate` that judges the
        texts this checker passes (meta-talk, off-topic, incoherent), in one
        batch per generation call; None: none
    """

    min_words: int = 3
    min_ratio: float = 0.25
    max_ratio: float = 4.0
    cap_fraction: float = 0.8
    retries: int = 3
    gate: object = None

    def capped(self, text: str, max_new_tokens: int, tokenizer=None) -> bool:
        """Whether ``text`` reached the token cap: counted by ``tokenizer`` if given, else about
        4 characters a token."""
        if tokenizer is not None:
            return len(tokenizer.encode(text, add_special_tokens=False)) >= max_new_tokens - 2
        return len(text) >= self.cap_fraction * 4 * max_new_tokens

    def check(
        self,
        text: str,
        *,
        max_new_tokens: int = 64,
        reference: str | None = None,
        tokenizer=None,
        instruction: frozenset[tuple[str, ...]] = frozenset(),
    ) -> tuple[str, str | None]:
        """(repaired text, reason it is invalid or None); ``reference``: the text it rewrites;
        ``instruction``: :func:`instruction_ngrams` of the prompt's instruction."""
        capped = self.capped(text, max_new_tokens, tokenizer)
        fixed = repair(text, capped=capped, min_words=self.min_words)
        reason = invalid_reason(
            fixed,
            reference_words=None if reference is None else _words(reference.replace("_", " ")),
            capped=capped,
            min_words=self.min_words,
            min_ratio=self.min_ratio,
            max_ratio=self.max_ratio,
            instruction=instruction,
        )
        return fixed, reason

    def gated(self, judged: list[tuple[str, str | None]]) -> list[tuple[str, str | None]]:
        """:meth:`check`'s verdicts, with the texts it passed judged again by :attr:`gate` (one
        batch), if there is one: the step every generated text goes through."""
        passed = [j for j, (_, reason) in enumerate(judged) if reason is None]
        if self.gate is None or not passed:
            return judged
        verdicts = self.gate.judge([judged[j][0] for j in passed])
        out = list(judged)
        for j, verdict in zip(passed, verdicts):
            out[j] = (judged[j][0], verdict)
        return out
