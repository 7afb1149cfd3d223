"""The import graph of ``src/privevo``, with its layers as docs/architecture.md defines them.

Standard library only. Usage::

    python tools/import_graph.py            # the graph, the upward imports, the cycles
    python tools/import_graph.py --check    # the same; exit status 1 if any rule is broken
    python tools/import_graph.py --dot      # the graph for Graphviz (``dot -Tsvg``)

An edge is a privevo module named in an ``import`` statement, at module level or inside a
function (a *lazy* import, marked ``~``). ``from . import x`` is an edge to ``x`` when ``x`` is a
module or a compiled extension (``setup.py``'s ``Extension`` names); a parent package that
Python runs implicitly is not an edge. The layers and the layer of each module are read from
docs/architecture.md: the table whose header starts ``| rank | layer |`` (bottom to top) and the
module table whose header starts ``| module | layer |`` (paths relative to ``src/privevo``;
``_ext/`` holds the C sources of the compiled extensions).

Three rules, reported separately:

- **upward**: a module imports a module of a higher layer;
- **private name**: a module imports an underscored name (``_jsonable``) that another unit
  defines; a unit is a subpackage (``privevo.private``) or a top-level module (``report``);
- **cycle**: the graph has a circle (each strongly connected component of two or more modules).
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "privevo"
LAYER_HEADER = re.compile(r"^\|\s*rank\s*\|\s*layer\s*\|")
MODULE_HEADER = re.compile(r"^\|\s*module\s*\|\s*layer\s*\|")
ROW = re.compile(r"^\|(.*)\|\s*$")


@dataclass
class Graph:
    """Modules, their edges (target → lazy?), the imported underscored names, and layers."""

    edges: dict[str, dict[str, bool]] = field(default_factory=dict)
    private_names: dict[str, set[str]] = field(default_factory=dict)  # module → {"mod._name"}
    layer_of: dict[str, str] = field(default_factory=dict)
    ranks: dict[str, int] = field(default_factory=dict)


def module_files(src: Path) -> dict[str, Path]:
    """Dotted module name → file, for every ``.py`` file under ``src/privevo``."""
    out = {}
    for path in sorted((src / PACKAGE).rglob("*.py")):
        parts = path.relative_to(src).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def extensions(root: Path) -> dict[str, list[str]]:
    """Compiled module name → its C sources (relative to ``src/privevo``), from setup.py."""
    setup = root / "setup.py"
    if not setup.exists():
        return {}
    out = {}
    for node in ast.walk(ast.parse(setup.read_text())):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "Extension":
            name = ast.literal_eval(node.args[0])
            kwargs = {k.arg: k.value for k in node.keywords}
            sources = ast.literal_eval(kwargs["sources"]) if "sources" in kwargs else []
            out[name] = [s.removeprefix(f"src/{PACKAGE}/") for s in sources]
    return out


def _functions_spans(tree: ast.AST) -> list[tuple[int, int]]:
    return [
        (n.lineno, n.end_lineno or n.lineno)
        for n in ast.walk(tree)
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
    ]


def imports_of(name: str, path: Path, known: set[str]) -> tuple[dict[str, bool], set[str]]:
    """The privevo modules ``name`` imports (→ whether only lazily, inside a function) and the
    underscored names it imports from them (``"privevo.report._jsonable"``)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    tree = ast.parse(path.read_text())
    spans = _functions_spans(tree)
    edges: dict[str, bool] = {}
    names: set[str] = set()

    def add(target: str, line: int) -> None:
        if target in known and target != name:
            lazy = any(a <= line <= b for a, b in spans)
            edges[target] = edges.get(target, True) and lazy

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            for alias in node.names:
                target = f"{base}.{alias.name}"
                if target in known:
                    add(target, node.lineno)
                    continue
                add(base, node.lineno)
                if base in known and alias.name.startswith("_") and not alias.name.startswith("__"):
                    names.add(target)
    return edges, names


def read_layers(doc: Path) -> tuple[dict[str, int], dict[str, str]]:
    """(layer → rank, file path relative to src/privevo → layer) from docs/architecture.md."""
    ranks: dict[str, int] = {}
    files: dict[str, str] = {}
    table = None
    for line in doc.read_text().splitlines():
        if LAYER_HEADER.match(line):
            table = "layers"
        elif MODULE_HEADER.match(line):
            table = "modules"
        elif table and ROW.match(line):
            cells = [c.strip() for c in ROW.match(line).group(1).split("|")]
            if set(cells[0]) <= set("-: "):
                continue
            if table == "layers":
                ranks[cells[1].strip("*`")] = int(cells[0])
            else:
                files[cells[0].strip("`")] = cells[1].strip("*`")
        else:
            table = None
    return ranks, files


