"""Text Private Evolution: the engine loop in embedding space, texts kept alongside.

:class:`privevo.PrivateEvolution` works on vectors. :class:`TextPrivateEvolution` holds
one, composed through its public seams (round hooks, ``keep_selected``, its name), and hands it
a :class:`~privevo.text.population.TextPopulation` as the random *and* variation API: it
writes texts with an LLM, returns their embeddings to the loop, and keeps a list of texts
aligned with the loop's population rows. The engine passes each round's
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

import contextlib
import math
import warnings
from dataclasses import dataclass, fields
from numbers import Integral, Real
from typing import Any, Callable, Sequence

import numpy as np

from .._params import constructor_params
from .._validation import HasMethods, Interval, StrOptions, check_points, validate_params
from ..evolution import PrivateEvolution
from ..report import with_seed_warning
from ..selection import Selection, SelectionContext, Selector, make_selector, selector_names
from .apis import LLMRandomAPI, LLMVariationAPI, default_prompt
from .embed import check_texts
from .labels import LABELS_MISMATCH, check_label_names, with_labels
from .population import TextPopulation

__all__ = ["TextPopulation", "TextPrivateEvolution", "Thresholded"]


_ENGINE_KEYS = (
    "n_synthetic",
    "iterations",
    "epsilon",
    "delta",
    "adjacency",
    "random_state",
    "noise",
    "progress",
    "checkpoint",
    "n_neighbors",  # these two last: the text run sets its own (_engine_config)
    "public_parameters",
)


class _Phases:
    """The public phase of a text run, told to ``callback`` (e.g. the command line's heartbeat)
    and shown on ``bar`` (a rounds bar): "embedding the private texts", "S_0: generating 40
    texts", "round 2 of 3: counting the private votes". A phase names counts of public texts
    only, never the number of private texts, and carries no duration (docs/privacy.md)."""

    def __init__(self, callback: Callable[[str], None] | None = None, bar=None):
        self.callback, self.bar = callback, bar
        self.step: str | None = None  # "S_0", "round 2 of 3": the prefix of every phase

    def __call__(self, what: str) -> None:
        phase = what if self.step is None else f"{self.step}: {what}"
        if self.bar is not None:
            self.bar.set_description_str(phase)
        if self.callback is not None:
            self.callback(phase)

    def start_round(self, t: int, total: int) -> None:
        """The engine's ``on_round_start`` hook: round t (0-based) of ``total`` announced (a bar
        with no duration on it: a round's time grows with the number of private texts)."""
        if self.bar is not None and self.bar.n != t:
            self.bar.n = t  # a resumed run starts after its logged rounds
            self.bar.refresh()
        self.step = f"round {t + 1} of {total}"
        self("counting the private votes")

    def end_round(self, record) -> None:
        """The engine's callback after each round: one more round on the bar."""
        if self.bar is not None:
            self.bar.update(1)


def _phase_bar(total: int):
    """A rounds bar with the phase as its label and no time, rate or remaining time."""
    from tqdm.auto import tqdm

    return tqdm(total=total, leave=False, bar_format="{desc} |{bar}| {n_fmt}/{total_fmt} rounds")


class Thresholded:
    """DPSDA's ``histogram_threshold``: counts ← max(counts − threshold, 0), then ``selector``.

    Post-processing of the noisy counts (no budget). ``threshold`` is in vote
    units; a candidate below it is never chosen by a count-driven selector.
    """

    def __init__(self, selector, threshold: float):
        self.selector = selector
        self.threshold = threshold

    def select(
        self, candidates: np.ndarray, noisy_counts: np.ndarray, context: SelectionContext
    ) -> Selection:
        threshold = float(self.threshold)
        if not (threshold >= 0 and math.isfinite(threshold)):
            raise ValueError(f"threshold must be a finite number >= 0, got {self.threshold!r}")
        clipped = np.maximum(np.asarray(noisy_counts, dtype=np.float64) - threshold, 0.0)
        selection = self.selector.select(candidates, clipped, context)
        selection.info["histogram_threshold"] = threshold
        return selection

    def __repr__(self) -> str:
        return f"Thresholded({self.selector!r}, threshold={self.threshold})"


@dataclass(frozen=True)
class _EngineConfig:
    """The engine's settings for one text run (:class:`privevo.PrivateEvolution`'s keywords);
    :meth:`engine` builds the loop around a :class:`TextPopulation` and a selector."""

    n_synthetic: int
    iterations: int
    epsilon: float
    delta: float
    adjacency: str
    random_state: Any
    noise: str
    population_size: int | None
    progress: bool
    checkpoint: Any
    n_neighbors: int
    public_parameters: dict

    def engine(self, population: TextPopulation, selector, phases: "_Phases") -> PrivateEvolution:
        """The engine loop around ``population`` (its random and variation API), composed
        through its public seams: rounds announced to ``phases``, the population's
        ``keep_selected``, and the public class's name in every message."""
        keywords = {f.name: getattr(self, f.name) for f in fields(self)}  # no copies
        keywords["progress"] = False  # the run's own phase bar shows the rounds
        return PrivateEvolution(
            population,
            population,
            selector,
            **keywords,
            on_round_start=(phases.start_round,),
            callbacks=(phases.end_round,),
            keep_selected=population.keep_selected,
            name="TextPrivateEvolution",
        )


def embed_private(embedder, texts) -> np.ndarray:
    """Private texts → embeddings, each text encoded alone and never cached."""
    texts = check_texts(texts)  # any embedder: a non-string item is refused before it is read
    if hasattr(embedder, "embed_private"):
        return embedder.embed_private(texts)
    return embedder.embed(texts, cache=False)


class TextPrivateEvolution:
    """DP synthetic texts by Private Evolution with a language model (Aug-PE / GAPE on text).

    Parameters
    ----------
    generator : LLM backend (:func:`~privevo.text.smollm2`, :class:`~privevo.text.TransformersLM`,
        :class:`~privevo.text.OpenAICompatibleLM`, ...)
    embedder : :class:`~privevo.text.SentenceEmbedder`
    n_synthetic, iterations, epsilon, delta, adjacency : as :class:`privevo.PrivateEvolution`
        (``epsilon=math.inf``: a non-private reference run, reported as such)
    selector : ``"rank"`` (Aug-PE), ``"subsample"``, ``"gape"``, ``"gape_agg"`` (GAPE
        with neighbourhood aggregation) or a selector object
    gape_R : GAPE's public cluster separation in embedding units (unit vectors:
        distance √(2 − 2·cos)); costs are truncated at R/3
    fill : GAPE returns only candidates above its threshold (fewer than m at small ε);
        ``fill=True`` completes the selection to m with the largest remaining noisy counts
    random_api : :class:`LLMRandomAPI`, a list of public initial texts, or None
        (``LLMRandomAPI(generator, kind=kind)``)
    variation_api : :class:`LLMVariationAPI` or None (``LLMVariationAPI(generator, kind=kind)``)
    kind : what a sample is, used in the default prompts (e.g. ``"food review"``)
    initial_labels : labels of given initial texts
    label_names : the public label list of a labelled run (``fit(texts, labels=y)``);
        default: the keys of a dict ``random_api.prompt``. Without a ``random_api``,
        S_0 is written per label from the generator's labelled
        :func:`~privevo.text.apis.default_prompt` (``{label}`` filled in), labels drawn with
        ``label_weights``
    label_weights : public label probabilities for S_0 (default uniform)
    lookahead : Aug-PE lookahead L (0 = off): candidates vote with the mean
        embedding of L variations (post-processing; costs L generations per candidate)
    n_neighbors : k votes per private text, 1/√k to each of its k nearest candidates
        (DPSDA's √k normalisation, the engine's ``n_neighbors``): L2 sensitivity 1,
        so ε is unchanged for any k (Gaussian noise only)
    threshold : DPSDA's ``histogram_threshold`` (None = off): noisy counts are
        lowered by it and clipped at 0 before selection (post-processing)
    keep_selected : next population [selected; variations] (True) or variations
        only, one more per parent (False)
    noise : noise of every release, as :class:`privevo.PrivateEvolution` (``"gaussian"``,
        ``"discrete_gaussian"``, ``"discrete_gaussian_secure"``)
    checkpoint : path of a checkpoint (:mod:`privevo.checkpoint`): every round
        is logged with the population's texts, so a killed run resumes after its
        last finished round with the same texts and the same ε
    random_state, progress, public_parameters : as :class:`privevo.PrivateEvolution`
        (``progress``: rounds and a texts/s bar for each generation call)

    Attributes
    ----------
    synthetic_texts_ : the m selected texts of the last round
    synthetic_labels_ : the label of the prompt each one descends from (or None)
    synthetic_ : their own embeddings
    privacy_report_ : the engine's report (:mod:`privevo.report`); no seed value
    round_seconds_ : per round: histogram, selection, generation, embedding seconds
        (rounds replayed from a checkpoint show 0); they grow with the number of private
        texts, so they are not for publication (docs/privacy.md)
    engine_ : the fitted :class:`privevo.PrivateEvolution`
    population_ : the :class:`TextPopulation`

    ``on_phase`` (an attribute, default None): a function called with each phase's public
    name as it starts, e.g. "embedding the private texts", "S_0: generating 40 texts",
    "round 2 of 3: counting the private votes" (counts of public texts only). With
    ``progress``, the phase is the label of a rounds bar that shows no duration.
    """

    on_phase: Callable[[str], None] | None = None

    _parameter_constraints: dict = {
        **{key: PrivateEvolution._parameter_constraints[key] for key in _ENGINE_KEYS},
        "embedder": [HasMethods(("embed",))],
        "selector": [StrOptions(selector_names(keeps_candidates=True)), Selector],
        "gape_R": [Interval(Real, 0, None, closed="neither")],
        "fill": ["boolean"],
        "kind": [str],
        "lookahead": [Interval(Integral, 0, None)],
        "threshold": [Interval(Real, 0, None), None],
        "keep_selected": ["boolean"],
    }

    def __init__(
        self,
        generator,
        embedder,
        *,
        n_synthetic: int,
        iterations: int,
        epsilon: float,
        delta: float,
        selector="rank",
        gape_R: float = 1.0,
        fill: bool = False,
        random_api=None,
        variation_api=None,
        kind: str = "text",
        initial_labels: Sequence | None = None,
        adjacency: str = "add_remove",
        lookahead: int = 0,
        n_neighbors: int = 1,
        threshold: float | None = None,
        keep_selected: bool = True,
        label_names: Sequence | None = None,
        label_weights: Sequence[float] | None = None,
        noise: str = "gaussian",
        checkpoint=None,
        random_state=None,
        progress: bool = False,
        public_parameters: dict | None = None,
    ):
        self.generator = generator
        self.embedder = embedder
        self.n_synthetic = n_synthetic
        self.iterations = iterations
        self.epsilon = epsilon
        self.delta = delta
        self.selector = selector
        self.gape_R = gape_R
        self.fill = fill
        self.random_api = random_api
        self.variation_api = variation_api
        self.kind = kind
        self.initial_labels = initial_labels
        self.adjacency = adjacency
        self.lookahead = lookahead
        self.n_neighbors = n_neighbors
        self.threshold = threshold
        self.keep_selected = keep_selected
        self.label_names = label_names
        self.label_weights = label_weights
        self.noise = noise
        self.checkpoint = checkpoint
        self.random_state = random_state
        self.progress = progress
        self.public_parameters = public_parameters

    def fit(
        self, texts: Sequence[str] | None = None, *, embeddings=None, labels=None
    ) -> "TextPrivateEvolution":
        """Embed the private ``texts`` (each alone, never cached) and run the engine loop on them.

        ``embeddings``: the private texts already embedded by ``embedder`` (n, d),
        each text alone (:meth:`SentenceEmbedder.embed_private`), e.g. to reuse
        them across runs; then ``texts`` may be None.

        ``labels``: the private label of each text (Aug-PE's class-conditional
        PE). Candidates are written per public label (``label_names``) and each
        private text votes only among its own label's candidates — still one
        histogram over all candidates with one vote per text, so the
        sensitivity and ε are unchanged (:mod:`privevo.text.labels`). A label
        outside the public list votes among all candidates.
        """
        if (texts is None) == (embeddings is None):
            raise ValueError(
                "pass exactly one of texts or embeddings (the private texts embedded by the same "
                "embedder)"
            )
        validate_params(
            self._parameter_constraints, constructor_params(self), "TextPrivateEvolution"
        )
        names = self._label_names()
        if labels is not None and names is None:
            raise ValueError(
                "a labelled fit needs the public label list: pass label_names=[...] or a "
                "random_api with one prompt per label"
            )
        if labels is not None:
            labels = list(labels)
            if texts is not None and len(labels) != len(texts):
                raise ValueError(LABELS_MISMATCH)
        population = self._population(names if labels is not None else None)
        phases = _Phases(self.on_phase)
        engine = self._engine_config(names if labels is not None else None).engine(
            population, self._selector(), phases
        )
        with warnings.catch_warnings():  # every parameter, before the data is read
            warnings.simplefilter("ignore")  # fit warns once more for epsilon=inf
            engine.check_params()
        with self._shown(phases, population):
            X = self._private_embeddings(texts, embeddings, phases)
            dim = X.shape[1]
            if labels is not None:
                X = with_labels(X, labels, names)
            from .llm import progress_bars

            phases.step = "S_0"
            with progress_bars(bool(self.progress)):
                engine.fit(X)
        chosen = engine.final_state_.selection.indices
        self.engine_, self.population_ = engine, population
        self.synthetic_texts_ = population.texts_of(chosen)
        self.synthetic_labels_ = population.labels_of(chosen)
        self.synthetic_ = (
            self.embedder.embed(self.synthetic_texts_)
            if self.lookahead
            else np.asarray(engine.synthetic_)[:, :dim]
        )
        self.privacy_report_ = with_seed_warning(engine.privacy_report_, self.random_state)
        self.history_ = engine.history_
        self.round_seconds_ = self._round_seconds(engine, population)
        self.validity_ = [population.initial_validity, *population.round_validity]
        return self

    @contextlib.contextmanager
    def _shown(self, phases: "_Phases", population: TextPopulation):
        """The run's phases shown on a bar with ``progress`` and handed to the population (its
        steps) for the duration of the fit; the engine announces its rounds to them."""
        phases.bar = _phase_bar(self.iterations) if self.progress else None
        population.announce = phases
        try:
            yield phases
        finally:
            del population.announce  # back to the class's no-op
            if phases.bar is not None:
                phases.bar.close()
            phases.bar = None

    def _private_embeddings(self, texts, embeddings, phases: _Phases) -> np.ndarray:
        """The private texts embedded (each alone, never cached), or the given embeddings."""
        if embeddings is not None:
            return check_points(embeddings, "embeddings")
        phases("embedding the private texts")
        return embed_private(self.embedder, texts)

    def _selector(self):
        """The named selector (GAPE keeps the population size when few pass its threshold),
        behind DPSDA's histogram threshold when one is set."""
        selector = make_selector(self.selector, R=self.gape_R, fill=bool(self.fill), refill=True)
        return selector if self.threshold is None else Thresholded(selector, self.threshold)

    def _engine_config(self, label_names: list | None) -> _EngineConfig:
        """The engine's settings; ``label_names``: those of a labelled fit, else None."""
        given = isinstance(self.random_api, (list, tuple))  # S_0 given: its size
        return _EngineConfig(
            **{key: getattr(self, key) for key in _ENGINE_KEYS[:-2]},
            n_neighbors=int(self.n_neighbors),
            population_size=len(self.random_api) if given else None,
            public_parameters={
                "embedder": repr(self.embedder),
                "kind": self.kind,
                **({"gape_R": self.gape_R} if str(self.selector).startswith("gape") else {}),
                "lookahead": self.lookahead,
                "n_neighbors": int(self.n_neighbors),
                "threshold": self.threshold,
                "keep_selected": bool(self.keep_selected),
                **(
                    {"label_names": [str(n) for n in label_names], "label_restricted_votes": True}
                    if label_names is not None
                    else {}
                ),
                **(self.public_parameters or {}),
            },
        )

    def _label_names(self) -> list | None:
        if self.label_names is not None:
            return check_label_names(self.label_names)
        prompt = getattr(self.random_api, "prompt", None)
        if isinstance(prompt, dict):
            return list(prompt)
        return None

    @property
    def non_private(self) -> bool:
        return self.epsilon == math.inf

    def _round_seconds(self, engine, population: TextPopulation) -> list[dict]:
        resumed = getattr(engine, "resumed_from_", 0)
        steps = population.round_seconds
        rows = []
        for t, record in enumerate(engine.history_):
            j = t - resumed
            phases = steps[j] if 0 <= j < len(steps) else {"generation": 0.0, "embedding": 0.0}
            rows.append(
                {
                    "round": t,
                    "histogram": record.seconds.get("histogram", 0.0),
                    "selection": record.seconds.get("selection", 0.0),
                    **phases,
                }
            )
        return rows

    def _population(self, label_names=None) -> TextPopulation:
        random_api = self.random_api
        if random_api is None:
            names = self._label_names()
            random_api = (
                LLMRandomAPI(self.generator, kind=self.kind)
                if names is None
                else LLMRandomAPI(
                    self.generator,
                    {name: default_prompt(self.generator, labelled=True) for name in names},
                    label_weights=self.label_weights,
                    kind=self.kind,
                )
            )
        if (
            label_names is not None
            and isinstance(random_api, LLMRandomAPI)
            and not isinstance(random_api.prompt, dict)
        ):
            raise ValueError(
                "a labelled fit needs candidates per label: give the random API one prompt per "
                "label (a dict), or leave random_api unset"
            )
        variation_api = (
            self.variation_api
            if self.variation_api is not None
            else LLMVariationAPI(self.generator, kind=self.kind)
        )
        return TextPopulation(
            random_api,
            variation_api,
            self.embedder,
            initial_labels=self.initial_labels,
            lookahead=self.lookahead,
            keep_selected=bool(self.keep_selected),
            label_names=label_names,
        )
