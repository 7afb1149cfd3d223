"""Generated neighbours: for each kind of input, every neighbour the privacy checks try.

A path is tested with the neighbours its author thought of unless they are generated: every
entry point of one input kind gets the same list (tests/helpers/entry_points.py), under its
adjacency. Each generator returns ``{name: D'}``; every D' is valid input wherever D is.

* points — an extreme row, a row on the domain's edge, a duplicate, the first or the last row
  removed, a decimal in an integer-valued column (what a CSV reader might type by), a row of
  tiny values; replace: the first row replaced by each of those.
* users (points with user ids) — a new user owning many rows, a user removed with all their
  rows; replace: one user's rows replaced by many more, far away.
* tables — a missing value in each nullable column, an extreme number, a decimal in an
  integer-valued (not integer-declared) column, and where a category column maps unlisted values
  to ``other``: a code with a leading zero, a number-like string, a code with whitespace, an
  unlisted category; a row with every odd cell at once; a duplicate, a removed row; replace:
  the first row replaced by each new row.
* texts — an empty text, a very long one, one like a header, a duplicate, a removed text;
  labelled texts add a text of an unlisted label.
* :func:`random_neighbours` — many random neighbours of any kind above, for the search that keeps
  the largest sensitivity ratio (as DP-Auditorium's dataset finders do).

The sizes around every size-dependent branch are in tests/helpers/size_branches.py.
"""

from __future__ import annotations

import numpy as np

EXTREME = 1e6


# -- points -----------------------------------------------------------------------------------


def _point_rows(X: np.ndarray, edge: float) -> dict[str, np.ndarray]:
    """New rows to add (or to replace the first row with)."""
    d = X.shape[1]
    rows = {
        "an extreme row": np.tile([EXTREME, -EXTREME], d)[:d],
        "a row on the domain's edge": np.full(d, edge / np.sqrt(d)),
        "a duplicate of row 1": X[1].copy(),
        "a row of tiny values": np.full(d, 1e-300),
    }
    integer = [j for j in range(d) if np.all(X[:, j] == np.round(X[:, j]))]
    if integer:
        decimal = X[1].copy()
        decimal[integer[0]] += 0.5
        rows["a decimal in an integer-valued column"] = decimal
    return rows


def point_neighbours(X: np.ndarray, adjacency: str, edge: float = 3.0) -> dict[str, np.ndarray]:
    """Neighbours of an (n, d) array under ``adjacency``."""
    X = np.asarray(X)
    rows = _point_rows(X, edge)
    if adjacency == "replace":
        return {f"the first row replaced by {k}": np.vstack([r, X[1:]]) for k, r in rows.items()}
    added = {f"add {k}": np.vstack([X, r]) for k, r in rows.items()}
    return {**added, "remove the first row": X[1:], "remove the last row": X[:-1]}


def user_neighbours(data, adjacency: str) -> dict[str, tuple]:
    """Neighbours of (X, user ids): users, not rows, are added, removed or replaced."""
    X, users = (np.asarray(a) for a in data)
    many = np.vstack([X[:1] + 0.01 * k for k in range(12)])
    if adjacency == "replace":
        far = np.tile([EXTREME, -EXTREME], X.shape[1])[: X.shape[1]]
        keep = users != users[0]
        return {
            "user 0 owns many more rows": (
                np.vstack([X[keep], many]),
                np.concatenate([users[keep], np.full(len(many), users[0])]),
            ),
            "user 0's rows replaced by one extreme row": (
                np.vstack([X[keep], far]),
                np.concatenate([users[keep], [users[0]]]),
            ),
        }
    new_user = users.max() + 1
    keep = users != users[0]
    return {
        "add a user owning many rows": (
            np.vstack([X, many]),
            np.concatenate([users, np.full(len(many), new_user)]),
        ),
        "remove user 0 with all their rows": (X[keep], users[keep]),
    }


# -- tables -----------------------------------------------------------------------------------