def dotted(path: str) -> str:
    """``private/readers.py`` → ``privevo.private.readers``; ``__init__.py`` → ``privevo``."""
    parts = [PACKAGE, *Path(path).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def build(root: Path = ROOT) -> Graph:
    """The graph of ``root/src/privevo`` with the layers of ``root/docs/architecture.md``."""
    src = root / "src"
    files = module_files(src)
    exts = extensions(root)
    known = set(files) | set(exts)
    graph = Graph()
    for name, path in files.items():
        graph.edges[name], graph.private_names[name] = imports_of(name, path, known)
    for name in exts:
        graph.edges[name], graph.private_names[name] = {}, set()
    graph.ranks, table = read_layers(root / "docs" / "architecture.md")
    by_module = {dotted(p): layer for p, layer in table.items() if p.endswith(".py")}
    for name, sources in exts.items():
        layers = {table[s] for s in sources if s in table}
        if len(layers) == 1:
            by_module[name] = layers.pop()
    graph.layer_of = {m: by_module[m] for m in graph.edges if m in by_module}
    return graph


def unit(module: str) -> str:
    """The unit a module belongs to: its subpackage, or itself for a top-level module."""
    parts = module.split(".")
    return ".".join(parts[:2])


def upward(graph: Graph) -> list[tuple[str, str]]:
    """Edges from a module to a module of a higher layer."""
    rank = {m: graph.ranks[layer] for m, layer in graph.layer_of.items() if layer in graph.ranks}
    return sorted(
        (a, b)
        for a, targets in graph.edges.items()
        for b in targets
        if a in rank and b in rank and rank[b] > rank[a]
    )


def private_reaches(graph: Graph) -> list[tuple[str, str]]:
    """(module, ``"module._name"``) where the underscored name belongs to another unit."""
    return sorted(
        (a, target)
        for a, targets in graph.private_names.items()
        for target in targets
        if unit(target.rpartition(".")[0]) != unit(a)
    )


def cycles(edges: dict[str, dict[str, bool]]) -> list[list[str]]:
    """The strongly connected components of two or more modules (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, {})))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    component.append(top)
                    if top == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


def _short(module: str) -> str:
    return module.removeprefix(f"{PACKAGE}.") if module != PACKAGE else f"{PACKAGE} (package)"


def report(graph: Graph) -> str:
    """The graph by layer, top to bottom, then the three rules' findings."""
    lines = ["layers, bottom to top (docs/architecture.md):"]
    lines += [f"  {r} {layer}" for layer, r in sorted(graph.ranks.items(), key=lambda x: x[1])]
    unplaced = sorted(m for m in graph.edges if m not in graph.layer_of)
    order = sorted(graph.layer_of, key=lambda m: (-graph.ranks.get(graph.layer_of[m], -1), m))
    lines.append("\nmodules → the privevo modules they import (~ lazily, inside a function):")
    for module in [*order, *unplaced]:
        targets = graph.edges[module]
        names = ", ".join(("~" if targets[t] else "") + _short(t) for t in sorted(targets))
        layer = graph.layer_of.get(module, "NO LAYER")
        lines.append(f"  [{layer}] {_short(module)} → {names or '-'}")
    findings = {
        "upward imports (a lower layer importing a higher one)": [
            f"{_short(a)} [{graph.layer_of[a]}] → {_short(b)} [{graph.layer_of[b]}]"
            for a, b in upward(graph)
        ],
        "underscored names imported from another unit": [
            f"{_short(a)} → {_short(t)}" for a, t in private_reaches(graph)
        ],
        "import cycles": [" ↔ ".join(map(_short, c)) for c in cycles(graph.edges)],
        "modules without a layer in docs/architecture.md": [_short(m) for m in unplaced],
    }
    for title, items in findings.items():
        lines.append(f"\n{title}: {len(items)}")
        lines += [f"  {item}" for item in items]
    return "\n".join(lines)


def dot(graph: Graph) -> str:
    """The graph in Graphviz's language, one cluster per layer, upward edges in red."""
    climbing = set(upward(graph))
    lines = ["digraph privevo {", "  rankdir=BT; node [shape=box, fontsize=10];"]
    for layer, r in sorted(graph.ranks.items(), key=lambda x: x[1]):
        members = sorted(m for m, lay in graph.layer_of.items() if lay == layer)
        lines.append(f'  subgraph "cluster_{r}" {{ label="{r} {layer}";')
        lines += [f'    "{_short(m)}";' for m in members]
        lines.append("  }")
    for a, targets in sorted(graph.edges.items()):
        for b, lazy in sorted(targets.items()):
            style = ["color=red"] if (a, b) in climbing else []
            style += ["style=dashed"] if lazy else []
            lines.append(f'  "{_short(a)}" -> "{_short(b)}" [{", ".join(style)}];')
    return "\n".join([*lines, "}"])


def broken(graph: Graph) -> bool:
    """Whether any rule is broken or a module has no layer."""
    return bool(
        upward(graph)
        or private_reaches(graph)
        or cycles(graph.edges)
        or set(graph.edges) - set(graph.layer_of)
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="the repository (default: this)")
    parser.add_argument("--check", action="store_true", help="exit 1 if any rule is broken")
    parser.add_argument("--dot", action="store_true", help="print the graph for Graphviz")
    args = parser.parse_args(argv)
    graph = build(args.root)
    print(dot(graph) if args.dot else report(graph))
    return 1 if args.check and broken(graph) else 0


if __name__ == "__main__":
    sys.exit(main())
