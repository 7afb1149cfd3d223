"""``TabularPE``: a DataFrame in, a DP synthetic DataFrame out (Tab-PE on the privevo engine).

The private table — in memory, a Parquet folder or a Dask DataFrame — is read
block by block (:mod:`privevo.private.frames`) and encoded under public metadata
(:func:`~privevo.tabular.encoding.encode_block`); every release counts it there
(:mod:`privevo.private`), one block in memory at a time. Rows come from
:class:`~privevo.tabular.apis.TabularRandomAPI` and
:class:`~privevo.tabular.apis.TabularVariationAPI`, selection is Tab-PE's schedule
(:class:`~privevo.tabular.apis.TabPESelection`) or any privevo selector. Everything
after the releases is post-processing (docs/tabular.md)::

    codes = encode(block) for every block       # per-row map under public metadata
    q_j   = noisy 1-way marginal of column j    # cell counts (share: marginal_share)
    F_j   = noisy tree levels of numeric j      # its values and noisy CDF (refine_share)
    pairs = C × (choose a pair/triple → its noisy table) → tree model (pair_share; adaptive)
          or noisy scores → spanning tree → noisy 2-way tables → tree model (tree, target)
    S_0   = rows from the tree model
    T rounds: noisy votes of the embedded rows over S_{t-1} → select → parents + children
    pool  = last candidates + tree-model rows, weights_ fitted (IPF) to every measurement
    grow  = pool_growth × (add variations of the rows n_rows draws would repeat → refit)
    sample(n) = n rows drawn systematically ∝ weights_ (PE's output is a multiset)

Every release takes the same ``noise`` (Gaussian, or the exact discrete Gaussian), and the
adaptive choices the exponential mechanism; a fit with them is accounted by zCDP. The
tree-model rows of the pool and ``sample()`` draw from a generator split off the seed before
any noise is drawn, so the noise generator's state never reaches the published rows.
"""

from __future__ import annotations

import math
import os
import warnings
from numbers import Integral, Real

import numpy as np

from .._params import constructor_params
from .._validation import (
    EPSILON_OR_INF,
    ROUNDS,
    RUN_CONSTRAINTS,
    Interval,
    StrOptions,
    check_positive_int,
    check_random_state,
    validate_params,
)
from ..evolution import PrivateEvolution
from ..exceptions import PrivacyLeakWarning
from ..private import NOISES, frame_source
from ..report import privacy_report, with_seed_warning
from ..selection import Selector, make_selector, selector_names
from .apis import RoundTagged, TabPESelection, TabularRandomAPI, TabularVariationAPI
from .encoding import NO_ROWS, TableEmbedding, decode_codes, encode_block, per_block
from .fine import spread_repeats
from .marginals import cell_sampler, cells_of, rake
from .measure import checked_delta, measure_fine, measure_marginals, measure_pairs, pool_constraints
from .metadata import TableMetadata, metadata_from_data
from .plan import default_delta, make_plan, population
from .pool import constraint_cells, grow_pool, pool_rows, systematic_draw
from .structure import without_empty

__all__ = ["TabularPE"]

GROW_MUTATION = 0.2  # mutation probability per cell of the pool's variations (one cell always)
GAPE_R = 1.0  # selector="gape": R, the embedding distance of two rows one category apart
_COMPOSED_KEYS = (
    "epsilon",
    "epsilon_target",
    "mu",
    "rho",
    "accountant",
    "releases",
    "dp_event",
    "mechanism",
)
_MECHANISM = (
    "noisy nearest-neighbour vote histograms (PE rounds) + noisy 1-way marginals"
    " + noisy tree levels of the numeric columns + {pairs}"
)
_PAIRS = {
    "adaptive": "exponential-mechanism choices of pairs and triples and their noisy tables",
    "tree": "noisy pair scores and 2-way marginals",
}
_LEAK_NOTE = (
    "metadata derived from the private data: the synthetic table is not differentially private"
)