def _table_rows(df, metadata) -> dict[str, dict]:
    """New rows: a copy of row 1 with one cell changed, for each kind of odd cell."""
    import pandas as pd

    base = df.iloc[1].to_dict()
    rows = {"a duplicate of row 1": dict(base), "a row unlike any other": dict(base)}
    for spec in metadata.columns:
        name = spec.name
        odd = None if spec.nullable else 10**9 if spec.kind == "numeric" else "unlisted-value"
        if spec.nullable or spec.kind == "numeric" or spec.other is not None:
            rows["a row unlike any other"][name] = odd  # every odd cell at once
        if spec.nullable:
            rows[f"a missing {name}"] = {**base, name: None}
        if spec.kind == "numeric":
            rows[f"an extreme {name}"] = {**base, name: 10**9}
            if not spec.integer and pd.api.types.is_integer_dtype(df[name]):
                rows[f"a decimal in integer-valued {name}"] = {
                    **base,
                    name: float(base[name]) + 0.5,
                }
        if spec.kind == "categorical" and spec.other is not None:  # else unlisted is invalid
            first = str(spec.categories[0])
            rows[f"an unlisted {name}"] = {**base, name: "unlisted-value"}
            rows[f"a number-like {name}"] = {**base, name: "1234"}
            rows[f"a {name} with a leading zero"] = {**base, name: "0" + first}
            rows[f"a {name} with whitespace"] = {**base, name: f" {first} "}
    return rows


def table_neighbours(df, metadata, adjacency: str) -> dict[str, object]:
    """Neighbours of a pandas table described by ``metadata`` under ``adjacency``."""
    import pandas as pd

    rows = _table_rows(df, metadata)

    def with_row(row: dict, replace: bool):  # pandas types the result as a reader would
        new = pd.DataFrame([row])
        rest = df.iloc[1:] if replace else df
        return pd.concat([new, rest] if replace else [rest, new], ignore_index=True)

    if adjacency == "replace":
        return {f"the first row replaced by {k}": with_row(r, True) for k, r in rows.items()}
    added = {f"add {k}": with_row(r, False) for k, r in rows.items()}
    return {**added, "remove the first row": df.iloc[1:], "remove the last row": df.iloc[:-1]}


# -- texts ------------------------------------------------------------------------------------

_ODD_TEXTS = {
    "an empty text": "",
    "a very long text": "Zzz " * 400 + "diagnosed 078-05-1120",
    "a text like a header": "review",
}


def text_neighbours(texts: list[str], adjacency: str) -> dict[str, list[str]]:
    """Neighbours of a list of private texts."""
    texts = list(texts)
    odd = {**_ODD_TEXTS, "a duplicate of text 1": texts[1]}
    if adjacency == "replace":
        return {f"the first text replaced by {k}": [t, *texts[1:]] for k, t in odd.items()}
    added = {f"add {k}": [*texts, t] for k, t in odd.items()}
    return {**added, "remove the first text": texts[1:], "remove the last text": texts[:-1]}


def labelled_text_neighbours(data, adjacency: str, unlisted: str = "unlisted") -> dict:
    """Neighbours of (texts, labels): the text neighbours with a listed label, and a text of an
    unlisted label."""
    texts, labels = (list(a) for a in data)
    neighbours = {}
    for name, new in text_neighbours(texts, adjacency).items():
        if len(new) == len(texts):  # replaced: keep the labels
            neighbours[name] = (new, labels)
        elif len(new) > len(texts):
            neighbours[name] = (new, [*labels, labels[1]])
        else:
            neighbours[name] = (new, labels[1:] if new == texts[1:] else labels[:-1])
    odd = ("a text of an unlisted label", [texts[1]], [unlisted])
    if adjacency == "replace":
        neighbours[odd[0]] = ([*odd[1], *texts[1:]], [*odd[2], *labels[1:]])
    else:
        neighbours[odd[0]] = ([*texts, *odd[1]], [*labels, *odd[2]])
    return neighbours


# -- the random search ------------------------------------------------------------------------


def random_neighbours(X: np.ndarray, adjacency: str, count: int, scale: float, seed: int) -> dict:
    """``count`` random neighbours of an (n, d) array: a random row added, removed or replaced by
    a point drawn at a random scale (a heavy-tailed radius up to ``scale``·10³)."""
    rng = np.random.default_rng(seed)
    X = np.asarray(X)
    n, d = X.shape
    neighbours = {}
    for k in range(count):
        direction = rng.standard_normal(d)
        row = direction / np.linalg.norm(direction) * scale * 10 ** rng.uniform(-2, 3)
        i = int(rng.integers(n))
        if adjacency == "replace":
            neighbours[f"random {k}: row {i} replaced"] = np.vstack([X[:i], row, X[i + 1 :]])
        elif rng.random() < 0.5:
            neighbours[f"random {k}: a row added"] = np.vstack([X, row])
        else:
            neighbours[f"random {k}: row {i} removed"] = np.delete(X, i, axis=0)
    return neighbours
