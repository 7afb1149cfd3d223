"""Releases: the only place privevo draws noise, each returned as a frozen :class:`Release`.

A mechanism and its privacy map travel together (as OpenDP's measurements):
every function here computes an exact statistic through a :class:`Source`,
adds noise of one kind (:func:`release_noise`, the one noise choice) and
returns a :class:`Release` naming the mechanism, its noise scale, its
sensitivity under the stated adjacency, and — as a ``dp_accounting`` event,
like Google's ``dp_event.py`` — its cost. Reports (:mod:`privevo.report`) are
built from the list of releases a run made and nothing else; σ is calibrated
in one function (:func:`calibrate`, :mod:`privevo.accounting`).

Sensitivities (L2 unless noted; add/remove → replace):

* vote histogram: 1 → √2 (every vote mode, :mod:`.votes`);
* per-cluster sums of rows clipped to radius r: r → 2r; counts: 1 → √2;
* second moment Σx̄x̄ᵀ, upper triangle: r² → √2·r² (Dwork et al., STOC 2014);
* row count: 1 (add/remove only: under replace n is public);
* the discrete noises round real values to a lattice of step γ first, which
  adds γ·√k (:func:`lattice_sensitivity`).
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass, field
from typing import Callable, Iterator

import numpy as np

from .._validation import not_positive
from ..accounting import (
    calibrate,
    discrete_gaussian_dp_event,
    dp_event,
    quadratic_budget,
    share_sigma,
)
from ..adjacency import check_adjacency
from ..names import NOISES
from .kernel import prepare_candidates
from .sources import as_source, nn_histogram
from .votes import vote_sensitivity

__all__ = [
    "Release",
    "ExactStatistic",
    "observing_exact_statistics",
    "NOISES",
    "calibrate",
    "quadratic_budget",
    "share_sigma",
    "release_noise",
    "lattice_step",
    "lattice_sensitivity",
    "noisy_nn_histogram",
    "exact_nn_histogram",
    "noisy_cluster_sums",
    "cluster_sums_sensitivity",
    "second_moment_sensitivity",
    "noisy_second_moment",
    "noisy_count",
    "noisy_statistic",
]


@dataclass(frozen=True)
class Release:
    """One noisy release: what was published, with how much noise, at what sensitivity.

    ``sigma`` is the noise scale (Gaussian σ, the discrete Gaussian's σ, the
    Laplace scale b); ``sensitivity`` is L2 for the Gaussian noises and L1 for
    ``"laplace"``/``"geometric"``; ``count`` identical releases are one entry.
    ``noise="none"`` marks an exact (non-private) release. ``value`` is the
    released array (public once drawn); it is left out of ``repr``/``==``.
    """

    name: str
    sigma: float
    sensitivity: float
    noise: str = "gaussian"
    adjacency: str = "add_remove"
    count: int = 1
    value: object = field(default=None, repr=False, compare=False)

    @property
    def mu(self) -> float | None:
        """μ of its Gaussian-DP cost, √count·Δ/σ (continuous Gaussian noise only)."""
        return (
            math.sqrt(self.count) * self.sensitivity / self.sigma
            if self.noise == "gaussian"
            else None
        )

    @property
    def rho(self) -> float | None:
        """ρ of its zCDP cost, count·Δ²/(2σ²) (Gaussian and discrete Gaussian noise). The
        exponential mechanism with Gumbel scale σ = 2Δ/ε is ε-bounded-range, hence
        ε²/8 = Δ²/(2σ²)-zCDP (Cesar & Rogers, ALT 2021): the same formula."""
        if self.noise in ("gaussian", "exponential") or self.noise.startswith("discrete_gaussian"):
            return self.count * self.sensitivity**2 / (2.0 * self.sigma**2)
        return None

    @property
    def selection_epsilon(self) -> float | None:
        """ε of one exponential-mechanism choice, 2Δ/σ (σ its Gumbel scale; else None)."""
        return 2.0 * self.sensitivity / self.sigma if self.noise == "exponential" else None

    @property
    def pure_epsilon(self) -> float | None:
        """ε of pure DP, count·Δ₁/b (Laplace and geometric noise only)."""
        return (
            self.count * self.sensitivity / self.sigma
            if self.noise in ("laplace", "geometric")
            else None
        )

    def dp_event(self):
        """The release as a ``dp_accounting`` event (self-composed ``count`` times)."""
        import dp_accounting as dpa

        if self.noise == "gaussian":
            return dp_event(self.sigma, self.count, self.sensitivity)
        if self.noise.startswith("discrete_gaussian"):
            return discrete_gaussian_dp_event(self.sigma, self.count, self.sensitivity)
        if self.noise == "laplace":
            event = dpa.LaplaceDpEvent(noise_multiplier=self.sigma / self.sensitivity)
        elif self.noise == "exponential":  # ε-bounded range: ε²/8-zCDP, as self.rho
            event = dpa.ZCDpEvent(rho=self.selection_epsilon**2 / 8.0)
        elif self.noise == "geometric":  # P(z) ∝ exp(−|z|/b): the discrete Laplace, a = 1/b
            event = dpa.dp_event.DiscreteLaplaceDpEvent(
                noise_parameter=1.0 / self.sigma, sensitivity=int(math.ceil(self.sensitivity))
            )
        else:
            event = dpa.NonPrivateDpEvent()
        return dpa.SelfComposedDpEvent(event, int(self.count))

    def entry(self) -> dict:
        """The release as a report's ``releases`` entry (JSON; no value)."""
        entry = {
            "name": self.name,
            "sigma": float(self.sigma),
            "count": int(self.count),
            "sensitivity": None if self.noise == "none" else float(self.sensitivity),
        }
        if self.noise != "gaussian":
            entry["noise"] = self.noise
        return entry

    @classmethod
    def from_entry(cls, entry: dict, adjacency: str, value=None) -> "Release":
        """The release an ``entry()`` describes (a checkpoint replays its ledger this way)."""
        return cls(
            entry["name"],
            float(entry["sigma"]),
            float(entry["sensitivity"] or 0.0),
            entry.get("noise", "gaussian"),
            adjacency,
            int(entry["count"]),
            value,
        )


