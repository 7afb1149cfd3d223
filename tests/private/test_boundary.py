"""The private boundary, checked on the source tree (docs/privacy.md, "The private boundary").

The rules, checked on the AST of every module of ``src/privevo``:

1. **Imports form no circle.** Edges are the modules a module names in an
   ``import`` statement (module level or inside functions; a parent package
   that Python runs implicitly is not an edge). Each module also imports on
   its own in a fresh interpreter.
2. **Only ``privevo/private/`` reaches into ``privevo.private``.** Every other
   module imports the package ``privevo.private`` (its public names), never a
   submodule such as ``privevo.private.kernel``.
3. **No noise outside ``privevo/private/``.** Outside it, no random draw (a
   Generator/``numpy.random``/``random`` method such as ``normal``,
   ``laplace``, ``choice``, a ``scipy.stats`` ``.rvs``, or any ``secrets``
   call) may take a private-data-derived value as an argument, or be combined
   with one (``+``, ``+=``, ``np.add``, ``np.where``, ... — also through a name
   or attribute assigned from a draw, ``noise = rng.normal(...)``). Private data
   are the parameters named in ``PRIVATE_NAMES`` and every name or attribute
   (``self.m_``) assigned, in the same function, from an expression that uses
   one, except through ``.shape[1]``, ``.shape[-1]``, ``.ndim`` and ``.dtype``
   (the public schema). Exempt: ``privevo/audit/`` (it draws the neighbouring
   data sets it audits), ``privevo/evaluation.py``, ``metrics.py`` and
   ``plots.py`` (the documented evaluation door, not DP).

   What this rule does not see: private data under a parameter name outside
   ``PRIVATE_NAMES``, values carried between functions or methods (a return
   value, ``self.m_`` set in ``fit`` and read in another method), and draws
   hidden behind a helper function. Those are left to the dynamic check,
   ``tests/privacy/test_neighbour_replay*.py``, which compares every published byte on
   neighbouring data with the releases pinned.
4. **σ is calibrated in one place:** ``gaussian_sigma(`` is called only in
   ``accounting.py`` (by ``calibrate``) and in ``privevo/private/``.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import REPO_ROOT, import_graph_tool

SRC = REPO_ROOT / "src"
PRIVATE_NAMES = {  # parameters that hold private rows, ids or labels wherever they appear
    *("X", "Z", "private", "texts", "groups", "df", "data", "frame", "rows", "table"),
    *("y", "labels", "sample_weight"),
}
DRAWS = {
    "normal",
    "standard_normal",
    "laplace",
    "gumbel",
    "exponential",
    "uniform",
    "random",
    "choice",
    "integers",
    "permutation",
    "permuted",
    "shuffle",
    "binomial",
    "poisson",
    "geometric",
    "multivariate_normal",
    "rand",
    "randn",
    "randint",
    "gauss",
    "randrange",
    "sample",
    "discrete_gaussian",
    "rvs",  # scipy.stats
}
SCHEMA_ATTRS = {"ndim", "dtype"}
ARITHMETIC = {  # numpy calls that combine their operands elementwise
    *("add", "subtract", "multiply", "divide", "true_divide", "where", "clip", "maximum"),
    *("minimum", "fmax", "fmin", "concatenate", "stack", "vstack", "hstack", "column_stack"),
    *("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__iadd__"),
}
EXEMPT = {"privevo/evaluation.py", "privevo/metrics.py", "privevo/plots.py"}
EXEMPT_PACKAGES = ("privevo.private", "privevo.audit")  # the boundary itself; the audit


def modules(root: Path = SRC) -> dict[str, Path]:
    """Dotted module name → file, for every module under ``root/privevo``."""
    return import_graph_tool().module_files(root)


def extensions(root: Path = SRC) -> set[str]:
    """Compiled modules (leaves of the graph: they import nothing of privevo)."""
    return {
        ".".join(p.relative_to(root).parts[:-1] + (p.name.split(".")[0],))
        for p in (root / "privevo").rglob("*.so")
    }


def import_graph(root: Path = SRC) -> dict[str, set[str]]:
    """Module → the privevo modules it imports (tools/import_graph.py's reading of imports,
    lazy ones included), over any copy of the package under ``root``."""
    tool = import_graph_tool()
    known = tool.module_files(root)
    targets = set(known) | extensions(root)
    return {
        name: {m for m in tool.imports_of(name, path, targets)[0] if m in known}
        for name, path in known.items()
    }


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle as [a, b, …, a], or None (iterative depth-first search)."""
    state: dict[str, int] = {}
    for start in graph:
        if state.get(start):
            continue
        stack, path = [(start, iter(sorted(graph[start])))], [start]
        state[start] = 1
        while stack:
            node, children = stack[-1]
            child = next(children, None)
            if child is None:
                state[node] = 2
                stack.pop()
                path.pop()
            elif state.get(child) == 1:
                return path[path.index(child) :] + [child]
            elif not state.get(child):
                state[child] = 1
                stack.append((child, iter(sorted(graph[child]))))
                path.append(child)
    return None


