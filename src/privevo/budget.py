"""A privacy budget shared by several fits, composed exactly.

:class:`BudgetAccountant` follows diffprivlib's ``BudgetAccountant`` and
Tumult Analytics' ``Session`` (one budget, many releases, a refusal when it
would be exceeded) but composes exactly instead of adding ε's:

- **GDP** while every charge is Gaussian: a release of sensitivity Δ and
  noise σ, T times, is μ-GDP with μ = √T·Δ/σ; releases compose to
  μ = √(Σ μ_i²) (Dong, Roth & Su 2019, Cor. 3.3); the budget (ε_B, δ_B) is
  μ_B = μ(ε_B, δ_B) (:func:`privevo.accounting.mu_of_epsilon`), and
  ``spent()`` = ε(√(Σ μ_i²)) at δ_B.
- **zCDP** once a charge is discrete Gaussian (ρ = T·Δ²/(2σ²), Canonne,
  Kamath & Steinke 2020): every Gaussian charge counts as ρ = μ²/2 (Bun &
  Steinke 2016, Prop. 1.6), ρ's add, and ε follows from CKS20 Cor. 13.

Two ε = 0.6 fits at the budget's δ therefore spend ε ≈ 0.88 (not 1.2): they
fit in a budget of 1, and a third is refused.

Wiring an estimator (3 lines; what :class:`privevo.TabularPE` does)::

    if self.accountant is not None:                       # in fit(), before reading X
        self.accountant.check(epsilon=self.epsilon, delta=self.delta, name="DPKMeans")
    ...                                                   # the fit
    if self.accountant is not None:                       # after the releases
        self.accountant.charge(self.privacy_report_, name="DPKMeans")

``check`` raises :class:`BudgetExceededError` (a ``ValueError``) before any
data access; ``charge`` records what the report's ``releases`` really spent
(the Gaussian releases' σ, count and sensitivity; ``noise`` names discrete
Gaussian ones). A run whose report has ``epsilon=None`` (non-private) cannot
be charged.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from . import accounting
from ._validation import RUN_CONSTRAINTS, validate_params
from .private import Release

__all__ = ["BudgetAccountant", "BudgetExceededError", "Charge"]

_TOLERANCE = 1e-9  # relative slack for root-finding round-off in the budget comparisons


class BudgetExceededError(ValueError):
    """A fit would spend more than the accountant's remaining budget."""


@dataclass(frozen=True)
class Charge:
    """One entry of the ledger: μ² (Gaussian releases) and ρ (discrete Gaussian ones)."""

    name: str
    mu_squared: float
    rho: float

    @property
    def is_gaussian(self) -> bool:
        return self.rho == 0.0