# -- noise -------------------------------------------------------------------------------


def _gaussian_noise(values: np.ndarray, sigma: float, rng: np.random.Generator) -> np.ndarray:
    return values + rng.normal(0.0, sigma, size=values.shape)


def _discrete_gaussian_noise(values: np.ndarray, sigma: float, rng) -> np.ndarray:
    """values + exact N_Z(0, σ²) (:mod:`.noise`): integer-valued, returned as float64 (exact)."""
    from .noise import discrete_gaussian

    return (values + discrete_gaussian(sigma, values.shape, rng)).astype(np.float64)


def _discrete_gaussian_secure_noise(values: np.ndarray, sigma: float, rng) -> np.ndarray:
    """As ``discrete_gaussian`` but from the OS CSPRNG (``secrets.SystemRandom``); ``rng`` is not
    used."""
    import secrets

    return _discrete_gaussian_noise(values, sigma, secrets.SystemRandom())


def _laplace_noise(values: np.ndarray, scale: float, rng: np.random.Generator) -> np.ndarray:
    return values + rng.laplace(0.0, scale, size=values.shape)


def _gumbel_noise(values: np.ndarray, scale: float, rng: np.random.Generator) -> np.ndarray:
    """values + Gumbel(0, b) noise: the argmax of the result is the exponential mechanism's
    choice at ε = 2Δ/b (the Gumbel-max trick; :func:`.tables.exponential_choice`)."""
    return values + rng.gumbel(0.0, scale, size=values.shape)


def _gumbel_secure_noise(values: np.ndarray, scale: float, rng) -> np.ndarray:
    """As ``exponential`` but from the OS CSPRNG (``secrets.SystemRandom``): −b·log(−log U)."""
    import secrets

    system = secrets.SystemRandom()
    uniform = np.array([system.random() for _ in range(values.size)]).reshape(values.shape)
    uniform = np.clip(uniform, np.finfo(float).tiny, 1.0 - np.finfo(float).eps)
    return values - scale * np.log(-np.log(uniform))