def private_reach_violations(root: Path = SRC) -> list[str]:
    """Modules outside privevo/private that import one of its submodules."""
    graph = import_graph(root)
    return sorted(
        f"{m} imports {t}"
        for m, targets in graph.items()
        if not m.startswith("privevo.private")
        for t in targets
        if t.startswith("privevo.private.")
    )


def _is_shape(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "shape"


def _is_draw(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    if isinstance(func, ast.Attribute):
        if isinstance(func.value, ast.Name) and func.value.id == "secrets":
            return True
        return func.attr in DRAWS
    return isinstance(func, ast.Name) and func.id in DRAWS


def _key(node: ast.AST) -> str | None:
    """``"x"`` for a name, ``"self.m_"`` for an attribute chain on a name, else None."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _key(node.value)
        return None if base is None else f"{base}.{node.attr}"
    return None


def _uses(node: ast.AST, tainted: set[str]) -> bool:
    """Whether ``node`` reads a tainted name or attribute other than through the public schema."""
    if isinstance(node, ast.Subscript) and _is_shape(node.value):
        index = node.slice
        if isinstance(index, ast.UnaryOp) and isinstance(index.op, ast.USub):
            return False  # .shape[-1]: the number of features
        if isinstance(index, ast.Constant) and index.value != 0:
            return False  # .shape[1]
    if isinstance(node, ast.Attribute) and node.attr in SCHEMA_ATTRS:
        return False
    if isinstance(node, (ast.Name, ast.Attribute)) and _key(node) in tainted:
        return True
    return any(_uses(child, tainted) for child in ast.iter_child_nodes(node))


def _is_noise(node: ast.AST, noisy: set[str]) -> bool:
    """Whether ``node`` holds a random draw or a value assigned from one."""
    return any(
        _is_draw(n) or (isinstance(n, (ast.Name, ast.Attribute)) and _key(n) in noisy)
        for n in ast.walk(node)
    )


def _bound_keys(target: ast.AST) -> list[str]:
    """What an assignment target binds: ``a``, ``a, b``, ``self.m_``, ``a[i]`` (binds ``a``)."""
    if isinstance(target, (ast.Tuple, ast.List)):
        return [k for elt in target.elts for k in _bound_keys(elt)]
    if isinstance(target, (ast.Starred, ast.Subscript)):
        return _bound_keys(target.value)
    key = _key(target)
    return [] if key is None else [key]


def _propagate(body: list[ast.AST], tainted: set[str]) -> tuple[set[str], set[str]]:
    """Private-derived and noise-derived names, to a fixed point over every assignment."""
    noisy: set[str] = set()
    assignments = [
        n
        for b in body
        for n in ast.walk(b)
        if isinstance(n, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.NamedExpr))
        and n.value is not None
    ]
    changed = True
    while changed:
        before = (len(tainted), len(noisy))
        for stmt in assignments:
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            keys = {k for t in targets for k in _bound_keys(t)}
            if _uses(stmt.value, tainted):
                tainted |= keys
            if _is_noise(stmt.value, noisy):
                noisy |= keys
        changed = (len(tainted), len(noisy)) != before
    return tainted, noisy


def _operands(node: ast.AST) -> list[ast.AST]:
    """The values an operation combines: both sides of ``a + b`` or ``a += b``, or the
    receiver and arguments of an elementwise numpy call (``np.add(a, b)``, ``a.__add__(b)``).
    A draw merely passed to another function (a random projection, a seed) is not a mix."""
    if isinstance(node, ast.BinOp):
        return [node.left, node.right]
    if isinstance(node, ast.AugAssign):
        return [node.target, node.value]
    if isinstance(node, ast.Call) and _call_name(node) in ARITHMETIC:
        receiver = [node.func.value] if isinstance(node.func, ast.Attribute) else []
        return [*receiver, *node.args, *(k.value for k in node.keywords)]
    return []


def _call_name(node: ast.Call) -> str:
    return getattr(node.func, "attr", getattr(node.func, "id", ""))


def _mixes(node: ast.AST, tainted: set[str], noisy: set[str]) -> bool:
    """Whether one operand is noise and another is private-derived."""
    parts = _operands(node)
    return any(
        _is_noise(a, noisy) and _uses(b, tainted)
        for i, a in enumerate(parts)
        for j, b in enumerate(parts)
        if i != j
    )


def noise_violations_in(source: str, where: str) -> list[str]:
    """Random draws fed by, or combined with, private-derived values (rule 3) in one module."""
    found = []
    for func in ast.walk(ast.parse(source)):
        if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        args = func.args
        params = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
        body = func.body if isinstance(func.body, list) else [func.body]
        tainted, noisy = _propagate(body, {p for p in params if p in PRIVATE_NAMES})
        if not tainted:
            continue
        for node in (n for b in body for n in ast.walk(b)):
            if _is_draw(node) and (
                any(_uses(a, tainted) for a in node.args)
                or any(_uses(k.value, tainted) for k in node.keywords)
            ):
                found.append(f"{where}:{node.lineno} draws from private-derived values")
            elif _mixes(node, tainted, noisy):
                found.append(f"{where}:{node.lineno} adds a random draw to private-derived values")
    return sorted(set(found))


def noise_violations(root: Path = SRC) -> list[str]:
    out = []
    for name, path in modules(root).items():
        rel = path.relative_to(root).as_posix()
        if name.startswith(EXEMPT_PACKAGES) or rel in EXEMPT:
            continue
        out += noise_violations_in(path.read_text(), rel)
    return out


def sigma_violations(root: Path = SRC) -> list[str]:
    out = []
    for name, path in modules(root).items():
        if name.startswith("privevo.private") or name == "privevo.accounting":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Call)
                and getattr(node.func, "id", getattr(node.func, "attr", "")) == "gaussian_sigma"
            ):
                out.append(f"{name}:{node.lineno}")
    return out


# -- the tree ------------------------------------------------------------------------------


def test_the_import_graph_has_no_circle():
    graph = import_graph()
    assert len(graph) > 50 and "privevo.private.kernel" in graph
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph))


def test_only_the_private_package_reaches_into_itself():
    assert private_reach_violations() == []
    graph = import_graph()
    assert "privevo.private.kernel" in graph["privevo.private.blocks"]  # the rule sees real edges


def test_no_noise_is_drawn_on_private_data_outside_the_private_package():
    assert noise_violations() == []


def test_sigma_is_calibrated_in_one_function():
    assert sigma_violations() == []


ISOLATED_IMPORTS = """
import importlib, os, sys
import numpy, scipy.optimize, scipy.integrate, scipy.special, sklearn.base, threadpoolctl
from sklearn.utils import _param_validation, validation  # noqa
assert not any(m == "privevo" or m.startswith("privevo.") for m in sys.modules)
failed = []
for name in sys.argv[1:]:
    pid = os.fork()
    if pid == 0:  # a child that has imported nothing of privevo: the module alone
        try:
            importlib.import_module(name)
        except BaseException as err:
            print(f"{name}: {type(err).__name__}: {err}", file=sys.stderr)
            os._exit(1)
        os._exit(0)
    if os.waitpid(pid, 0)[1] != 0:
        failed.append(name)
print(" ".join(failed))
"""


@pytest.mark.slow
def test_every_module_imports_alone_in_a_fresh_interpreter():
    """Each module in a process where no privevo module was imported before (a fork of one that
    imported only third-party libraries), so no module leans on another's import order."""
    names = [n for n in modules() if not n.endswith("__main__")]
    done = subprocess.run(
        [sys.executable, "-W", "ignore", "-c", ISOLATED_IMPORTS, *names],
        capture_output=True,
        text=True,
        cwd=SRC.parent,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "", done.stderr[-2000:]
    broken = subprocess.run(
        [sys.executable, "-c", ISOLATED_IMPORTS, "privevo._version", "privevo.nope"],
        capture_output=True,
        text=True,
        cwd=SRC.parent,
        timeout=300,
    )
    assert broken.stdout.split() == ["privevo.nope"]  # a module that fails alone is named


# -- the checks catch planted violations ----------------------------------------------------


@pytest.fixture
def tree(tmp_path) -> Path:
    shutil.copytree(
        SRC / "privevo", tmp_path / "privevo", ignore=shutil.ignore_patterns("*.so", "__pycache__")
    )
    return tmp_path


def test_a_planted_draw_on_private_data_is_caught(tree):
    target = tree / "privevo" / "selection" / "simple.py"
    target.write_text(
        target.read_text() + "\n\ndef leak(X, rng):\n    return rng.normal(size=X.shape)\n"
    )
    assert noise_violations(tree) == [
        "privevo/selection/simple.py:"
        + str(len(target.read_text().splitlines()))
        + " draws from private-derived values"
    ]


def test_planted_noise_added_to_a_derived_value_is_caught(tree):
    target = tree / "privevo" / "kmeans" / "rounds.py"
    target.write_text(
        target.read_text() + "\n\ndef leak(Z, rng):\n    sums = Z.sum(axis=0)\n"
        "    return sums + rng.laplace(0.0, 1.0, size=3)\n"
    )
    assert len(noise_violations(tree)) == 1


def test_public_draws_with_the_feature_count_are_allowed():
    source = (
        "def basis(Z, rng, dim):\n    d = Z.shape[1]\n    return rng.standard_normal((d, dim))\n"
    )
    assert noise_violations_in(source, "x.py") == []
    leaky = "def basis(Z, rng):\n    n = Z.shape[0]\n    return rng.standard_normal(n)\n"
    assert noise_violations_in(leaky, "x.py") != []


def test_a_planted_kernel_import_and_circle_are_caught(tree):
    target = tree / "privevo" / "metrics.py"
    target.write_text(target.read_text() + "\nfrom .private.kernel import partial_counts  # noqa\n")
    assert private_reach_violations(tree) == ["privevo.metrics imports privevo.private.kernel"]
    kernel = tree / "privevo" / "private" / "kernel.py"
    kernel.write_text(
        kernel.read_text() + "\n\ndef _late():\n    from ..metrics import kmeans_loss  # noqa\n"
    )
    cycle = find_cycle(import_graph(tree))
    assert cycle is not None and "privevo.private.kernel" in cycle and "privevo.metrics" in cycle


def test_a_planted_sigma_is_caught(tree):
    target = tree / "privevo" / "kmeans" / "rounds.py"
    target.write_text(
        target.read_text()
        + "\n\ndef sigma():\n    return accounting.gaussian_sigma(1.0, 1e-6, 3)\n"
    )
    assert len(sigma_violations(tree)) == 1


@pytest.mark.parametrize(
    "leak",
    [
        "def leak(X, rng):\n    noise = rng.normal(size=3)\n    return X.mean(0) + noise\n",
        "def leak(X, rng):\n    s = X.sum(0)\n    s += rng.normal(size=3)\n    return s\n",
        "def leak(X, rng):\n    return np.add(X.mean(0), rng.laplace(size=3))\n",
        "def leak(X, rng):\n    return X.mean(0) + scipy.stats.norm.rvs(size=3)\n",
        "def leak(df, rng):\n    return df.mean() + rng.normal()\n",
        "def leak(self, X, rng):\n    self.m_ = X.mean(0)\n    return self.m_ + rng.normal()\n",
        "def leak(X, rng):\n    m = X.sum()\n    o = m\n    return np.where(o, o, rng.gumbel())\n",
    ],
)
def test_noise_reaching_private_values_through_names_and_calls_is_caught(leak):
    assert noise_violations_in(leak, "x.py") != []


def test_a_public_random_projection_of_private_rows_is_not_a_mix():
    source = "def codes(X, rng):\n    return hash_rows(X, rng.standard_normal((X.shape[1], 8)))\n"
    assert noise_violations_in(source, "x.py") == []


def unshown_release_violations(root: Path = SRC) -> list[str]:
    """Functions inside the boundary that noise values (``release_noise``) without showing the
    sensitivity seam their exact statistic (``observe_exact``): the sensitivity replay
    (tests/helpers/neighbour.py) could not see such a release."""
    found = []
    for path in sorted((root / "privevo" / "private").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.FunctionDef) or node.name == "release_noise":
                continue
            calls = {_call_name(c) for c in ast.walk(node) if isinstance(c, ast.Call)}
            if "release_noise" in calls and "observe_exact" not in calls:
                found.append(f"{path.name}:{node.lineno} {node.name}")
    return found


def test_every_release_shows_its_exact_statistic_to_the_sensitivity_seam():
    assert not unshown_release_violations()


def test_a_release_that_hides_its_statistic_is_caught(tree):
    path = tree / "privevo" / "private" / "extra.py"
    path.write_text(
        "from .release import release_noise\n\n\n"
        "def leaky(values, sigma, rng):\n    return release_noise(values, sigma, rng)\n"
    )
    assert unshown_release_violations(tree) == ["extra.py:4 leaky"]
