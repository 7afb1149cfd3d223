"""Parameter and input checks shared by every public entry point.

Each check raises ``ValueError`` with one line that names the parameter and
says what to fix.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np

from .exceptions import InvalidParameterError
from .names import ADJACENCIES, EPSILON_MAX, EPSILON_MIN, MAX_ROUNDS

#: The smallest δ accepted (the accountant works in log space and is tested down to it).
DELTA_MIN = 1e-300


def check_points(
    values, name: str = "X", *, min_rows: int = 1, dtype=np.float64, copy: bool = False
) -> np.ndarray:
    """Return ``values`` as a finite 2-D float array of shape (rows, d)."""
    try:
        array = np.array(values, dtype=dtype, copy=copy or None)
    except (TypeError, ValueError):  # numpy's message may quote a private cell: never shown
        message = f"{name} must be a numeric 2-D array (rows x features) of numbers"
        raise ValueError(message) from None
    if array.ndim != 2:
        raise ValueError(not_two_d(name, array.ndim))
    if array.shape[0] < min_rows:  # how many rows it has is private: never said
        raise ValueError(f"{name} must have at least {min_rows} row(s); it has fewer")
    if array.shape[1] < 1:
        raise ValueError(f"{name} must have at least 1 feature column, got 0")
    if not np.isfinite(array).all():
        raise ValueError(f"{name} contains NaN or infinite values; drop or impute them first")
    return array


def not_two_d(name: str, ndim: int) -> str:
    """The refusal of an array that is not 2-D: its number of axes, never its shape (which
    holds the row count, private under add/remove; docs/privacy.md, "What is public")."""
    return (
        f"{name} must be 2-D (rows x features), got a {ndim}-D array; "
        "reshape 1-D data with .reshape(-1, 1)"
    )


def check_same_dimension(candidate_dim: int, data_dim: int, name: str = "candidates") -> None:
    if candidate_dim != data_dim:
        raise ValueError(
            f"{name} have {candidate_dim} features but the data has {data_dim}; "
            "generate them in the data's dimension"
        )


def not_positive(name: str, shown) -> ValueError:
    """The one refusal of a value that must be a finite number > 0."""
    return ValueError(f"{name} must be a finite number > 0, got {shown}")


def not_an_integer(name: str, minimum: int, shown) -> ValueError:
    """The one refusal of a value that must be an integer >= ``minimum``."""
    return ValueError(f"{name} must be an integer >= {minimum}, got {shown}")


def too_many_clusters(k: int) -> ValueError:
    """k > n, said without n (the row count may be private)."""
    return ValueError(f"n_clusters={k} is larger than the number of rows; lower n_clusters")


def check_epsilon(epsilon, name: str = "epsilon") -> float:
    """ε as float; refused unless EPSILON_MIN <= ε <= EPSILON_MAX (one rule everywhere).
    ``name`` is how the message calls it (``--epsilon`` on the command line); the value is
    shown as given (its shortest exact repr), never rounded."""
    epsilon = check_real(epsilon, name)
    if not epsilon > 0 or not np.isfinite(epsilon):
        raise not_positive(name, repr(epsilon))
    if not EPSILON_MIN <= epsilon <= EPSILON_MAX:
        raise ValueError(
            f"{name} must be between {EPSILON_MIN:g} and {EPSILON_MAX:g} (the range the "
            f"accountant supports), got {epsilon!r}"
        )
    return epsilon


def check_delta(delta, name: str = "delta") -> float:
    """δ as float; refused unless DELTA_MIN <= δ < 1 (``name`` and the value as in
    :func:`check_epsilon`)."""
    delta = check_real(delta, name)
    if not 0 < delta < 1:
        raise ValueError(f"{name} must be in (0, 1), got {delta!r}")
    if delta < DELTA_MIN:
        raise ValueError(
            f"{name} must be at least {DELTA_MIN:g} (the smallest the accountant supports), "
            f"got {delta!r}"
        )
    return delta


def check_rounds(rounds, name: str = "iterations") -> int:
    """T as int; refused above MAX_ROUNDS with a line that says what to pass."""
    rounds = check_positive_int(rounds, name)
    if rounds > MAX_ROUNDS:
        raise ValueError(
            f"{name} must be at most {MAX_ROUNDS} (PE rounds), got {rounds}; pass a smaller one"
        )
    return rounds


def check_positive_int(value, name: str, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise not_an_integer(name, minimum, repr(value))
    if value < minimum:
        raise not_an_integer(name, minimum, value)
    return int(value)


def check_positive_real(value, name: str) -> float:
    value = check_real(value, name)
    if not value > 0 or not np.isfinite(value):
        raise not_positive(name, value)
    return value


def check_random_state(random_state) -> np.random.Generator:
    """A ``numpy.random.Generator`` from None, an int seed or a Generator."""
    if isinstance(random_state, np.random.Generator):
        return random_state
    if random_state is None or isinstance(random_state, (numbers.Integral, np.random.SeedSequence)):
        return np.random.default_rng(random_state)
    raise ValueError(
        "random_state must be None, an int or a numpy.random.Generator, "
        f"got {type(random_state).__name__}"
    )


def check_real(value, name: str) -> float:
    """A real number (not bool) as float, else a ValueError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a real number, got {value!r}")
    return float(value)