def _geometric_noise(values: np.ndarray, scale: float, rng: np.random.Generator) -> np.ndarray:
    """values + two-sided geometric noise P(z) ∝ exp(−|z|/b) (the discrete Laplace)."""
    p = 1.0 - math.exp(-1.0 / scale)
    return values + (rng.geometric(p, values.shape) - rng.geometric(p, values.shape)).astype(float)


_NOISES: dict[str, Callable] = {
    "gaussian": _gaussian_noise,
    "discrete_gaussian": _discrete_gaussian_noise,  # accounted by zCDP: privevo.accounting
    "discrete_gaussian_secure": _discrete_gaussian_secure_noise,
    "laplace": _laplace_noise,  # pure ε-DP (the DPLloyd baseline)
    "geometric": _geometric_noise,
    "exponential": _gumbel_noise,  # a choice's scores only: their argmax is released
    "exponential_secure": _gumbel_secure_noise,
}
_INTEGER_NOISES = ("discrete_gaussian", "discrete_gaussian_secure", "geometric")


def check_noise(noise: str) -> str:
    if noise not in _NOISES:
        raise ValueError(f"noise must be one of {sorted(_NOISES)}, got {noise!r}")
    return noise


def lattice_step(scale: float) -> float:
    """γ = scale·2⁻²⁰: the lattice real-valued releases are rounded to before discrete noise."""
    return float(scale) * 2.0**-20


def lattice_sensitivity(sensitivity: float, scale: float, n_values: int) -> float:
    """Δ + γ·√k: the L2 sensitivity of k values rounded to the lattice γℤ, γ = lattice_step(scale).

    Rounding moves each value by at most γ/2, so two neighbours' rounded
    releases differ by at most Δ + 2·(γ/2)·√k.
    """
    return float(sensitivity) + lattice_step(scale) * math.sqrt(n_values)


def release_noise(
    values: np.ndarray,
    sigma: float,
    rng: np.random.Generator,
    noise: str = "gaussian",
    granularity: float = 1.0,
) -> np.ndarray:
    """values + noise of kind ``noise`` (the one noise choice of every release).

    ``"gaussian"``/``"laplace"``: continuous noise per value. The integer
    noises round the values to the lattice γℤ (γ = ``granularity``; exact for
    integer counts with γ = 1) and add γ·Z, Z integer noise of scale σ/γ, so
    the output never carries the low bits of the exact values (Mironov 2012).
    """
    add_noise = _NOISES[check_noise(noise)]
    values = np.asarray(values, dtype=np.float64)
    if noise not in _INTEGER_NOISES:
        return add_noise(values, float(sigma), rng)
    lattice = np.rint(values / granularity)
    return add_noise(lattice, float(sigma) / granularity, rng) * granularity


# -- the sensitivity seam -----------------------------------------------------------------


@dataclass(frozen=True)
class ExactStatistic:
    """A release's exact statistic, before noise, with the sensitivity its release declares.

    ``parts`` are the separately accounted vectors of one release (a release of
    ``count=K`` histograms has K parts, of P dependence scores P scalars); each
    may move by at most ``sensitivity`` in ``norm`` (``"l2"``, or ``"l1"`` for
    Laplace and geometric noise) between neighbours under ``adjacency``. Only
    :func:`observing_exact_statistics` sees these objects: the sensitivity replay
    (docs/privacy.md, "How the checks work") compares them on D and D′. They are
    private, never stored and never published.
    """

    name: str
    parts: tuple
    sensitivity: float
    norm: str
    adjacency: str


_OBSERVERS: list[Callable[[ExactStatistic], None]] = []


@contextlib.contextmanager
def observing_exact_statistics(observer: Callable[[ExactStatistic], None]) -> Iterator[None]:
    """Call ``observer`` with the :class:`ExactStatistic` of every release made inside the block.

    In-process only (a test harness): the statistics are exact private values.
    """
    _OBSERVERS.append(observer)
    try:
        yield
    finally:
        _OBSERVERS.remove(observer)


