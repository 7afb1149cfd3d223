"""Exact discrete Gaussian noise for integer counts (Canonne, Kamath & Steinke 2020).

The discrete Gaussian N_Z(0, σ²) has P[Y = y] ∝ exp(−y²/(2σ²)) on the
integers (σ is its *parameter*, slightly above its standard deviation). Added
to integer counts it never produces a floating-point value, so the release
cannot leak through rounding (Mironov 2012), and it is sampled *exactly*:
only uniform random integers and rational arithmetic are used.

Two samplers of the same distribution:

* :func:`discrete_gaussian_scalar` — CKS20 Algorithms 1–3 literally
  (``fractions.Fraction``; Bern(exp(−γ)) by the alternating-series trick;
  discrete Laplace proposal with scale t = ⌊σ⌋ + 1, accepted with
  probability exp(−(|Y| − σ²/t)²/(2σ²))). Slow; the reference.
* :func:`discrete_gaussian` — the same proposal/acceptance structure,
  vectorised with numpy. Each Bern(exp(−γ)) compares a uniform 63-bit integer
  k with certified integer bounds L ≤ 2⁶³·exp(−γ) ≤ H (fixed-point interval
  arithmetic, :func:`exp_neg_bounds`): k < L accepts, k ≥ H rejects, and the
  rare k in [L, H) (probability ≤ 2⁻⁶²) draws 63 more bits and retries with
  tighter bounds. This is exactly P[U < exp(−γ)] for an infinite-precision
  uniform U, so the output distribution is exact.

Randomness: a ``numpy.random.Generator`` (seedable, for tests and
reproducible runs) or ``secrets.SystemRandom()`` (the operating system's
cryptographically secure source, for production).
"""

from __future__ import annotations

import math
import random
from fractions import Fraction
from typing import Union

import numpy as np

__all__ = [
    "discrete_gaussian",
    "discrete_gaussian_scalar",
    "discrete_laplace_scalar",
    "bernoulli_exp_scalar",
    "exp_neg_bounds",
    "discrete_gaussian_pmf",
    "sigma_squared",
    "DiscreteGaussianSampler",
]

RandomSource = Union[np.random.Generator, random.SystemRandom]
_BITS = 63  # bits per uniform draw in the vectorised path (thresholds ≤ 2^63 fit in uint64)


# -------------------------------------------------------------- random sources