class TabularPE:
    """Differentially private synthetic tables by Private Evolution (Tab-PE).

    Parameters
    ----------
    epsilon : total ε of the fit (> 0)
    delta : δ; None → :func:`privevo.accounting.default_delta` of the metadata's public
        ``n_rows`` (N^−1.1), else its fixed 1e-6, refused after the first release when the
        noisy row count shows the table too large for it (the exact row count is private
        under add/remove adjacency)
    metadata : :class:`TableMetadata`, a path to its JSON, a dict, or None (derived from
        the data with a :class:`PrivacyLeakWarning`; the report says the guarantee fails)
    iterations : T, the number of PE rounds; ``"auto"``: ⌊μ_PE²·N/60⌋ clipped to [1, 3]
        (μ_PE: the rounds' share of the budget, N the metadata's public ``n_rows``; else 2):
        each round keeps μ_round²·N ≥ 60, Tab-PE's per-round budget on adult (30 rounds,
        N ≈ 30 000, ε = 1)
    n_synthetic : m, rows selected per round, also ``sample()``'s default size; ``"auto"``:
        N/30 clipped to [50, 3000], N the metadata's public ``n_rows`` (else 300)
    variations : children per selected row (the population is m·(1 + variations))
    selector : ``"tabpe"`` (subsample, then rank), ``"rank"``, ``"subsample"``,
        ``"gape"`` (R = 1: two rows one category apart, a public constant of the embedding)
        or a selector object
    mutation : (start, end) of the per-column mutation probability schedule
    marginal_share : share of μ² spent on the 1-way marginals (0: none, pure Tab-PE);
        ``"auto"``: enough for each column's noise variance to be half the sampling
        variance of a bin with N/B rows, σ_m² = N/(2B) (N the public ``n_rows``), i.e.
        share = 2B·C·Δ²/(μ²·N), clipped to [0.5, 0.9] (0.5 without ``n_rows``)
    target : None or the name of a categorical label column (public): the PE votes are
        class-conditional, as Tab-PE's per-label populations — the target's embedding block
        is scaled by √C (C columns), so its squared distance C exceeds the at most C − 1 of
        all other columns together and every private row votes for a candidate of its own
        class; children keep their parent's class. Same histogram, same sensitivity.
    bins : equal-width bins of a numeric column's public domain in its marginal
    refine_share : share of μ² spent on the numeric columns' finer tree levels (0: none;
        values then uniform inside the ``bins``); :mod:`privevo.tabular.fine`
    levels : refinement levels of a non-integer (or wide integer) column: bins·8^levels leaves
    cdf : the PE rounds vote and mutate numerics in their noisy-CDF space (needs refine_share)
    pair_share : share of the budget spent on pairs (0: none): adaptive, a tenth on the C
        choices and the rest on the chosen tables; tree, a quarter on dependence scores of
        every pair and the rest on the 2-way marginals of their maximum spanning tree
        (:mod:`privevo.tabular.pairs`). The marginals and rounds split what is left
    pair_bins : equal-mass bins of a numeric column in the pair tables
    pair_selection : ``"adaptive"`` (AIM's: C rounds, each choosing a pair or a dense triple
        by the exponential mechanism against the current model; :mod:`privevo.tabular.adaptive`;
        accounted by zCDP) or ``"tree"`` (MST's: the scores' maximum spanning tree, measured
        once). With a ``target``, its C − 1 tables are measured first, then either
    pool : rows of the output pool (0: Tab-PE's output, the last candidates weighted by
        their votes above ``threshold``·σ, raked to the marginals if ``rake``, each cell
        redrawn from its marginal with probability ``smooth`` in ``sample``)
    pool_growth : passes that add PE variations of the pool rows a draw of the public
        ``n_rows`` would repeat, refitting the pool each time (0: none; "Duplicate rows")
    adjacency : ``"add_remove"`` or ``"replace"``
    noise : ``"gaussian"``, ``"discrete_gaussian"`` or ``"discrete_gaussian_secure"``: the noise
        of every release (votes, marginals, tree levels, pair scores and tables), as
        :class:`privevo.PrivateEvolution`'s; the discrete ones are accounted by zCDP, the budget
        B = 2ρ(ε, δ) split in the same shares (docs/privacy.md, "Accounting"); ``_secure``
        draws it from the operating system's CSPRNG
    accountant : a :class:`privevo.BudgetAccountant`; checked before any data access
    random_state : None, int or ``numpy.random.Generator``

    Attributes
    ----------
    metadata_ : the metadata used; population_ : DataFrame of the output pool (or the
    last round's candidates); weights_ : their weights; n_synthetic_ : m; privacy_report_ ;
    engine_ : the fitted :class:`privevo.PrivateEvolution` (its ``history_`` holds every
    round's candidates and noisy votes); marginal_counts_ : the noisy 1-way marginals
    (per column, over :func:`~privevo.tabular.marginals.cell_candidates`); embedding_ ;
    marginal_share_, iterations_ : the share and T used; pe_embedding_ : the PE rounds'
    embedding (``embedding_`` unless ``target`` is set)
    """

    _parameter_constraints: dict = {
        **RUN_CONSTRAINTS,
        "epsilon": EPSILON_OR_INF,
        "delta": [*RUN_CONSTRAINTS["delta"], None],
        "metadata": [TableMetadata, dict, str, os.PathLike, None],
        "iterations": [
            *ROUNDS,
            StrOptions({"auto"}),
        ],
        "n_synthetic": [Interval(Integral, 1, None), StrOptions({"auto"})],
        "variations": [Interval(Integral, 1, None)],
        "selector": [StrOptions({"tabpe", *selector_names(keeps_candidates=True)}), Selector],
        "mutation": ["array-like"],  # a pair of probabilities: _check_mutation
        "threshold": [Interval(Real, 0, None)],
        "marginal_share": [Interval(Real, 0, 1, closed="left"), StrOptions({"auto"})],
        "target": [str, None],
        "bins": [Interval(Integral, 1, None)],
        "refine_share": [Interval(Real, 0, 1, closed="left")],
        "levels": [Interval(Integral, 0, None)],
        "cdf": ["boolean"],
        "pair_share": [Interval(Real, 0, 1, closed="left")],
        "pair_bins": [Interval(Integral, 2, None)],
        "pair_selection": [StrOptions({"tree", "adaptive"})],
        "rake": ["boolean"],
        "smooth": [Interval(Real, 0, 1)],
        "pool": [Interval(Integral, 0, None)],
        "pool_growth": [Interval(Integral, 0, None)],
        "noise": [StrOptions(set(NOISES))],
        "progress": ["boolean"],
    }

    def __init__(
        self,
        epsilon: float = 1.0,
        delta: float | None = None,
        metadata=None,
        *,
        iterations="auto",
        n_synthetic="auto",
        variations: int = 2,
        selector="tabpe",
        mutation: tuple[float, float] = (0.5, 0.01),
        threshold: float = 1.0,
        marginal_share="auto",
        target: str | None = None,
        bins: int = 10,
        refine_share: float = 0.15,
        levels: int = 2,
        cdf: bool = True,
        pair_share: float = 0.3,
        pair_bins: int = 10,
        pair_selection: str = "adaptive",
        rake: bool = True,
        smooth: float = 0.0,
        pool: int = 50_000,
        pool_growth: int = 3,
        adjacency: str = "add_remove",
        noise: str = "gaussian",
        accountant=None,
        random_state=None,
        progress: bool = False,
    ):
        self.epsilon = epsilon
        self.delta = delta
        self.metadata = metadata
        self.iterations = iterations
        self.n_synthetic = n_synthetic
        self.variations = variations
        self.selector = selector
        self.mutation = mutation
        self.threshold = threshold
        self.marginal_share = marginal_share
        self.target = target
        self.bins = bins
        self.refine_share = refine_share
        self.levels = levels
        self.cdf = cdf
        self.pair_share = pair_share
        self.pair_bins = pair_bins
        self.pair_selection = pair_selection
        self.rake = rake
        self.smooth = smooth
        self.pool = pool
        self.pool_growth = pool_growth
        self.adjacency = adjacency
        self.noise = noise
        self.accountant = accountant
        self.random_state = random_state
        self.progress = progress

    # -- public API ---------------------------------------------------------

    def fit(self, df, y=None) -> "TabularPE":
        """Run T rounds against the private table ``df``: a pandas DataFrame, a Parquet file or
        folder of them, or a Dask DataFrame. Every release counts the table block by block
        (:mod:`privevo.private.frames`): one block in memory at a time, and the same output and
        report as the table in memory."""
        metadata, delta = self._check_params()  # public inputs only: df is not read yet
        if self.accountant is not None:
            self.accountant.check(epsilon=self.epsilon, delta=delta, name="TabularPE")
        rows = frame_source(df)
        if metadata is None:
            metadata = metadata_from_data(_in_memory(rows))
        _check_target(self.target, metadata)
        plan = self.plan_ = make_plan(constructor_params(self), metadata, delta)  # public only
        self.shares_, self.marginal_share_ = plan.shares, plan.marginal_share
        self.iterations_ = plan.iterations
        rng = check_random_state(self.random_state)
        self._publish_rng = _split_off(rng)  # before any noise: the published rows' generator
        embedding = TableEmbedding(metadata)
        codes = _validated_codes(rows, metadata)
        marginals = measure_marginals(codes, embedding, plan, rng)
        delta = checked_delta(delta, marginals, self.accountant)
        marginals = without_empty(marginals, metadata)  # 'may be empty': post-processing
        fine = measure_fine(codes, metadata, marginals, plan, rng)
        pairs = measure_pairs(codes, metadata, marginals, fine, plan, rng, self.target)
        pe_embedding = self._pe_embedding(metadata, fine) or embedding
        engine = self._engine(pe_embedding, metadata, delta, rng, marginals, fine, pairs)
        try:
            engine.fit(per_block(codes, pe_embedding.embed, pe_embedding.dim))
        except ValueError:  # a defaulted δ refused after the first round: that round is charged
            if self.accountant is not None and getattr(engine, "releases_", None):
                self.accountant.charge(list(engine.releases_), name="TabularPE")
            raise
        self._finish(engine, embedding, metadata, marginals, delta, fine, pairs)
        if self.accountant is not None:
            self.accountant.charge(self.privacy_report_, name="TabularPE")
        return self

    def sample(self, n: int | None = None, random_state=None):
        """``n`` rows (default ``n_synthetic``) drawn ∝ ``weights_`` from the final population."""
        if not hasattr(self, "weights_"):
            raise ValueError("this TabularPE is not fitted yet; call fit(df) first")
        n = self.n_synthetic_ if n is None else check_positive_int(n, "n")
        rng = check_random_state(random_state) if random_state is not None else self._sample_rng
        codes = self._spread(self.codes_[self._draw(n, rng)], rng)
        if self.smooth > 0 and self.samplers_:
            for j, spec in enumerate(self.metadata_.columns):
                rows = np.flatnonzero(rng.random(n) < self.smooth)
                codes[rows, j] = self.samplers_[spec.name](len(rows), rng)
        return decode_codes(codes, self.metadata_)

    # -- internals ----------------------------------------------------------

    def _check_params(self) -> tuple[TableMetadata | None, float]:
        """The declared constraints (:func:`privevo._validation.validate_params`), then the two
        they cannot state: the mutation pair, and refinements and pairs leaving a share."""
        validate_params(self._parameter_constraints, constructor_params(self), "TabularPE")
        _check_mutation(self.mutation)
        if self.refine_share + self.pair_share >= 1:
            raise ValueError(
                "refine_share + pair_share must be < 1 (the marginals and rounds need a share), "
                f"got {self.refine_share + self.pair_share!r}"
            )
        metadata = _as_metadata(self.metadata)
        return metadata, default_delta(self.delta, metadata)

    def _pe_embedding(self, metadata: TableMetadata, fine=None) -> TableEmbedding | None:
        """The PE rounds' embedding: the target's block scaled by √C, numerics through their
        noisy CDF (``cdf`` with refinements); None: the plain embedding."""
        transforms = fine["columns"] if fine is not None and self.cdf else {}
        if self.target is None:
            return TableEmbedding(metadata, transforms=transforms) if transforms else None
        weights = {self.target: math.sqrt(len(metadata.columns))}
        return TableEmbedding(metadata, weights, transforms=transforms)

    def _engine(
        self,
        embedding: TableEmbedding,
        metadata: TableMetadata,
        delta: float,
        rng,
        marginals,
        fine=None,
        pairs=None,
    ):
        samplers = None
        if marginals is not None:
            samplers = {
                spec.name: cell_sampler(spec, self.bins, p)
                for spec, p in zip(metadata.columns, marginals["targets"])
            }
        if fine is not None:
            samplers.update({name: c.sample_codes for name, c in fine["samplers"].items()})
        joint = None if pairs is None else pairs["model"].sample_codes
        random_api = TabularRandomAPI(embedding, samplers=samplers, joint=joint)
        start, end = self.mutation
        variation = TabularVariationAPI(
            random_api,
            per_point=self.variations,
            start=start,
            end=end,
            fixed=() if self.target is None else (self.target,),
        )
        m = self.n_synthetic_ = population(self.n_synthetic, metadata)
        return PrivateEvolution(
            random_api,
            variation,
            _make_selector(self.selector),
            m,
            self.iterations_,
            self.epsilon,
            delta,
            self.adjacency,
            rng,
            population_size=m * (1 + self.variations),
            progress=self.progress,
            noise=self.noise,
            noise_scale=self.plan_.pe_sigma(),
            public_parameters={
                "metadata": metadata.as_dict(),
                "embedding": repr(embedding),
                "variations": self.variations,
                "threshold_sigmas": self.threshold,
                "marginal_share": self.marginal_share_,
                "iterations": self.iterations_,
                "target": self.target,
                "bins": self.bins,
                "rake": self.rake,
                "shares": self.shares_,
                "levels": self.levels,
                "cdf": self.cdf,
                "pair_bins": self.pair_bins,
                "pair_selection": self.plan_.pair_selection,
                "pairs": None
                if pairs is None
                else [[metadata.names[a], metadata.names[b]] for a, b in pairs["edges"]],
            },
        )

    def _finish(
        self,
        engine: PrivateEvolution,
        embedding: TableEmbedding,
        metadata: TableMetadata,
        marginals: dict | None,
        delta: float,
        fine=None,
        pairs=None,
    ) -> None:
        self.fine_, self.pairs_, self.metadata_ = fine, pairs, metadata
        codes, weights = self._output(engine, engine.random_api.embedding, marginals)
        self.engine_, self.metadata_, self.codes_, self.weights_ = engine, metadata, codes, weights
        self.samplers_ = engine.random_api.samplers
        self.embedding_ = embedding
        self.pe_embedding_ = engine.random_api.embedding  # the rounds' (target-weighted) space
        self.marginal_counts_ = (
            None if marginals is None else marginals["noisy"]
        )  # the DP release itself
        self.population_ = decode_codes(codes, metadata)
        self.history_ = engine.history_
        self._sample_rng = self._publish_rng  # after the pool's draws: never the noise's
        report = dict(engine.privacy_report_)
        if (
            marginals is not None
        ):  # the engine's report, its privacy figures recomputed with the marginals
            composed = privacy_report(
                epsilon_target=self.epsilon,
                delta=delta,
                adjacency=self.adjacency,
                releases=[*report["releases"], *self._releases(marginals)],
                noise=self.noise,
                mechanism=_MECHANISM.format(pairs=_PAIRS[self.plan_.pair_selection]),
                public_parameters=report["public_parameters"],
                warnings=report["warnings"],
            )
            report.update({k: composed[k] for k in _COMPOSED_KEYS if k in composed})
        if metadata.derived_from_data:
            report.update(guarantee_holds=False, warnings=[*report["warnings"], _LEAK_NOTE])
        if pairs is not None:
            self.relations_ = _relations(metadata, pairs, self.target)
            unresolved = _unresolved(self.relations_, self.target, self.epsilon)
            report.update(relations=self.relations_, warnings=[*report["warnings"], *unresolved])
            for note in unresolved:
                warnings.warn(note, UserWarning, stacklevel=3)
        self.privacy_report_ = with_seed_warning(report, self.random_state)  # not the engine's

    def _releases(self, marginals: dict) -> list:
        out = [marginals["release"]]
        if self.fine_ is not None and self.fine_["release"] is not None:
            out.append(self.fine_["release"])
        if self.pairs_ is not None:
            out.extend(self.pairs_["releases"])
        return out

    def _output(self, engine: PrivateEvolution, embedding: TableEmbedding, marginals: dict | None):
        """(codes, weights) of the output: the fitted pool, or the last candidates' votes."""
        codes = embedding.decode(engine.final_state_.population)
        if marginals is not None and self.pool > 0:
            codes = np.vstack([codes, pool_rows(engine.random_api, self.pool, self._publish_rng)])
            rounds = [(r.candidates, r.noisy_counts) for r in engine.history_]
            return self._fit_pool(engine.random_api, embedding, marginals, codes, rounds)
        last = engine.history_[-1]
        weights = np.where(last.noisy_counts > self.threshold * last.sigma, last.noisy_counts, 0.0)
        if not weights.sum() > 0:  # nothing above the threshold: the positive votes, else uniform
            weights = np.clip(last.noisy_counts, 0.0, None)
            weights = weights if weights.sum() > 0 else np.ones(len(codes))
        if marginals is not None and self.rake:
            weights = rake(weights, cells_of(codes, embedding, self.bins), marginals["targets"])
        return codes, weights

    def _fit_pool(self, random_api, embedding, marginals: dict, codes: np.ndarray, rounds: list):
        """The pool grown where a draw of the public ``n_rows`` would repeat rows, and its
        weights fitted to every measurement (:func:`~privevo.tabular.pool.grow_pool`)."""

        def constraints(rows: np.ndarray):
            extra = pool_constraints(rows, self.metadata_, self.bins, self.fine_, self.pairs_)
            return constraint_cells(rows, embedding, self.bins, marginals["targets"], rounds, extra)

        mutate = TabularVariationAPI(random_api).mutate
        return grow_pool(
            codes,
            constraints,
            lambda rows, rng: mutate(rows, GROW_MUTATION, rng),
            self._spread,
            self.metadata_.n_rows or self.n_synthetic_,  # public: what a user draws by default
            self._publish_rng,
            passes=self.pool_growth,
        )

    def _draw(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """Pool indices of ``n`` rows ∝ ``weights_`` (:func:`.pool.systematic_draw`)."""
        return systematic_draw(self.weights_, n, rng)

    def _spread(self, codes: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return spread_repeats(codes, self.metadata_, self.fine_, self.pairs_, rng)


def _relations(metadata: TableMetadata, pairs: dict, target: str | None) -> list[dict]:
    """Every measured 2-way table's public σ and signal-to-noise estimate
    (:func:`~privevo.tabular.measure.signal_to_noise`: post-processing of the release)."""
    names = metadata.names
    return [
        {"columns": [names[a], names[b]], "sigma": sigma, "signal_to_noise": round(snr, 3)}
        for (a, b), sigma, snr in zip(pairs["edges"], pairs["sigmas"], pairs["signal_to_noise"])
    ]


def _unresolved(relations: list[dict], target: str | None, epsilon: float) -> list[str]:
    """One warning per relation of the target whose table is within noise (estimate ≤ 1)."""
    return [
        f"at epsilon={epsilon:g} the released table of {r['columns'][0]!r} × {r['columns'][1]!r}"
        f" cannot tell their relation from independence (signal-to-noise"
        f" {r['signal_to_noise']:.2f} ≤ 1): its sign in the synthetic rows may be wrong;"
        " raise epsilon or declare fewer columns"
        for r in relations
        if target in r["columns"] and r["signal_to_noise"] <= 1
    ]


def _split_off(rng: np.random.Generator) -> np.random.Generator:
    """A child generator for the published rows, split off before any noise is drawn: spawned
    from the run's SeedSequence (the parent's stream is unchanged), else seeded by one draw.

    It reproduces from the seed whatever the noise (``discrete_gaussian_secure`` included), and
    the noise generator's later state — e.g. how many draws a rejection sampler took — never
    reaches it."""
    try:
        return rng.spawn(1)[0]
    except TypeError:  # a bit generator without a spawnable SeedSequence
        return np.random.default_rng(rng.integers(0, 2**63, size=4))


def _in_memory(rows):
    """The whole table, for metadata read off the data (in-memory DataFrames only)."""
    df = rows.in_memory()
    if df is None:
        raise ValueError(
            "metadata=None reads the domains off the data, which needs the table in memory; "
            "give public metadata for a Parquet folder or a Dask DataFrame"
        )
    return df


def _validated_codes(rows, metadata: TableMetadata):
    """The table's codes (a source of code blocks), after one pass that validates every block
    and refuses a table without rows (before any release). A nullable column missing in every
    row is valid input (the metadata says so): its releases count every row as missing."""
    seen = False
    for offset, frame in rows.frames():
        encode_block(frame, metadata, offset)
        seen = True
    if not seen:
        raise ValueError(NO_ROWS)
    return rows.map(
        lambda frame, offset: encode_block(frame, metadata, offset), len(metadata.columns)
    )


def _check_target(target: str | None, metadata: TableMetadata) -> None:
    """A declared target is a categorical or boolean column (public; before any release)."""
    if target is not None and (target not in metadata.names or metadata[target].is_numeric):
        raise ValueError(
            f"target {target!r} must be a categorical or boolean column of the metadata "
            f"(columns: {list(metadata.names)})"
        )


def _check_mutation(mutation) -> tuple[float, float]:
    try:
        start, end = (float(v) for v in mutation)
    except (TypeError, ValueError):
        raise ValueError(
            f"mutation must be a pair (start, end) of probabilities, got {mutation!r}"
        ) from None
    if not (0 < end <= 1 and 0 < start <= 1):
        raise ValueError(f"mutation probabilities must be in (0, 1], got {mutation!r}")
    return start, end


def _as_metadata(metadata) -> TableMetadata | None:
    if metadata is None or isinstance(metadata, TableMetadata):
        if metadata is not None and metadata.derived_from_data:
            warnings.warn(_LEAK_NOTE, PrivacyLeakWarning, stacklevel=4)
        return metadata
    if isinstance(metadata, dict):
        return _as_metadata(TableMetadata.from_dict(metadata))
    return _as_metadata(TableMetadata.from_json(metadata))


def _make_selector(selector):
    """Tab-PE's schedule (``"tabpe"``), else a registry selector (GAPE: R = ``GAPE_R``, keeping
    the population size) or the given object, tagged with the round its variation API needs."""
    if selector == "tabpe":
        return TabPESelection()
    return RoundTagged(make_selector(selector, R=GAPE_R, refill=True))