def observe_exact(name: str, parts, sensitivity: float, noise: str, adjacency: str) -> None:
    """Show every observer the exact ``parts`` of release ``name`` (no-op without observers).

    Every release function calls this with the statistic it is about to noise;
    ``tests/private/test_boundary.py`` checks that each caller of
    :func:`release_noise` inside the boundary does.
    """
    if not _OBSERVERS:
        return
    statistic = ExactStatistic(
        name,
        tuple(np.array(part, dtype=np.float64, copy=True) for part in parts),
        float(sensitivity),
        "l1" if noise in ("laplace", "geometric") else "l2",
        adjacency,
    )
    for observer in list(_OBSERVERS):
        observer(statistic)


def _check_release(rng, adjacency: str, **positive) -> None:
    """A release needs an explicit Generator, a known adjacency and finite, positive scales."""
    if not isinstance(rng, np.random.Generator):
        raise ValueError(
            "rng must be a numpy.random.Generator; seed one with numpy.random.default_rng(seed)"
        )
    check_adjacency(adjacency)
    for name, value in positive.items():
        if not (
            isinstance(value, (int, float, np.floating)) and value > 0 and math.isfinite(value)
        ):
            raise not_positive(name, repr(value))


def noisy_statistic(
    name: str,
    values,
    sigma: float,
    sensitivity: float,
    rng: np.random.Generator,
    noise: str = "gaussian",
    adjacency: str = "add_remove",
    granularity: float = 1.0,
    per_value: bool = False,
) -> Release:
    """A :class:`Release` of an exact statistic computed inside this package (e.g. the baselines').

    The caller states the statistic's sensitivity under ``adjacency``; the
    noise kind, the lattice and the record are the same as for every release.
    ``per_value=True``: each value is its own release of that sensitivity
    (``count`` = the number of values), as P dependence scores are.
    """
    _check_release(rng, adjacency, sigma=sigma, sensitivity=sensitivity)
    values = np.asarray(values, dtype=np.float64)
    parts = values.reshape(-1, 1) if per_value else (values,)
    observe_exact(name, parts, sensitivity, noise, adjacency)
    noisy = release_noise(values, sigma, rng, noise, granularity)
    count = values.size if per_value else 1
    return Release(name, float(sigma), float(sensitivity), noise, adjacency, count, noisy)


# -- the releases of PE and DP k-means ---------------------------------------------------


def noisy_nn_histogram(
    private,
    candidates,
    sigma: float,
    rng: np.random.Generator,
    noise: str = "gaussian",
    backend: str = "auto",
    chunk_size: int | None = None,
    metric: str = "euclidean",
    n_neighbors: int = 1,
    groups=None,
    adjacency: str = "add_remove",
) -> Release:
    """Vote counts + noise per count: PE's release (sensitivity 1 add/remove, √2 replace).

    ``rng`` must be an explicit ``numpy.random.Generator``; noise is drawn once
    for the whole histogram, after the (possibly distributed) exact count.
    k-neighbour and user-level votes are real-valued and take Gaussian noise only.
    """
    _check_release(rng, adjacency, sigma=sigma)
    check_noise(noise)
    if noise != "gaussian" and (n_neighbors != 1 or groups is not None):
        raise ValueError(
            f"noise={noise!r} needs integer counts; n_neighbors > 1 and groups give "
            "real-valued votes (a lattice shifted off the integers is not private): "
            "use noise='gaussian'"
        )
    counts = nn_histogram(
        private,
        candidates,
        backend=backend,
        chunk_size=chunk_size,
        metric=metric,
        n_neighbors=n_neighbors,
        groups=groups,
    )
    return noisy_statistic(
        "nn_histogram", counts, sigma, vote_sensitivity(adjacency), rng, noise, adjacency
    )


def exact_nn_histogram(
    private,
    candidates,
    backend: str = "auto",
    metric: str = "euclidean",
    n_neighbors: int = 1,
    groups=None,
    adjacency: str = "add_remove",
) -> Release:
    """The exact vote counts as a non-private release (``epsilon=inf`` runs; reports say so)."""
    counts = nn_histogram(
        private, candidates, backend=backend, metric=metric, n_neighbors=n_neighbors, groups=groups
    ).astype(np.float64)
    return Release("nn_histogram", 0.0, vote_sensitivity(adjacency), "none", adjacency, 1, counts)


