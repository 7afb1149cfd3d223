"""Constructor parameters of plug-ins, read by introspection (scikit-learn's ``get_params`` idea).

A plug-in (random API, variation API, selector) stores each ``__init__``
parameter under an attribute of the same name. :func:`describe` turns an
object into a JSON-able description of *every* such parameter, recursively,
so a checkpoint's fingerprint changes when any of them does, and a ``repr``
can be generated from the same list (:func:`params_repr`).
"""

from __future__ import annotations

import hashlib
import inspect
from typing import Any

import numpy as np

__all__ = ["Plugin", "constructor_params", "describe", "params_repr"]

_SKIP = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)


def constructor_params(obj) -> dict[str, Any]:
    """``{name: value}`` of every ``__init__`` parameter of ``obj``, from its attributes.

    Raises ``TypeError`` if an attribute is missing (the plug-in must store it).
    """
    names = [
        name
        for name, p in inspect.signature(type(obj).__init__).parameters.items()
        if name != "self" and p.kind not in _SKIP
    ]
    missing = [name for name in names if not hasattr(obj, name)]
    if missing:
        raise TypeError(f"{type(obj).__name__} must store its parameters {missing} as attributes")
    return {name: getattr(obj, name) for name in names}


def describe(value, depth: int = 0) -> Any:
    """A JSON-able description that changes whenever any parameter, at any depth, changes."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.random.Generator):
        return "Generator"
    if isinstance(value, np.ndarray):
        data = np.ascontiguousarray(value)
        return {
            "array": hashlib.sha256(data.tobytes()).hexdigest(),
            "shape": list(value.shape),
            "dtype": str(value.dtype),
        }
    if isinstance(value, dict):
        return {str(k): describe(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [describe(v, depth + 1) for v in value]
    if _is_plugin(value) and depth < 8:
        try:
            params = constructor_params(value)
        except TypeError:
            return repr(value)
        return {
            "class": type(value).__qualname__,
            **{
                k: "<secret>" if _is_secret(k) else describe(v, depth + 1)
                for k, v in params.items()
            },
        }
    if callable(value):
        return getattr(value, "__qualname__", repr(value))
    return repr(value)


def params_repr(obj) -> str:
    """``Class(a=1, b=2)`` from the constructor parameters that differ from their defaults."""
    defaults = {
        name: p.default for name, p in inspect.signature(type(obj).__init__).parameters.items()
    }
    changed = {
        k: v
        for k, v in constructor_params(obj).items()
        if defaults.get(k, inspect.Parameter.empty) is inspect.Parameter.empty
        or describe(v) != describe(defaults[k])
    }
    params = ", ".join(f"{k}={_short(v)}" for k, v in changed.items())
    return f"{type(obj).__name__}({params})"


class Plugin:
    """Base of the plug-ins (random APIs, variation APIs, selectors).

    ``get_params`` and ``repr`` come from the constructor's signature, so they
    list every parameter, as the checkpoint's fingerprint does.
    """

    def get_params(self) -> dict[str, Any]:
        """Every constructor parameter and its value."""
        return constructor_params(self)

    def __repr__(self) -> str:
        return params_repr(self)


def _short(value) -> str:
    if isinstance(value, np.ndarray) and value.size > 8:
        return f"array(shape={value.shape})"
    return repr(value)


def _is_secret(name: str) -> bool:
    """Credentials (``api_key``, ``auth_token``, ``password``) are kept out of fingerprints.

    The name's last word decides, so counts such as ``max_new_tokens`` stay in.
    """
    return name.lower().split("_")[-1] in ("key", "apikey", "token", "password", "secret")


def _is_plugin(value) -> bool:
    return type(value).__module__.startswith("privevo") and not isinstance(value, type)