class _Source:
    """Uniform integers from a numpy Generator or from ``random.SystemRandom`` (OS CSPRNG)."""

    def __init__(self, rng: RandomSource):
        if isinstance(rng, np.random.Generator):
            self.np = rng
            self.sys = None
        elif isinstance(rng, random.SystemRandom):
            self.np = None
            self.sys = rng
        else:
            raise ValueError(
                "rng must be a numpy.random.Generator (numpy.random.default_rng(seed)) "
                f"or secrets.SystemRandom(), got {type(rng).__name__}"
            )

    def bits63(self, size: int) -> np.ndarray:
        """``size`` independent uniform integers in [0, 2⁶³), uint64."""
        if self.np is not None:
            return self.np.integers(0, 2**63, size=size, dtype=np.uint64)
        return np.frombuffer(self.sys.randbytes(8 * size), dtype="<u8").astype(
            np.uint64
        ) >> np.uint64(1)

    def integers(self, high: int, size: int) -> np.ndarray:
        """``size`` independent uniform integers in [0, high), int64 (high < 2⁶³)."""
        if self.np is not None:
            return self.np.integers(0, high, size=size, dtype=np.int64)
        limit = (2**63 // high) * high  # rejection keeps the residues uniform
        out = np.empty(0, dtype=np.uint64)
        while len(out) < size:
            r = self.bits63(2 * (size - len(out)) + 8)
            out = np.concatenate([out, r[r < np.uint64(limit)]])
        return (out[:size] % np.uint64(high)).astype(np.int64)

    def randbelow(self, n: int) -> int:
        """One uniform integer in [0, n), for any positive Python int n."""
        if self.sys is not None:
            return self.sys.randrange(n)
        if n <= 2**63:
            return int(self.np.integers(0, n, dtype=np.uint64))
        k = n.bit_length()
        while True:  # rejection from k random bits
            words = self.np.integers(0, 2**63, size=-(-k // 63), dtype=np.uint64)
            r = 0
            for w in words.tolist():
                r = (r << 63) | w
            r >>= 63 * len(words) - k
            if r < n:
                return r

    def bits63_scalar(self) -> int:
        return int(self.bits63(1)[0])


# -------------------------------------------------------------- exact helpers


def sigma_squared(sigma) -> Fraction:
    """σ² as an exact rational (a float σ is a dyadic rational, so this is exact)."""
    s = None
    if isinstance(sigma, Fraction):
        s = sigma
    elif isinstance(sigma, (int, float, np.integer, np.floating)) and math.isfinite(sigma):
        s = Fraction(float(sigma))
    if s is None or not s > 0:
        raise ValueError(f"sigma must be a finite number > 0, got {sigma!r}")
    return s * s


def _exp_neg_fraction_fixed(r: int, den: int, w: int) -> tuple[int, int]:
    """Integers (lo, hi) with lo ≤ 2^w·exp(−r/den) ≤ hi, for 0 ≤ r/den ≤ 1.

    Alternating Taylor series Σ (−f)^k/k! with floor-rounded terms t_k; each
    t_k is within 2 units of the true term, and the tail after the last
    nonzero term is below 2 units (terms decrease since f ≤ 1).
    """
    one = 1 << w
    if r == 0:
        return one, one
    total, term, k, sign = 0, one, 0, 1
    while term:
        total += sign * term
        k += 1
        term = term * r // (den * k)
        sign = -sign
    slack = 2 * k + 4
    return max(total - slack, 0), min(total + slack, one)


def _pow_fixed(lo: int, hi: int, n: int, w: int) -> tuple[int, int]:
    """[lo, hi]^n in fixed point 2^−w, rounded outward (lo down, hi up)."""
    rlo = rhi = 1 << w
    while n:
        if n & 1:
            rlo, rhi = (rlo * lo) >> w, -((-rhi * hi) >> w)
        n >>= 1
        if n:
            lo, hi = (lo * lo) >> w, -((-hi * hi) >> w)
    return rlo, rhi


def exp_neg_bounds(gamma: Fraction, bits: int) -> tuple[int, int]:
    """Integers (L, H) with L ≤ 2^bits·exp(−γ) ≤ H and H − L ≤ 2, for rational γ ≥ 0.

    exp(−γ) = exp(−1)^⌊γ⌋ · exp(−(γ − ⌊γ⌋)), each factor bracketed by
    :func:`_exp_neg_fraction_fixed` in a working precision with guard bits,
    multiplied with outward rounding, then rounded outward to ``bits``.
    """
    gamma = Fraction(gamma)
    if gamma < 0:
        raise ValueError(f"gamma must be >= 0, got {gamma}")
    if gamma == 0:
        return 1 << bits, 1 << bits
    n, r = divmod(gamma.numerator, gamma.denominator)
    w = bits + 24 + 2 * n.bit_length()
    lo, hi = _exp_neg_fraction_fixed(r, gamma.denominator, w)
    if n:
        e_lo, e_hi = _exp_neg_fraction_fixed(1, 1, w)
        p_lo, p_hi = _pow_fixed(e_lo, e_hi, n, w)
        lo, hi = (lo * p_lo) >> w, -((-hi * p_hi) >> w)
    shift = w - bits
    return lo >> shift, -((-hi) >> shift)


def _resolve_exp_bernoulli(gamma: Fraction, k: int, source: _Source) -> bool:
    """Finish U < exp(−γ) for U ∈ [k/2⁶³, (k+1)/2⁶³) by drawing more bits of U."""
    bits = _BITS
    while True:
        lo, hi = exp_neg_bounds(gamma, bits)
        if k < lo:  # U < (k+1)/2^bits ≤ lo/2^bits ≤ exp(−γ)
            return True
        if k >= hi:  # U ≥ k/2^bits ≥ hi/2^bits ≥ exp(−γ)
            return False
        k = (k << _BITS) | source.bits63_scalar()
        bits += _BITS


# -------------------------------------------------------------- CKS20 reference (scalar)


def _bernoulli_rational(p: Fraction, source: _Source) -> bool:
    return source.randbelow(p.denominator) < p.numerator


def _bernoulli_exp_le1(gamma: Fraction, source: _Source) -> bool:
    """CKS20 Alg. 1, γ ∈ [0, 1]: draw A_k ~ Bern(γ/k) until A_k = 0; return [k odd]."""
    k = 1
    while _bernoulli_rational(gamma / k, source):
        k += 1
    return k % 2 == 1


def bernoulli_exp_scalar(gamma, rng: RandomSource) -> bool:
    """One exact Bern(exp(−γ)) draw, rational γ ≥ 0 (CKS20 Alg. 1)."""
    source = rng if isinstance(rng, _Source) else _Source(rng)
    gamma = Fraction(gamma)
    while gamma > 1:
        if not _bernoulli_exp_le1(Fraction(1), source):
            return False
        gamma -= 1
    return _bernoulli_exp_le1(gamma, source)


def discrete_laplace_scalar(t: int, rng: RandomSource) -> int:
    """One exact draw with P[Y = y] ∝ exp(−|y|/t), integer t ≥ 1 (CKS20 Alg. 2, s = 1)."""
    source = rng if isinstance(rng, _Source) else _Source(rng)
    while True:
        u = source.randbelow(t)
        if not bernoulli_exp_scalar(Fraction(u, t), source):
            continue
        v = 0
        while bernoulli_exp_scalar(1, source):
            v += 1
        x = u + t * v
        negative = source.randbelow(2) == 1
        if negative and x == 0:
            continue
        return -x if negative else x


def discrete_gaussian_scalar(sigma, rng: RandomSource) -> int:
    """One exact draw from N_Z(0, σ²) (CKS20 Alg. 3). ``sigma`` is a float or an exact Fraction."""
    source = rng if isinstance(rng, _Source) else _Source(rng)
    s2 = sigma_squared(sigma)
    t = math.isqrt(s2.numerator // s2.denominator) + 1  # ⌊σ⌋ + 1
    while True:
        y = discrete_laplace_scalar(t, source)
        if bernoulli_exp_scalar((abs(y) - s2 / t) ** 2 / (2 * s2), source):
            return y


# -------------------------------------------------------------- vectorised exact sampler


class DiscreteGaussianSampler:
    """Vectorised exact N_Z(0, σ²) sampler; caches its certified thresholds per σ.

    Same algorithm as :func:`discrete_gaussian_scalar` (CKS20 Alg. 2–3), with
    every Bern(exp(−γ)) drawn by comparing a 63-bit uniform with certified
    bounds on 2⁶³·exp(−γ) (module docstring).
    """

    def __init__(self, sigma):
        self.sigma2 = sigma_squared(sigma)
        self.t = math.isqrt(self.sigma2.numerator // self.sigma2.denominator) + 1
        self._cache: dict[tuple[str, int], tuple[int, int]] = {}

    def _gamma(self, family: str, key: int) -> Fraction:
        if family == "laplace":  # exp(−u/t): the uniform part of the discrete Laplace
            return Fraction(key, self.t)
        if family == "one":  # exp(−1): the geometric part
            return Fraction(1)
        s2 = self.sigma2  # exp(−(|y| − σ²/t)²/(2σ²)): the Gaussian acceptance
        return (key - s2 / self.t) ** 2 / (2 * s2)

    def _bernoulli_exp(self, family: str, keys: np.ndarray, source: _Source) -> np.ndarray:
        """Bern(exp(−γ(key))) for each key, exactly."""
        if keys.size == 0:
            return np.zeros(0, dtype=bool)
        uniq, inverse = np.unique(keys, return_inverse=True)
        lo = np.empty(len(uniq), dtype=np.uint64)
        hi = np.empty(len(uniq), dtype=np.uint64)
        for i, key in enumerate(uniq.tolist()):
            bounds = self._cache.get((family, key))
            if bounds is None:
                bounds = self._cache[(family, key)] = exp_neg_bounds(
                    self._gamma(family, key), _BITS
                )
            lo[i], hi[i] = bounds
        k = source.bits63(keys.size)
        lo, hi = lo[inverse], hi[inverse]
        out = k < lo
        for i in np.flatnonzero((k >= lo) & (k < hi)).tolist():  # probability ≤ 2^-62 each
            out[i] = _resolve_exp_bernoulli(self._gamma(family, int(keys[i])), int(k[i]), source)
        return out

    def _geometric(self, size: int, source: _Source) -> np.ndarray:
        """V = number of Bern(exp(−1)) successes before the first failure."""
        v = np.zeros(size, dtype=np.int64)
        active = np.arange(size)
        ones = np.zeros(size, dtype=np.int64)
        while active.size:
            hit = self._bernoulli_exp("one", ones[: active.size], source)
            active = active[hit]
            v[active] += 1
        return v

    def _laplace_magnitudes(self, size: int, source: _Source) -> tuple[np.ndarray, np.ndarray]:
        """Candidate discrete Laplace draws (CKS20 Alg. 2): values and a validity mask."""
        u = source.integers(self.t, size)
        ok = self._bernoulli_exp("laplace", u, source)
        x = np.zeros(size, dtype=np.int64)
        x[ok] = u[ok] + self.t * self._geometric(int(ok.sum()), source)
        negative = source.integers(2, size) == 1
        ok &= ~(negative & (x == 0))
        return np.where(negative, -x, x), ok

    def sample(self, size, rng: RandomSource) -> np.ndarray:
        """Exact N_Z(0, σ²) draws, int64 array of shape ``size``."""
        source = _Source(rng)
        shape = (size,) if isinstance(size, (int, np.integer)) else tuple(size)
        total = int(np.prod(shape, dtype=np.int64))
        out = np.empty(total, dtype=np.int64)
        filled = 0
        while filled < total:
            need = total - filled
            batch = need + need // 2 + 16  # acceptance is ≳ 0.6 for every σ
            y, ok = self._laplace_magnitudes(batch, source)
            y = y[ok]
            y = y[self._bernoulli_exp("gauss", np.abs(y), source)][:need]
            out[filled : filled + len(y)] = y
            filled += len(y)
        return out.reshape(shape)


_SAMPLERS: dict[Fraction, DiscreteGaussianSampler] = {}


def discrete_gaussian(sigma, size, rng: RandomSource) -> np.ndarray:
    """Exact N_Z(0, σ²) noise, int64 array of shape ``size``.

    ``rng``: a ``numpy.random.Generator`` (reproducible) or
    ``secrets.SystemRandom()`` (cryptographically secure). ``sigma`` is the
    discrete Gaussian's parameter (a float, used exactly, or a Fraction).
    """
    key = sigma_squared(sigma)
    sampler = _SAMPLERS.get(key)
    if sampler is None:
        if len(_SAMPLERS) > 64:
            _SAMPLERS.clear()
        sampler = _SAMPLERS[key] = DiscreteGaussianSampler(sigma)
    return sampler.sample(size, rng)


def discrete_gaussian_pmf(values, sigma: float, tail: float = 40.0) -> np.ndarray:
    """P[Y = y] of N_Z(0, σ²) in floating point (normaliser summed over ±(tail·σ + 10))."""
    sigma = float(sigma)
    half = int(math.ceil(tail * sigma)) + 10
    support = np.arange(-half, half + 1)
    norm = np.exp(-(support.astype(float) ** 2) / (2 * sigma**2)).sum()
    v = np.asarray(values, dtype=float)
    return np.exp(-(v**2) / (2 * sigma**2)) / norm
