"""Text Private Evolution: the engine loop in embedding space, texts kept alongside.

:class:`privevo.PrivateEvolution` works on vectors. :class:`TextPopulation`
is the random *and* variation API handed to it: it writes texts with an LLM,
returns their embeddings to the loop, and keeps a list of texts aligned with
the loop's population rows. The engine passes each round's
:class:`~privevo.selection.Selection` to ``vary_selection`` (its seam for
object-aware APIs), whose candidate ``indices`` map the selected rows back to
texts; the next population is ``[selected; variations]`` in the engine and in
the text list alike. The histogram, accounting, selectors and privacy report
are the engine's, unchanged::

    X      = embed(private texts)                         # per-record map, not cached
    S_0    = embed(LLM(random prompts))                   # public
    round  : noisy NN histogram of X over S_{t-1} → select → embed(LLM rewrite(selected texts))
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from .._validation import check_points, check_random_state
from ..evolution import PrivateEvolution
from ..selection import GAPE, Rank, Selection, Subsample
from .apis import LLMRandomAPI, LLMVariationAPI

__all__ = ["TextPopulation", "TextPrivateEvolution", "make_selector", "SELECTORS"]

SELECTORS = ("rank", "subsample", "gape")


class TextPopulation:
    """The loop's random and variation API for text; keeps texts aligned with population rows.

    Parameters
    ----------
    random_api : :class:`LLMRandomAPI`, or a list of public initial texts (S_0)
    variation_api : :class:`LLMVariationAPI`
    embedder : :class:`~privevo.text.SentenceEmbedder` (public texts are cached)
    initial_labels : labels of given initial texts (optional)
    """

    def __init__(self, random_api, variation_api: LLMVariationAPI, embedder, *, initial_labels=None):
        self.random_api = random_api
        self.variation_api = variation_api
        self.embedder = embedder
        self.initial_labels = initial_labels
        self.texts: list[str] = []
        self.labels: list = []

    @property
    def per_point(self) -> int:
        return self.variation_api.per_point

    def __repr__(self) -> str:
        origin = repr(self.random_api) if isinstance(self.random_api, LLMRandomAPI) else f"{len(self.random_api)} given texts"
        return f"TextPopulation({origin}, {self.variation_api!r}, {self.embedder!r})"

    def sample(self, n: int, dim: int, rng: np.random.Generator) -> np.ndarray:
        """Random API of the loop: S_0 as embeddings; the texts are kept in ``texts``."""
        if isinstance(self.random_api, LLMRandomAPI):
            texts, labels = self.random_api.sample_texts(n, rng)
        else:
            texts = list(self.random_api)
            labels = list(self.initial_labels) if self.initial_labels is not None else [None] * len(texts)
            if len(texts) != n:
                raise ValueError(f"random_api gives {len(texts)} initial texts but the population needs {n}; "
                                 "pass population_size=len(texts) or more texts")
        self.texts, self.labels = list(texts), list(labels)
        return self._embed(self.texts, dim)

    def vary_selection(self, selection: Selection, rng: np.random.Generator) -> np.ndarray:
        """Variation API of the loop (engine seam): rewrites of the selected candidates' texts."""
        if selection.indices is None:
            raise ValueError("text PE needs a selector that picks candidates (rank, subsample, gape), "
                             "not one that makes new points (weighted k-means)")
        k = selection.variations_per_point or self.per_point
        parents = [self.texts[i] for i in selection.indices]
        parent_labels = [self.labels[i] for i in selection.indices]
        children = self.variation_api.vary_texts(parents, rng, per_point=k)
        self.texts = parents + children
        self.labels = parent_labels + [lab for lab in parent_labels for _ in range(k)]
        return self._embed(children, len(selection.points[0]))

    def texts_of(self, indices) -> list[str]:
        return [self.texts[i] for i in np.asarray(indices, dtype=np.int64)]

    def labels_of(self, indices) -> list:
        return [self.labels[i] for i in np.asarray(indices, dtype=np.int64)]

    def _embed(self, texts: list[str], dim: int) -> np.ndarray:
        vectors = self.embedder.embed(texts)
        if vectors.shape[1] != dim:
            raise ValueError(f"the embedder gives {vectors.shape[1]}-d vectors but the private embeddings have {dim}; "
                             "embed private and synthetic texts with the same model")
        return vectors


def make_selector(name, R: float = 1.0):
    """A selector from its name (``rank``, ``subsample``, ``gape``) or a selector object as is."""
    if not isinstance(name, str):
        return name
    if name == "rank":
        return Rank()
    if name == "subsample":
        return Subsample()
    if name == "gape":
        return GAPE(R=R, refill=True)  # keep the population size when fewer than m pass τ
    raise ValueError(f"selector must be one of {SELECTORS} or a selector object, got {name!r}")