# -- declared constraints (``_parameter_constraints``) -------------------------------------
#
# An estimator declares ``{parameter: [constraint, ...]}``; a value is accepted when any one
# constraint holds. A constraint is a type (``isinstance``, runtime-checkable Protocols
# included), ``None``, ``"boolean"``, ``"array-like"`` or one of the classes below. The
# message follows scikit-learn's wording so that both kinds of estimator read alike.


@dataclass(frozen=True)
class Interval:
    """Numbers of ``kind`` (``numbers.Integral`` or ``numbers.Real``; never bool) in a range.

    ``closed``: ``"both"``, ``"left"``, ``"right"`` or ``"neither"``; a bound of None is
    infinite.
    """

    kind: type
    low: float | None
    high: float | None
    closed: str = "both"

    def accepts(self, value) -> bool:
        if isinstance(value, bool) or not isinstance(value, self.kind):
            return False
        low_ok = self.low is None or (
            value >= self.low if self.closed in ("both", "left") else value > self.low
        )
        high_ok = self.high is None or (
            value <= self.high if self.closed in ("both", "right") else value < self.high
        )
        return bool(low_ok and high_ok)

    def __str__(self) -> str:
        integral = self.kind is numbers.Integral
        shown = (lambda b: b) if integral else float
        low = "-inf" if self.low is None else shown(self.low)
        high = "inf" if self.high is None else shown(self.high)
        left = "[" if self.closed in ("both", "left") and self.low is not None else "("
        right = "]" if self.closed in ("both", "right") and self.high is not None else ")"
        return f"{'an int' if integral else 'a float'} in the range {left}{low}, {high}{right}"


@dataclass(frozen=True)
class Options:
    """Values of ``kind`` among ``values``."""

    kind: type
    values: frozenset

    def accepts(self, value) -> bool:
        return isinstance(value, self.kind) and not isinstance(value, bool) and value in self.values

    def __str__(self) -> str:
        listed = ", ".join(repr(v) for v in sorted(self.values, key=str))
        return f"a {'str' if self.kind is str else 'float'} among {{{listed}}}"


def StrOptions(values) -> Options:
    """Strings among ``values``."""
    return Options(str, frozenset(values))


@dataclass(frozen=True)
class HasMethods:
    """Objects that implement every one of ``methods`` (a duck-typed plug-in)."""

    methods: tuple[str, ...]

    def accepts(self, value) -> bool:
        return all(callable(getattr(value, m, None)) for m in self.methods)

    def __str__(self) -> str:
        return "an object implementing " + ", ".join(repr(m) for m in self.methods)


#: The run-level parameters every estimator shares, declared once: ε (finite; an engine that
#: offers a non-private reference run adds ``math.inf``), δ, the adjacency, the seed and a budget
#: accountant. Each estimator extends them (``{**RUN_CONSTRAINTS, ...}``), as scikit-learn's
#: ``_BaseKMeans`` shares its constraints with ``KMeans`` and ``MiniBatchKMeans``.
RUN_CONSTRAINTS: dict = {
    "epsilon": [Interval(numbers.Real, EPSILON_MIN, EPSILON_MAX, closed="both")],
    "delta": [Interval(numbers.Real, DELTA_MIN, 1, closed="left")],
    "adjacency": [StrOptions(set(ADJACENCIES))],
    "random_state": [numbers.Integral, np.random.Generator, None],
    "accountant": [HasMethods(("check", "charge")), None],
}
#: ε of an engine that also offers a non-private reference run (``epsilon=math.inf``).
EPSILON_OR_INF: list = [*RUN_CONSTRAINTS["epsilon"], Options(numbers.Real, frozenset({math.inf}))]
#: T, the private releases of one run.
ROUNDS: list = [Interval(numbers.Integral, 1, MAX_ROUNDS, closed="both")]


def validate_params(constraints: dict, params: dict, caller: str) -> None:
    """Raise :class:`InvalidParameterError` for the first parameter no constraint accepts.

    Parameters without an entry in ``constraints`` are not checked. The message names
    the parameter and what it must be; it quotes the value only when it is a plain
    scalar (a number, a string, None), never an array or an object's contents.
    """
    for name, value in params.items():
        allowed = constraints.get(name)
        if allowed is None or any(_accepts(c, value) for c in allowed):
            continue
        wanted = [_describe(c) for c in allowed]
        must = wanted[0] if len(wanted) == 1 else f"{', '.join(wanted[:-1])} or {wanted[-1]}"
        raise InvalidParameterError(
            f"The {name!r} parameter of {caller} must be {must}. Got {_shown(value)} instead."
        )


def _accepts(constraint, value) -> bool:
    if constraint is None:
        return value is None
    if constraint == "boolean":
        return isinstance(value, (bool, np.bool_))
    if constraint == "array-like":
        return not isinstance(value, str) and (
            hasattr(value, "__array__") or hasattr(value, "__len__") or hasattr(value, "shape")
        )
    if isinstance(constraint, type):
        return isinstance(value, constraint)
    return constraint.accepts(value)


def _describe(constraint) -> str:
    if constraint is None:
        return "None"
    if constraint in ("boolean", "array-like"):
        return "a bool" if constraint == "boolean" else "an array-like"
    if isinstance(constraint, type):
        return f"an instance of {constraint.__name__!r}"
    return str(constraint)


def _shown(value) -> str:
    """The value as a message may show it: plain scalars by repr, anything else by its type."""
    if value is None or isinstance(value, (bool, numbers.Number, np.generic)):
        return repr(value)
    if isinstance(value, str) and len(value) <= 40:
        return repr(value)
    return f"a {type(value).__name__}"
