"""The population of text PE: the random *and* variation API the engine loop runs on.

:class:`TextPopulation` writes texts with an LLM, returns their embeddings to the loop, and keeps
a list of texts aligned with the loop's population rows; each round's
:class:`~privevo.selection.Selection` maps the selected rows back to their texts
(:mod:`privevo.text.evolution` for the loop around it).
"""

from __future__ import annotations

import contextlib
import time
from typing import Callable, Sequence

import numpy as np

from ..selection import Selection
from .apis import LLMRandomAPI, LLMVariationAPI
from .labels import label_block

__all__ = ["TextPopulation"]


def check_nonnegative_int(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise ValueError(f"{name} must be an integer >= 0, got {value!r}")
    return int(value)


#: The engine's parameters a text run passes through (and checks as the engine does).


class TextPopulation:
    """The loop's random and variation API for text; keeps texts aligned with population rows.

    Parameters
    ----------
    random_api : :class:`LLMRandomAPI`, or a list of public initial texts (S_0)
    variation_api : :class:`LLMVariationAPI`
    embedder : :class:`~privevo.text.SentenceEmbedder` (public texts are cached)
    initial_labels : labels of given initial texts (optional)
    lookahead : Aug-PE's lookahead L (0 = off): each candidate votes with the
        mean embedding of L variations of its text instead of its own
        embedding; when a candidate is selected, its children are its first
        lookahead variations (no new generation for them)
    keep_selected : the next population is [selected; variations] (True, as
        in the vector loop) or variations only, one more per parent so its
        size is unchanged (False; DPSDA's ``keep_selected=False``)
    label_names : the public label list of a labelled run: each row the
        private texts vote on carries its label block
        (:mod:`privevo.text.labels`), so a private text votes only among its
        own label's candidates

    ``initial_validity`` and ``round_validity`` hold the validity counts of S_0
    and of each round's generation (texts written, invalid on the first try,
    regenerations, fallbacks; :mod:`privevo.text.validity`).

    Each round's prompts go to the backend in one call per temperature (the
    backend sorts them by length and batches them); ``round_seconds`` holds
    each variation step's generation and embedding seconds.

    ``announce`` is called with each step's public name as it starts ("generating 40
    texts", "embedding 40 texts": counts of public texts only); a no-op by default.
    """

    announce: Callable[[str], None] = staticmethod(lambda phase: None)

    def __init__(
        self,
        random_api,
        variation_api: LLMVariationAPI,
        embedder,
        *,
        initial_labels=None,
        lookahead: int = 0,
        keep_selected: bool = True,
        label_names: Sequence | None = None,
    ):
        self.label_names = None if label_names is None else list(label_names)
        self.random_api = random_api
        self.variation_api = variation_api
        self.embedder = embedder
        self.initial_labels = initial_labels
        self.lookahead = lookahead
        self.keep_selected = keep_selected
        self.texts: list[str] = []
        self.labels: list = []
        self.ahead: list[
            list[str]
        ] = []  # lookahead variations of each row (consumed when selected)
        self.round_seconds: list[dict] = []
        self.initial_seconds = {"generation": 0.0, "embedding": 0.0}
        self.initial_validity: dict = {}
        self.round_validity: list[dict] = []

    @property
    def per_point(self) -> int:
        return self.variation_api.per_point

    def __repr__(self) -> str:
        origin = (
            repr(self.random_api)
            if isinstance(self.random_api, LLMRandomAPI)
            else f"{len(self.random_api)} given texts"
        )
        extra = f", lookahead={self.lookahead}" if self.lookahead else ""
        extra += "" if self.keep_selected else ", keep_selected=False"
        return f"TextPopulation({origin}, {self.variation_api!r}, {self.embedder!r}{extra})"

    def sample(self, n: int, dim: int, rng: np.random.Generator) -> np.ndarray:
        """Random API of the loop: S_0 as (vote) embeddings; the texts are kept in ``texts``."""
        check_nonnegative_int(self.lookahead, "lookahead")
        clock = _Clock()
        validity = _Tally()
        if isinstance(self.random_api, LLMRandomAPI):
            self.announce(f"generating {n} texts")
            with clock("generation"):
                texts, labels = self.random_api.sample_texts(n, rng)
            validity.add(self.random_api.validity)
        else:
            texts = list(self.random_api)
            labels = (
                list(self.initial_labels)
                if self.initial_labels is not None
                else [None] * len(texts)
            )
            if len(texts) != n:
                raise ValueError(
                    f"random_api gives {len(texts)} initial texts but the population needs {n}; "
                    "pass population_size=len(texts) or more texts"
                )
        self.texts, self.labels = list(texts), list(labels)
        self.announce(f"embedding {len(self.texts)} texts")
        with clock("embedding"):
            own = self._embed(self.texts, dim - self._label_dim)
        votes, self.ahead = self._vote_rows(self.texts, self.labels, own, rng, clock, validity)
        self.initial_seconds = clock.seconds
        self.initial_validity = validity.counts
        return self._with_labels(votes, self.labels)

    def vary_selection(self, selection: Selection, rng: np.random.Generator) -> np.ndarray:
        """Variation API of the loop (engine seam): rewrites of the selected candidates' texts."""
        if selection.indices is None:
            raise ValueError(
                "text PE needs a selector that picks candidates (rank, subsample, gape), "
                "not one that makes new points (weighted k-means)"
            )
        clock = _Clock()
        validity = _Tally()
        k = (selection.variations_per_point or self.per_point) + (0 if self.keep_selected else 1)
        idx = [int(i) for i in selection.indices]
        parents = [self.texts[i] for i in idx]
        parent_labels = [self.labels[i] for i in idx]
        ahead = [self.ahead[i] if i < len(self.ahead) else [] for i in idx]
        if all(len(a) >= k for a in ahead):  # lookahead variations become the children
            children = [t for a in ahead for t in a[:k]]
        else:
            self.announce(f"generating {len(parents) * k} texts")
            with clock("generation"):
                children = self._vary(parents, parent_labels, rng, k)
            validity.add(getattr(self.variation_api, "validity", {}))
        self.announce(f"embedding {len(children)} texts")
        with clock("embedding"):
            own = self._embed(children, len(selection.points[0]) - self._label_dim)
        child_labels = [lab for lab in parent_labels for _ in range(k)]
        votes, children_ahead = self._vote_rows(children, child_labels, own, rng, clock, validity)
        votes = self._with_labels(votes, child_labels)
        if self.keep_selected:
            self.texts, self.labels = parents + children, parent_labels + child_labels
            self.ahead = [
                [] for _ in parents
            ] + children_ahead  # parents' lookahead texts were used
        else:
            self.texts, self.labels, self.ahead = children, child_labels, children_ahead
        self.round_seconds.append(clock.seconds)
        self.round_validity.append(validity.counts)
        return votes

    @property
    def _label_dim(self) -> int:
        return 0 if self.label_names is None else len(self.label_names)

    def _with_labels(self, votes: np.ndarray, labels: list) -> np.ndarray:
        if self.label_names is None:
            return votes
        return np.hstack([votes, label_block(labels, self.label_names)])

    def _vary(self, texts: list[str], labels: list, rng, k: int) -> list[str]:
        """k rewrites of each text; privevo's variation API also gets the texts' public labels
        (a labelled run's rewrites under their label's heading)."""
        if self.label_names is not None and isinstance(self.variation_api, LLMVariationAPI):
            return self.variation_api.vary_texts(texts, rng, per_point=k, labels=labels)
        return self.variation_api.vary_texts(texts, rng, per_point=k)

    def _vote_rows(
        self, texts: list[str], labels: list, own: np.ndarray, rng, clock, validity=None
    ) -> tuple[np.ndarray, list[list[str]]]:
        """Rows the private texts vote on: own embeddings, or means of ``lookahead`` variations."""
        if not self.lookahead:
            return own, [[] for _ in texts]
        L = int(self.lookahead)
        self.announce(f"generating {len(texts) * L} lookahead texts")
        with clock("generation"):
            ahead = self._vary(texts, labels, rng, L)
        if validity is not None:
            validity.add(getattr(self.variation_api, "validity", {}))
        self.announce(f"embedding {len(ahead)} lookahead texts")
        with clock("embedding"):
            Z = self._embed(ahead, own.shape[1]).reshape(len(texts), L, -1)
        return Z.mean(axis=1), [ahead[i * L : (i + 1) * L] for i in range(len(texts))]

    def texts_of(self, indices) -> list[str]:
        return [self.texts[i] for i in np.asarray(indices, dtype=np.int64)]

    def labels_of(self, indices) -> list:
        return [self.labels[i] for i in np.asarray(indices, dtype=np.int64)]

    # -- checkpoint seam: the public texts of the population, stored with each round ----------

    def checkpoint_state(self) -> dict:
        return {
            "texts": list(self.texts),
            "labels": _json_labels(self.labels),
            "ahead": [list(a) for a in self.ahead],
        }

    def restore_checkpoint_state(self, state: dict) -> None:
        self.texts, self.labels = list(state["texts"]), list(state["labels"])
        self.ahead = [list(a) for a in state.get("ahead", [[] for _ in self.texts])]

    def _embed(self, texts: list[str], dim: int) -> np.ndarray:
        vectors = self.embedder.embed(texts)
        if vectors.shape[1] != dim:
            raise ValueError(
                f"the embedder gives {vectors.shape[1]}-d vectors but the private embeddings have "
                f"{dim}; "
                "embed private and synthetic texts with the same model"
            )
        return vectors


class _Tally:
    """Validity counts summed over the generation calls of one step."""

    KEYS = ("generated", "invalid", "regenerated", "fallback")

    def __init__(self):
        self.counts: dict = {}

    def add(self, counts: dict) -> None:
        if not counts:
            return
        for key in self.KEYS:
            self.counts[key] = self.counts.get(key, 0) + int(counts.get(key, 0))
        reasons = self.counts.setdefault("reasons", {})
        for reason, c in counts.get("reasons", {}).items():
            reasons[reason] = reasons.get(reason, 0) + int(c)


class _Clock:
    """Seconds spent per phase (generation, embedding)."""

    def __init__(self):
        self.seconds = {"generation": 0.0, "embedding": 0.0}

    @contextlib.contextmanager
    def __call__(self, phase: str):
        tic = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[phase] += time.perf_counter() - tic


def _json_labels(labels) -> list:
    return [
        lab if lab is None or isinstance(lab, (str, int, float, bool)) else str(lab)
        for lab in labels
    ]
