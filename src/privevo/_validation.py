"""Parameter and input checks shared by every public entry point.

Each check raises ``ValueError`` with one line that names the parameter and
says what to fix.
"""

from __future__ import annotations

import numbers

import numpy as np

#: The ε range the accountant is tested over (against an independent high-precision
#: computation): every entry point refuses an ε outside it.
EPSILON_MIN, EPSILON_MAX = 1e-6, 1e6
#: The smallest δ accepted (the accountant works in log space and is tested down to it).
DELTA_MIN = 1e-300
#: The most PE rounds (private releases T) of one run; a larger T is refused.
MAX_ROUNDS = 10_000


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
        raise ValueError(
            f"{name} must be 2-D (rows x features), got {array.ndim}-D with shape {array.shape}; "
            "reshape 1-D data with .reshape(-1, 1)"
        )
    if array.shape[0] < min_rows:
        raise ValueError(f"{name} must have at least {min_rows} row(s), got {array.shape[0]}")
    if array.shape[1] < 1:
        raise ValueError(f"{name} must have at least 1 feature column, got 0")
    if not np.isfinite(array).all():
        raise ValueError(f"{name} contains NaN or infinite values; drop or impute them first")
    return array


def check_same_dimension(candidate_dim: int, data_dim: int, name: str = "candidates") -> None:
    if candidate_dim != data_dim:
        raise ValueError(
            f"{name} have {candidate_dim} features but the data has {data_dim}; "
            "generate them in the data's dimension"
        )


def check_epsilon(epsilon) -> float:
    """ε as float; refused unless EPSILON_MIN <= ε <= EPSILON_MAX (one rule everywhere)."""
    epsilon = check_real(epsilon, "epsilon")
    if not epsilon > 0 or not np.isfinite(epsilon):
        raise ValueError(f"epsilon must be a finite number > 0, got {epsilon}")
    if not EPSILON_MIN <= epsilon <= EPSILON_MAX:
        raise ValueError(
            f"epsilon must be between {EPSILON_MIN:g} and {EPSILON_MAX:g} (the range the "
            f"accountant supports), got {epsilon:g}"
        )
    return epsilon


def check_delta(delta) -> float:
    """δ as float; refused unless DELTA_MIN <= δ < 1."""
    delta = check_real(delta, "delta")
    if not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1), got {delta}")
    if delta < DELTA_MIN:
        raise ValueError(
            f"delta must be at least {DELTA_MIN:g} (the smallest the accountant supports), "
            f"got {delta:g}"
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
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value}")
    return int(value)


def check_positive_real(value, name: str) -> float:
    value = check_real(value, name)
    if not value > 0 or not np.isfinite(value):
        raise ValueError(f"{name} must be a finite number > 0, got {value}")
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
