"""Derived columns: a column that is a public function of other columns (docs/tabular.md,
"Derived columns").

A description line ``logwage: derived log(wage)`` declares that ``logwage`` is
``log(wage)`` in every row. A derived column is never measured: it is not encoded, no
release counts it and no budget is spent on it; it is computed on the synthetic rows after
they are drawn (post-processing), so it agrees with its expression in every synthetic row.
A table may hold it or not: the fit never reads it.

Expressions are parsed by :mod:`ast` and checked against a whitelist (nothing is passed to
``eval``): numbers, column names, ``+ - * / **``, unary ``-``, and the functions ``log``
(natural), ``exp``, ``sqrt``, ``abs``, ``min``, ``max`` (element-wise, two or more
arguments) and ``round`` (half to even, optional constant digits). Columns are numeric or
other derived columns (no cycle). A result that is not a finite number (``log(0)``, a
division by 0) or that uses a missing value is missing.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

import numpy as np

__all__ = ["DerivedColumn", "DerivedError", "FUNCTIONS", "check_derived", "compute_derived"]

FUNCTIONS = {
    "log": (np.log, 1, 1),
    "exp": (np.exp, 1, 1),
    "sqrt": (np.sqrt, 1, 1),
    "abs": (np.abs, 1, 1),
    "min": (None, 2, None),
    "max": (None, 2, None),
    "round": (None, 1, 2),
}
_OPERATORS = {
    ast.Add: np.add,
    ast.Sub: np.subtract,
    ast.Mult: np.multiply,
    ast.Div: np.divide,
    ast.Pow: np.power,
}
ALLOWED = "numbers, column names, + - * / **, unary -, log, exp, sqrt, abs, min, max, round"


class DerivedError(ValueError):
    """A refused derived column; ``name`` says which (a description names its line)."""

    def __init__(self, name: str, message: str):
        super().__init__(message)
        self.name = name


@dataclass(frozen=True)
class DerivedColumn:
    """A derived column: its name, its expression's text and its index in the table's order."""

    name: str
    expression: str
    position: int

    def as_dict(self) -> dict:
        return {"name": self.name, "kind": "derived", "expression": self.expression}

    @property
    def tree(self) -> ast.Expression:
        return parse(self.expression)

    @property
    def uses(self) -> list[str]:
        """The column names the expression reads (checked by :func:`parse`)."""
        return sorted({n.id for n in ast.walk(self.tree) if isinstance(n, ast.Name)} - {*FUNCTIONS})


def parse(expression: str) -> ast.Expression:
    """The checked syntax tree of an expression, else a ValueError naming what is refused."""
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except SyntaxError:
        raise ValueError(f"{expression!r} is not an expression; use {ALLOWED}") from None
    for node in ast.walk(tree):
        _check_node(node)
    return tree


def _check_node(node: ast.AST) -> None:
    allowed = (ast.Expression, ast.Name, ast.Load, ast.BinOp, ast.UnaryOp, ast.USub, ast.Call)
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or not isinstance(node.value, (int, float)):
            raise ValueError(f"{node.value!r} is not a number; use {ALLOWED}")
    elif isinstance(node, ast.BinOp) and type(node.op) not in _OPERATORS:
        raise ValueError(f"operator {_text(node)!r} is not allowed; use {ALLOWED}")
    elif isinstance(node, ast.Call):
        _check_call(node)
    elif not isinstance(node, (*allowed, *_OPERATORS)):
        raise ValueError(f"{_text(node)!r} is not allowed in an expression; use {ALLOWED}")


def _check_call(node: ast.Call) -> None:
    name = node.func.id if isinstance(node.func, ast.Name) else None
    if name not in FUNCTIONS or node.keywords:
        raise ValueError(f"{_text(node)!r} is not an allowed function call; use {ALLOWED}")
    _, least, most = FUNCTIONS[name]
    if len(node.args) < least or (most is not None and len(node.args) > most):
        count = f"{least}" if least == most else f"{least} or more" if most is None else "1 or 2"
        raise ValueError(f"{name}() takes {count} argument(s), got {len(node.args)}")
    if name == "round" and len(node.args) == 2:
        digits = node.args[1]
        if not (isinstance(digits, ast.Constant) and type(digits.value) is int):
            raise ValueError("round(x, digits): digits must be a whole number such as 2")


def _text(node: ast.AST) -> str:
    try:
        return ast.unparse(node)
    except Exception:  # pragma: no cover - unparse handles every parsed node
        return type(node).__name__


def check_derived(derived, columns) -> None:
    """Every derived column's expression is allowed, names numeric columns or other derived
    columns, and no derived column depends on itself: a ValueError naming the column."""
    kinds = {spec.name: spec.kind for spec in columns}
    by_name = {d.name: d for d in derived}
    for d in derived:
        if d.name in kinds:
            raise DerivedError(
                d.name, f"column {d.name!r} is declared twice (once derived); keep one"
            )
        try:
            uses = d.uses
        except ValueError as err:
            raise DerivedError(d.name, f"derived column {d.name!r}: {err}") from None
        unknown = [u for u in uses if u not in kinds and u not in by_name]
        if unknown:
            raise DerivedError(
                d.name,
                f"derived column {d.name!r} uses {unknown}, which the metadata does not "
                "describe; fix the names",
            )
        not_numeric = [u for u in uses if u in kinds and kinds[u] != "numeric"]
        if not_numeric:
            raise DerivedError(
                d.name,
                f"derived column {d.name!r} uses {not_numeric}, which are not numeric; an "
                "expression reads numeric or derived columns",
            )
    order(derived)


def order(derived) -> list:
    """The derived columns in an order that computes each after those it uses (refuses a
    cycle, naming its columns)."""
    by_name = {d.name: d for d in derived}
    done: list = []
    pending = list(derived)
    while pending:
        ready = [d for d in pending if all(u not in by_name or u in done for u in d.uses)]
        if not ready:
            names = sorted(d.name for d in pending)
            raise DerivedError(
                names[0],
                f"derived column(s) {names} depend on each other in a cycle; derive each from "
                "measured columns",
            )
        done.extend(d.name for d in ready)
        pending = [d for d in pending if d.name not in done]
    return [by_name[name] for name in done]


def compute_derived(frame, derived) -> None:
    """Insert every derived column into ``frame`` (a DataFrame of the measured columns), at
    its position, as float64 (missing where not a finite number)."""
    values = {}
    for d in order(derived):

        def column(name: str) -> np.ndarray:
            return values[name] if name in values else frame[name].to_numpy(float, na_value=np.nan)

        with np.errstate(all="ignore"):
            result = np.asarray(_evaluate(d.tree.body, column), dtype=float)
        result = np.broadcast_to(result, (len(frame),)).copy()
        result[~np.isfinite(result)] = np.nan
        values[d.name] = result
    for d in sorted(derived, key=lambda d: d.position):
        frame.insert(min(d.position, frame.shape[1]), d.name, values[d.name])


def _evaluate(node: ast.AST, column):
    if isinstance(node, ast.Constant):
        return float(node.value)
    if isinstance(node, ast.Name):
        return column(node.id)
    if isinstance(node, ast.UnaryOp):
        return np.negative(_evaluate(node.operand, column))
    if isinstance(node, ast.BinOp):
        left, right = _evaluate(node.left, column), _evaluate(node.right, column)
        return _OPERATORS[type(node.op)](left, right)
    name, args = node.func.id, node.args
    if name in ("min", "max"):
        pick = np.minimum if name == "min" else np.maximum
        out = _evaluate(args[0], column)
        for arg in args[1:]:
            out = pick(out, _evaluate(arg, column))
        return out
    if name == "round":
        digits = args[1].value if len(args) == 2 else 0
        return np.round(_evaluate(args[0], column), digits)
    return FUNCTIONS[name][0](_evaluate(args[0], column))