def noisy_cluster_sums(
    private,
    centers,
    sigma_sum: float,
    sigma_count: float,
    rng: np.random.Generator,
    assign_by=None,
    radius: float = 1.0,
    noise: str = "gaussian",
    adjacency: str = "add_remove",
) -> tuple[Release, Release]:
    """Per-centre sums (rows clipped to the ``radius`` ball) + noise, and counts + noise.

    Two releases: sums with L2 sensitivity r (add/remove) or 2r (replace) —
    for the discrete noises rounded to the lattice of step γ = r·2⁻²⁰, which
    adds γ√(kd) — and counts with sensitivity 1 or √2. Rows are assigned to
    the centre nearest to ``assign_by[i]`` (default the row itself).
    """
    _check_release(rng, adjacency, sigma_sum=sigma_sum, sigma_count=sigma_count, radius=radius)
    sums, counts = as_source(private).cluster_sums(
        prepare_candidates(centers), float(radius), assign_by
    )
    sum_sensitivity = cluster_sums_sensitivity(radius, adjacency, noise, sums.size)
    return (
        noisy_statistic(
            "cluster_sums",
            sums,
            sigma_sum,
            sum_sensitivity,
            rng,
            noise,
            adjacency,
            lattice_step(radius),
        ),
        noisy_statistic(
            "cluster_counts",
            counts,
            sigma_count,
            vote_sensitivity(adjacency),
            rng,
            noise,
            adjacency,
        ),
    )


def cluster_sums_sensitivity(radius: float, adjacency: str, noise: str, n_values: int) -> float:
    """L2 sensitivity of k·d per-cluster sums of rows in the r ball: r (add/remove), 2r (replace),
    + lattice."""
    sensitivity = radius * (2.0 if adjacency == "replace" else 1.0)
    if noise != "gaussian":
        sensitivity = lattice_sensitivity(sensitivity, radius, n_values)
    return sensitivity


def second_moment_sensitivity(d: int, radius: float, adjacency: str, noise: str) -> float:
    """L2 sensitivity of the upper triangle of Σx̄x̄ᵀ: r² (add/remove), √2·r² (replace), + lattice."""
    sensitivity = radius**2 * vote_sensitivity(adjacency)
    if noise != "gaussian":
        sensitivity = lattice_sensitivity(sensitivity, radius**2, d * (d + 1) // 2)
    return sensitivity


def noisy_second_moment(
    private,
    sigma: float,
    rng: np.random.Generator,
    radius: float = 1.0,
    noise: str = "gaussian",
    adjacency: str = "add_remove",
) -> Release:
    """Σ x̄x̄ᵀ + symmetric noise ("Analyze Gauss", Dwork et al., STOC 2014).

    Noise is drawn for each entry on and above the diagonal and mirrored. One
    row x̄ (‖x̄‖ ≤ r) changes that upper triangle by a vector of L2 norm
    √(Σ_i x̄_i⁴ + Σ_{i<j} x̄_i²x̄_j²) ≤ ‖x̄‖² ≤ r² (add/remove); a replacement
    by at most ‖x̄x̄ᵀ − ȳȳᵀ‖_F ≤ √2·r².
    """
    _check_release(rng, adjacency, sigma=sigma, radius=radius)
    moment = as_source(private).second_moment(float(radius))
    d = moment.shape[0]
    upper = np.triu_indices(d)
    sensitivity = second_moment_sensitivity(d, radius, adjacency, noise)
    release = noisy_statistic(
        "second_moment",
        moment[upper],
        sigma,
        sensitivity,
        rng,
        noise,
        adjacency,
        lattice_step(radius**2),
    )
    noisy = np.zeros_like(moment)
    noisy[upper] = release.value
    return Release(
        release.name, release.sigma, sensitivity, noise, adjacency, 1, noisy + np.triu(noisy, 1).T
    )


def noisy_count(
    private, sigma: float, rng: np.random.Generator, noise: str = "gaussian"
) -> Release:
    """n + noise: the number of private rows (L2 sensitivity 1 under add/remove).

    Under add/remove adjacency n is private; this release is what the
    n-dependent defaults (PE-means' population, its count threshold) use.
    """
    _check_release(rng, "add_remove", sigma=sigma)
    n = float(as_source(private).n_rows())
    return noisy_statistic("count", np.array([n]), sigma, 1.0, rng, noise, "add_remove")