class TextPrivateEvolution:
    """DP synthetic texts by Private Evolution with a language model (Aug-PE / GAPE on text).

    Parameters
    ----------
    generator : LLM backend (:class:`~privevo.text.TransformersLM`, :class:`~privevo.text.OpenAICompatibleLM`)
    embedder : :class:`~privevo.text.SentenceEmbedder`
    n_synthetic, iterations, epsilon, delta, adjacency : as :class:`privevo.PrivateEvolution`
        (``epsilon=math.inf``: a non-private reference run, reported as such)
    selector : ``"rank"`` (Aug-PE), ``"subsample"``, ``"gape"`` or a selector object
    gape_R : GAPE's public cluster separation in embedding units (unit vectors:
        distance √(2 − 2·cos)); costs are truncated at R/3
    random_api : :class:`LLMRandomAPI`, a list of public initial texts, or None
        (``LLMRandomAPI(generator, kind=kind)``)
    variation_api : :class:`LLMVariationAPI` or None (``LLMVariationAPI(generator, kind=kind)``)
    kind : what a sample is, used in the default prompts (e.g. ``"food review"``)
    initial_labels : labels of given initial texts
    random_state, progress, public_parameters : as :class:`privevo.PrivateEvolution`

    Attributes
    ----------
    synthetic_texts_ : the m selected texts of the last round
    synthetic_labels_ : the label of the prompt each one descends from (or None)
    synthetic_ : their embeddings
    privacy_report_ : the engine's report (:mod:`privevo.report`)
    engine_ : the fitted :class:`privevo.PrivateEvolution`
    population_ : the :class:`TextPopulation`
    """

    def __init__(self, generator, embedder, *, n_synthetic: int, iterations: int, epsilon: float, delta: float,
                 selector="rank", gape_R: float = 1.0, random_api=None, variation_api=None, kind: str = "text",
                 initial_labels: Sequence | None = None, adjacency: str = "add_remove", random_state=None,
                 progress: bool = False, public_parameters: dict | None = None):
        self.generator = generator
        self.embedder = embedder
        self.n_synthetic = n_synthetic
        self.iterations = iterations
        self.epsilon = epsilon
        self.delta = delta
        self.selector = selector
        self.gape_R = gape_R
        self.random_api = random_api
        self.variation_api = variation_api
        self.kind = kind
        self.initial_labels = initial_labels
        self.adjacency = adjacency
        self.random_state = random_state
        self.progress = progress
        self.public_parameters = public_parameters

    def fit(self, texts: Sequence[str] | None = None, *, embeddings=None) -> "TextPrivateEvolution":
        """Embed the private ``texts`` (never cached) and run the engine loop on them.

        ``embeddings``: the private texts already embedded by ``embedder`` (n, d),
        e.g. to reuse them across runs; then ``texts`` may be None.
        """
        if (texts is None) == (embeddings is None):
            raise ValueError("pass exactly one of texts or embeddings (the private texts embedded by the same embedder)")
        X = self.embedder.embed(texts, cache=False) if embeddings is None else check_points(embeddings, "embeddings")
        population = self._population()
        engine = PrivateEvolution(
            population, population, make_selector(self.selector, self.gape_R), self.n_synthetic, self.iterations,
            self.epsilon, self.delta, self.adjacency, check_random_state(self.random_state),
            population_size=len(self.random_api) if isinstance(self.random_api, (list, tuple)) else None,
            progress=self.progress,
            public_parameters={"embedder": repr(self.embedder), "kind": self.kind,
                               **({"gape_R": self.gape_R} if self.selector == "gape" else {}),
                               **(self.public_parameters or {})},
        ).fit(X)
        chosen = engine.final_state_.selection.indices
        self.engine_, self.population_ = engine, population
        self.synthetic_texts_ = population.texts_of(chosen)
        self.synthetic_labels_ = population.labels_of(chosen)
        self.synthetic_ = engine.synthetic_
        self.privacy_report_ = engine.privacy_report_
        self.history_ = engine.history_
        return self

    @property
    def non_private(self) -> bool:
        return self.epsilon == math.inf

    def _population(self) -> TextPopulation:
        random_api = self.random_api if self.random_api is not None else LLMRandomAPI(self.generator, kind=self.kind)
        variation_api = self.variation_api if self.variation_api is not None else LLMVariationAPI(self.generator, kind=self.kind)
        return TextPopulation(random_api, variation_api, self.embedder, initial_labels=self.initial_labels)
