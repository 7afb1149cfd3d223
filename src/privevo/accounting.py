"""Exact privacy accounting for repeated Gaussian releases (Gaussian DP).

A Gaussian mechanism with L2 sensitivity Δ and noise σ is μ-GDP with
μ = Δ/σ; T of them compose exactly to μ = √T·Δ/σ, and heterogeneous ones to
μ = √(Σ μ_i²) (Dong, Roth & Su 2019). μ-GDP is (ε, δ(ε))-DP for every ε ≥ 0
with the analytic-Gaussian curve of Balle & Wang (2018)::

    δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2)

Both directions are solved by root finding on that curve. Every figure is
cross-checked in the tests against Google's ``dp-accounting`` PLD accountant,
and :func:`dp_event` describes a run as a ``dp_accounting`` event.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy import optimize, special

from ._validation import check_delta, check_epsilon, check_positive_int, check_positive_real

__all__ = [
    "delta_of_mu",
    "log_delta_of_mu",
    "mu_of_epsilon",
    "epsilon_of_mu",
    "gaussian_sigma",
    "epsilon_of",
    "compose_mu",
    "classical_sigma",
    "dp_event",
    "zcdp_rho",
    "epsilon_of_rho",
    "discrete_gaussian_sigma",
    "discrete_gaussian_epsilon",
    "discrete_gaussian_dp_event",
    "is_discrete_gaussian",
    "default_delta",
    "delta_ceiling",
    "public_size",
]

_MU_MAX = 1e4
# Safety margins (relative, on δ) of the root finders, far above the ~1e-13 relative error of
# log_delta_of_mu: ε is reported for δ·(1 − _EPS_MARGIN) and μ solved for δ·(1 − _MU_MARGIN),
# so a μ (σ) from mu_of_epsilon never gives back an ε above its target, even after the
# float round trip σ = √T·Δ/μ, μ = √T·Δ/σ of a report.
_EPS_MARGIN = 1e-12
_MU_MARGIN = 3e-12
_GL_NODES, _GL_WEIGHTS = np.polynomial.legendre.leggauss(24)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


def log_delta_of_mu(epsilon: float, mu: float) -> float:
    """log δ(ε) of μ-GDP, accurate (≈1e-13 relative in δ) down to δ far below 1e-300.

    With a = −ε/μ + μ/2 and b = a − μ: for a ≥ 0, δ = (Φ(a) − Φ(b)) − (e^ε − 1)·Φ(b),
    with Φ(a) − Φ(b) integrated when μ is small (δ is not small against it). For a < 0,
    Φ(x) = erfcx(−x/√2)·e^(−x²/2)/2 and e^ε·e^(−b²/2) = e^(−a²/2) give
    δ = e^(−a²/2)/2 · (erfcx(u) − erfcx(v)), u = −a/√2, v = u + μ/√2: the
    exponentials cancel exactly, and the difference is integrated
    (Gauss–Legendre on −erfcx′(t) = 2/√π − 2t·erfcx(t)) when v − u is small,
    so no cancellation is left.
    """
    if mu <= 0:
        return -math.inf
    a = -epsilon / mu + mu / 2
    if a >= 0 and epsilon > 1:
        delta = float(special.ndtr(a) - math.exp(epsilon + special.log_ndtr(a - mu)))
        return math.log(delta) if delta > 0 else -math.inf
    if a >= 0:
        delta = _phi_between(a - mu, a) - math.expm1(epsilon) * float(special.ndtr(a - mu))
        return math.log(delta) if delta > 0 else -math.inf
    u = -a / math.sqrt(2.0)
    h = mu / math.sqrt(2.0)
    if h <= max(u, 1.0):
        t = u + h * (_GL_NODES + 1.0) / 2.0
        slope = _TWO_OVER_SQRT_PI - 2.0 * t * special.erfcx(t)
        diff = float(h / 2.0 * np.dot(_GL_WEIGHTS, slope))
    else:
        diff = float(special.erfcx(u) - special.erfcx(u + h))
    if diff <= 0:
        return -math.inf
    return -a * a / 2.0 + math.log(diff / 2.0)


def _phi_between(lo: float, hi: float) -> float:
    """Φ(hi) − Φ(lo) without cancellation (Gauss–Legendre on φ for a short interval)."""
    width = hi - lo
    if width <= 1.0:
        t = lo + width * (_GL_NODES + 1.0) / 2.0
        density = np.exp(-t * t / 2.0) / math.sqrt(2 * math.pi)
        return float(width / 2.0 * np.dot(_GL_WEIGHTS, density))
    if lo > 0:
        return float(special.ndtr(-lo) - special.ndtr(-hi))
    return float(special.ndtr(hi) - special.ndtr(lo))


def delta_of_mu(epsilon: float, mu: float) -> float:
    """δ(ε) of μ-GDP: Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) (see :func:`log_delta_of_mu`)."""
    return math.exp(log_delta_of_mu(epsilon, mu))


def mu_of_epsilon(epsilon: float, delta: float) -> float:
    """The largest μ whose μ-GDP guarantee implies (ε, δ)-DP, rounded down (the safe side).

    The μ returned satisfies ``epsilon_of_mu(μ, δ) <= ε`` exactly (and so every σ derived
    from it is rounded up): a report never shows an ε above the target.
    """
    epsilon, delta = check_epsilon(epsilon), check_delta(delta)
    return _mu_of_epsilon(epsilon, delta)


@functools.lru_cache(maxsize=1024)
def _mu_of_epsilon(epsilon: float, delta: float) -> float:
    log_target = math.log(delta) + math.log1p(-_MU_MARGIN)

    def f(log_mu):
        return log_delta_of_mu(epsilon, math.exp(log_mu)) - log_target

    hi = math.log(_MU_MAX)
    if f(hi) < 0:
        return _MU_MAX
    lo = math.log(epsilon / 64)
    while f(lo) >= 0:  # ε/64 puts u ≈ 45 (δ ≈ 1e-880): below any δ accepted; a guard only
        lo -= 4.0
    mu = math.exp(optimize.brentq(f, lo, hi, xtol=1e-15, rtol=1e-15, maxiter=500))
    while _epsilon_of_mu(mu * (1 + 1e-13), delta) > epsilon:  # never above the target
        mu *= 1 - 1e-12
    return mu


def epsilon_of_mu(mu: float, delta: float) -> float:
    """The smallest ε ≥ 0 with δ(ε) ≤ δ for μ-GDP, rounded up (the safe side)."""
    delta = check_delta(delta)
    mu = check_positive_real(mu, "mu")
    return _epsilon_of_mu(mu, delta)


@functools.lru_cache(maxsize=1024)
def _epsilon_of_mu(mu: float, delta: float) -> float:
    log_target = math.log(delta) + math.log1p(-_EPS_MARGIN)

    def f(e):
        return log_delta_of_mu(e, mu) - log_target

    if f(0.0) <= 0:
        return 0.0
    hi = max(1.0, mu * mu / 2 + mu * 10)
    while f(hi) > 0:
        hi *= 2
    eps = float(optimize.brentq(f, 0.0, hi, xtol=1e-300, rtol=1e-15, maxiter=500))
    while f(eps) > 0:  # the root finder may stop a hair below the root: step up
        eps = math.nextafter(eps, math.inf) * (1 + 1e-15)
    return eps


def gaussian_sigma(epsilon: float, delta: float, steps: int, sensitivity: float = 1.0) -> float:
    """Noise σ so that ``steps`` Gaussian releases of L2 sensitivity Δ are (ε, δ)-DP.

    σ = √T·Δ / μ(ε, δ), exact under GDP composition.
    """
    steps = check_positive_int(steps, "steps")
    sensitivity = check_positive_real(sensitivity, "sensitivity")
    return math.sqrt(steps) * sensitivity / mu_of_epsilon(epsilon, delta)


def epsilon_of(sigma: float, delta: float, steps: int, sensitivity: float = 1.0) -> float:
    """ε spent by ``steps`` Gaussian releases with noise σ and sensitivity Δ at δ."""
    sigma = check_positive_real(sigma, "sigma")
    steps = check_positive_int(steps, "steps")
    sensitivity = check_positive_real(sensitivity, "sensitivity")
    return epsilon_of_mu(math.sqrt(steps) * sensitivity / sigma, delta)


def compose_mu(*mus: float) -> float:
    """μ of the composition of μ_i-GDP mechanisms: √(Σ μ_i²)."""
    return math.sqrt(sum(m * m for m in mus))


def classical_sigma(epsilon: float, delta: float, steps: int, sensitivity: float = 1.0) -> float:
    """The classical bound σ = 2·Δ·√(T·log(1.25/δ))/ε used by the GAPE paper.

    Looser than :func:`gaussian_sigma` (more noise for the same ε); offered for
    comparison only.
    """
    epsilon, delta = check_epsilon(epsilon), check_delta(delta)
    steps = check_positive_int(steps, "steps")
    return 2.0 * sensitivity * math.sqrt(steps * math.log(1.25 / delta)) / epsilon


def dp_event(sigma: float, steps: int, sensitivity: float = 1.0):
    """The run as a ``dp_accounting`` event: T self-composed Gaussian releases.

    ``SelfComposedDpEvent(GaussianDpEvent(σ/Δ), T)``; feed it to any
    ``dp_accounting`` accountant to check a privevo figure independently.
    """
    import dp_accounting

    return dp_accounting.SelfComposedDpEvent(
        dp_accounting.GaussianDpEvent(noise_multiplier=sigma / sensitivity), int(steps)
    )


# --------------------------------------------------------------------------
# discrete Gaussian noise: zero-concentrated DP (Canonne, Kamath & Steinke 2020)
#
# One coordinate: adding N_Z(0, σ²) to an integer query of sensitivity Δ is
# Δ²/(2σ²)-zCDP (CKS20, Thm. 4). A histogram adds independent noise to every
# count and Rényi divergences of product distributions add up, so a change of
# the count vector by an integer vector v costs Σ_j v_j²/(2σ²) = ‖v‖²/(2σ²):
# ρ = Δ²/(2σ²) with Δ² = 1 (add/remove) or 2 (replace). T releases compose to
# ρ = T·Δ²/(2σ²) (zCDP composition). (ε, δ) follows from the conversion of
# CKS20 Cor. 13: δ = inf_{α>1} exp((α−1)(αρ−ε))/(α−1)·(1−1/α)^α, i.e.
# ε(δ) = min_{α>1} αρ + log(1−1/α) − (log δ + log α)/(α−1).
# This is what dp_accounting's RDP accountant computes for a ZCDpEvent (on a
# grid of orders α); its PLD accountant for the discrete Gaussian itself
# (``from_discrete_gaussian_mechanism``) gives a tighter ε, which the tests
# use to check that this bound is never below the truth.


def is_discrete_gaussian(noise: str) -> bool:
    """Whether a ``noise`` name of :func:`privevo.private.noisy_nn_histogram` is a discrete
    Gaussian."""
    return noise.startswith("discrete_gaussian")


def zcdp_rho(sigma: float, steps: int = 1, sensitivity: float = 1.0) -> float:
    """ρ of ``steps`` discrete Gaussian releases: T·Δ²/(2σ²) (CKS20 Thm. 4 + zCDP composition)."""
    sigma = check_positive_real(sigma, "sigma")
    steps = check_positive_int(steps, "steps")
    return steps * sensitivity**2 / (2.0 * sigma**2)


def epsilon_of_rho(rho: float, delta: float) -> float:
    """The smallest ε with ρ-zCDP ⇒ (ε, δ)-DP by CKS20 Cor. 13 (optimised over α > 1)."""
    delta = check_delta(delta)
    rho = check_positive_real(rho, "rho")
    log_delta = math.log(delta)

    def eps(log_am1: float) -> float:
        a = 1.0 + math.exp(log_am1)
        return a * rho + math.log1p(-1.0 / a) - (log_delta + math.log(a)) / (a - 1.0)

    # ε(α) is unimodal in log(α − 1); bracket its minimum on a grid, then refine.
    # the optimum sits near α − 1 ≈ √(log(1/δ)/ρ): the grid reaches past it for tiny ρ
    top = max(20.0, 0.5 * math.log(-log_delta / rho) + 4.0) if log_delta < 0 else 20.0
    grid = np.linspace(-12.0, top, 641 + int(20 * (top - 20.0)))
    a = 1.0 + np.exp(grid)
    values = a * rho + np.log1p(-1.0 / a) - (log_delta + np.log(a)) / (a - 1.0)
    i = int(np.argmin(values))
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]
    best = optimize.minimize_scalar(
        eps, bounds=(lo, hi), method="bounded", options={"xatol": 1e-10}
    )
    return max(0.0, float(min(best.fun, values[i])))


def discrete_gaussian_epsilon(
    sigma: float, delta: float, steps: int, sensitivity: float = 1.0
) -> float:
    """ε spent by ``steps`` discrete Gaussian releases with parameter σ and L2 sensitivity Δ."""
    return epsilon_of_rho(zcdp_rho(sigma, steps, sensitivity), delta)


@functools.lru_cache(maxsize=256)
def discrete_gaussian_sigma(
    epsilon: float, delta: float, steps: int, sensitivity: float = 1.0
) -> float:
    """σ so that ``steps`` discrete Gaussian releases are (ε, δ)-DP under the zCDP bound.

    σ = Δ·√(T/(2ρ*)) with ρ* the largest ρ whose CKS20 conversion gives ≤ ε at δ
    (root finding, rounded so that the σ returned is never below the exact root).
    """
    epsilon, delta = check_epsilon(epsilon), check_delta(delta)
    steps = check_positive_int(steps, "steps")
    sensitivity = check_positive_real(sensitivity, "sensitivity")

    def f(log_rho):
        return epsilon_of_rho(math.exp(log_rho), delta) - epsilon

    lo, hi = math.log(1e-12), math.log(1e6)
    if f(hi) < 0:
        raise ValueError(
            f"epsilon={epsilon} is too large for the discrete Gaussian accountant; lower epsilon"
        )
    while f(lo) > 0:  # tiny ε with tiny δ needs ρ below 1e-12
        lo -= 5.0
    log_rho = optimize.brentq(f, lo, hi, xtol=1e-13, rtol=1e-13, maxiter=500)
    sigma = sensitivity * math.sqrt(steps / (2.0 * math.exp(log_rho)))
    while discrete_gaussian_epsilon(sigma, delta, steps, sensitivity) > epsilon:  # never undershoot
        sigma = math.nextafter(sigma, math.inf) * (1 + 1e-12)
    return sigma


def discrete_gaussian_dp_event(sigma: float, steps: int, sensitivity: float = 1.0):
    """The run as a ``dp_accounting`` event: T self-composed ZCDpEvent(ρ = Δ²/(2σ²)).

    dp_accounting (0.6) has no discrete Gaussian event; its RDP accountant
    accepts this zCDP event and reproduces :func:`discrete_gaussian_epsilon`.
    """
    import dp_accounting

    return dp_accounting.SelfComposedDpEvent(
        dp_accounting.ZCDpEvent(rho=zcdp_rho(sigma, 1, sensitivity)), int(steps)
    )


# -- the one place σ is computed --------------------------------------------------

DEFAULT_DELTA_ADD_REMOVE = 1e-6  # the default δ where N is private, and its cap where N is public
_SAFE = 1 + 1e-12  # σ's from a budget split are rounded up by this factor (never above ε)


class DefaultDelta(float):
    """A δ that nobody chose and no public size set: the fixed default (1e-6).

    It carries its provenance so that the engine can refuse it, after its first
    release, when the noisy vote total says the data set is too large for it
    (:func:`check_default_delta`).
    """

    __slots__ = ()

    def __reduce__(self):
        return (DefaultDelta, (float(self),))


def delta_ceiling(n: float) -> float:
    """The loosest δ a default may take for n privacy units: min(1/(10·n), n^−1.1).

    1/(10·n) is the binding term below n = 10¹⁰; n^−1.1 is the PE-means paper's δ.
    """
    return min(1.0 / (10.0 * float(n)), float(n) ** -1.1)


def default_delta(n_public: float | None = None, *, flag: str = "delta") -> float:
    """The one rule for δ when none is given: min(1e-6, 1/(10·N)) of a *public* size N.

    ``n_public`` is the number of privacy units where it is public — the row count
    under replace adjacency with one row per unit (:func:`public_size`), or a size the
    user declared (TabularPE's metadata ``n_rows``) — and None elsewhere. Without it the
    default is the fixed 1e-6, marked as a :class:`DefaultDelta`: under add/remove the
    exact n is private, and a δ computed from it (or from a noisy count of it) would
    make the guarantee's δ depend on the data. That default is refused, never adjusted,
    from a run's first release once a noisy count shows the data too large for it
    (:func:`check_default_delta`: the same ceiling :func:`delta_ceiling`). So a default
    δ is never looser than 1/(10·N) for a public N, and is 1e-6 or smaller otherwise.
    ``flag`` names the option to pass in the refusal of a public N below 2.
    """
    if n_public is None:
        return DefaultDelta(DEFAULT_DELTA_ADD_REMOVE)
    if not n_public >= 2:
        raise ValueError(f"the default delta needs a public size of at least 2 rows; pass {flag}")
    return min(DEFAULT_DELTA_ADD_REMOVE, delta_ceiling(n_public))


def public_size(adjacency: str, n_rows: int | None, *, user_level: bool = False) -> int | None:
    """The row count where it is public: under replace adjacency with one row per privacy
    unit. Under add/remove it is private, and with user ids (``user_level``) a replaced
    user may own more rows: None there."""
    if adjacency != "replace" or user_level:
        return None
    return n_rows


def run_default_delta(
    adjacency: str, n_rows: int | None, *, user_level: bool = False, flag: str = "delta"
) -> float:
    """:func:`default_delta` of :func:`public_size` (kept for existing callers)."""
    return default_delta(public_size(adjacency, n_rows, user_level=user_level), flag=flag)


def check_default_delta(delta: float, noisy_units: float, noise_sd: float = 0.0) -> None:
    """Refuse a defaulted δ that is not ≪ 1/n: δ must stay ≤ :func:`delta_ceiling` (n).

    ``noisy_units`` is a released estimate ñ of the number of privacy units (the
    noisy vote total, or a noisy count) and ``noise_sd`` its noise's standard
    deviation; the run is refused only when even ñ − 3·sd exceeds the size the
    default allows, so pure noise (a tiny ε) never trips it. The refusal is
    post-processing of a release: it reveals nothing beyond it. A δ the caller
    chose is never refused here. The fixed default 1e-6 passes up to 10⁵ units.
    """
    low = float(noisy_units) - 3.0 * float(noise_sd)
    if not isinstance(delta, DefaultDelta) or not low > 1:
        return
    ceiling = delta_ceiling(low)
    if float(delta) <= ceiling:
        return
    suggestion = 10.0 ** math.floor(math.log10(ceiling))
    raise ValueError(
        f"the default delta {float(delta):g} is too large for data of this size (about "
        f"{noisy_units:.1g} privacy units by a noisy count; delta should stay below "
        f"1/(10 n)): pass delta explicitly (--delta), e.g. {suggestion:g}"
    )


def calibrate(
    epsilon: float, delta: float, steps: int, sensitivity: float = 1.0, noise: str = "gaussian"
) -> float:
    """σ of ``steps`` releases of L2 sensitivity Δ that are (ε, δ)-DP together.

    Gaussian noise: exact GDP (:func:`gaussian_sigma`); discrete Gaussian:
    zCDP (:func:`discrete_gaussian_sigma`). Both round σ up.
    """
    if is_discrete_gaussian(noise):
        return discrete_gaussian_sigma(epsilon, delta, steps, sensitivity)
    return gaussian_sigma(epsilon, delta, steps, sensitivity)


def quadratic_budget(epsilon: float, delta: float, noise: str = "gaussian") -> float:
    """B, the additive budget of a run at (ε, δ): μ² under GDP, 2ρ under zCDP.

    Releases that take shares s_i of B (Σ s_i ≤ 1) compose to exactly B:
    μ² = Σ cΔ²/σ² (GDP) or 2ρ = Σ cΔ²/σ² (zCDP). See :func:`share_sigma`.
    """
    return calibrate(epsilon, delta, 1, 1.0, noise) ** -2


def share_sigma(budget: float, share: float, sensitivity: float, count: int = 1) -> float:
    """σ = Δ·√(c/(s·B)) for ``count`` releases taking ``share`` of the budget B (rounded up)."""
    if not 0 < share <= 1:
        raise ValueError(f"a budget share must be in (0, 1], got {share}")
    return sensitivity * math.sqrt(count / (share * budget)) * _SAFE