class BudgetAccountant:
    """An (ε, δ) budget composed exactly across fits (module docstring).

    Parameters
    ----------
    epsilon, delta : the total budget; ``delta`` is also the δ at which
        ``spent()`` and ``remaining()`` are stated

    Attributes
    ----------
    ledger : list of :class:`Charge`, in charging order
    """

    _parameter_constraints: dict = {key: RUN_CONSTRAINTS[key] for key in ("epsilon", "delta")}

    def __init__(self, epsilon: float, delta: float):
        validate_params(
            self._parameter_constraints, {"epsilon": epsilon, "delta": delta}, "BudgetAccountant"
        )
        self.epsilon = float(epsilon)
        self.delta = float(delta)
        self.ledger: list[Charge] = []

    def __repr__(self) -> str:
        charges = len(self.ledger)
        return f"BudgetAccountant(epsilon={self.epsilon}, delta={self.delta}, charges={charges})"

    # -- the two calls an estimator makes ------------------------------------

    def check(
        self,
        mu: float | None = None,
        *,
        epsilon: float | None = None,
        delta: float | None = None,
        rho: float = 0.0,
        name: str = "fit",
    ) -> float:
        """Refuse a planned fit that would exceed the budget; return the ε it would leave spent.

        Give the fit's cost as ``mu`` (μ-GDP), as the (``epsilon``, ``delta``) its
        Gaussian noise is calibrated to (μ = μ(ε, δ)), or as ``rho`` (zCDP).
        Reads nothing but the numbers given.
        """
        planned = Charge(name, self._planned_mu(mu, epsilon, delta) ** 2, float(rho))
        after = self._epsilon_of(self.ledger + [planned])
        if after > self.epsilon * (1 + _TOLERANCE):
            spent = self.spent()[0]
            raise BudgetExceededError(
                f"{name} would bring the spent epsilon to {after:.4g} > the budget "
                f"{self.epsilon:g} (spent {spent:.4g}, remaining {self.remaining()[0]:.4g} "
                f"at delta={self.delta:g}); "
                "lower its epsilon or raise the budget"
            )
        return after

    def charge(self, releases, name: str = "fit") -> Charge:
        """Record what a run spent: its privacy report (its ``releases``) or a list of releases.

        The charge is recorded even if it exceeds the budget (the data was
        read); then :class:`BudgetExceededError` is raised.
        """
        entry = Charge(name, *release_cost(releases))
        self.ledger.append(entry)
        if self.spent()[0] > self.epsilon * (1 + _TOLERANCE):
            raise BudgetExceededError(
                f"{name} spent more than the remaining budget: spent epsilon "
                f"{self.spent()[0]:.4g} > {self.epsilon:g}; call check() before a fit"
            )
        return entry

    # -- reading the budget -------------------------------------------------

    @property
    def accountant(self) -> str:
        """``"gdp"`` while every charge is Gaussian, else ``"zcdp"``."""
        return "gdp" if all(c.is_gaussian for c in self.ledger) else "zcdp"

    @property
    def mu_spent(self) -> float | None:
        """μ of the composed charges (GDP); None once a charge is zCDP."""
        return (
            math.sqrt(sum(c.mu_squared for c in self.ledger)) if self.accountant == "gdp" else None
        )

    def spent(self) -> tuple[float, float]:
        """(ε, δ) spent: ε of the exact composition at the budget's δ ((0, 0) before any charge)."""
        if not self.ledger:
            return 0.0, 0.0
        return self._epsilon_of(self.ledger), self.delta

    def remaining(self) -> tuple[float, float]:
        """(ε, δ) of the largest Gaussian fit (at the budget's δ) that still fits in the budget."""
        if self.accountant == "gdp":
            mu_left_sq = accounting.mu_of_epsilon(self.epsilon, self.delta) ** 2 - self.mu_spent**2
            if mu_left_sq <= 0:
                return 0.0, self.delta
            return accounting.epsilon_of_mu(math.sqrt(mu_left_sq), self.delta), self.delta
        rho_left = _rho_budget(self.epsilon, self.delta) - sum(_rho(c) for c in self.ledger)
        if rho_left <= 0:
            return 0.0, self.delta
        return accounting.epsilon_of_mu(math.sqrt(2 * rho_left), self.delta), self.delta

    def dp_event(self):
        """The ledger as one ``dp_accounting`` event (to cross-check ``spent()`` independently)."""
        import dp_accounting

        events = []
        for c in self.ledger:
            if c.mu_squared > 0:
                events.append(
                    dp_accounting.GaussianDpEvent(noise_multiplier=1 / math.sqrt(c.mu_squared))
                )
            if c.rho > 0:
                events.append(dp_accounting.ZCDpEvent(rho=c.rho))
        return dp_accounting.ComposedDpEvent(events)

    # -- internals ----------------------------------------------------------

    def _planned_mu(self, mu, epsilon, delta) -> float:
        if mu is not None:
            if epsilon is not None:
                raise ValueError("give the planned cost as mu or as (epsilon, delta), not both")
            return float(mu)
        if epsilon is None:
            return 0.0
        if epsilon == math.inf:
            raise ValueError("epsilon=inf (a non-private run) cannot run under a budget accountant")
        return accounting.mu_of_epsilon(epsilon, self.delta if delta is None else delta)

    def _epsilon_of(self, charges: list[Charge]) -> float:
        if all(c.is_gaussian for c in charges):
            mu = math.sqrt(sum(c.mu_squared for c in charges))
            return accounting.epsilon_of_mu(mu, self.delta) if mu > 0 else 0.0
        return accounting.epsilon_of_rho(sum(_rho(c) for c in charges), self.delta)


def _rho(charge: Charge) -> float:
    return charge.mu_squared / 2.0 + charge.rho


def _rho_budget(epsilon: float, delta: float) -> float:
    """The largest ρ whose CKS20 conversion stays within (ε, δ)."""
    from scipy import optimize

    def excess(log_rho: float) -> float:
        return accounting.epsilon_of_rho(math.exp(log_rho), delta) - epsilon

    return math.exp(optimize.brentq(excess, math.log(1e-12), math.log(1e6), xtol=1e-12))


def release_cost(releases) -> tuple[float, float]:
    """(μ², ρ) of a report's releases or of a list of releases (:class:`Release` objects or
    entries)."""
    if isinstance(releases, dict):
        if releases.get("epsilon", 0.0) is None:
            raise ValueError("a non-private run (epsilon=inf) cannot be charged to a budget")
        releases = releases["releases"]
    mu_sq = rho = 0.0
    for r in releases:
        r = r if isinstance(r, Release) else Release.from_entry(r, "add_remove")
        if not r.sigma > 0 or r.rho is None:
            raise ValueError(
                f"release {r.name!r} has sigma={r.sigma} and noise {r.noise!r}; only "
                "Gaussian and discrete Gaussian releases can be charged"
            )
        if r.noise == "gaussian":
            mu_sq += r.mu**2
        else:
            rho += r.rho
    return mu_sq, rho
