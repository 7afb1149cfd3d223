"""privevo.names states each shared name once; the modules that implement them offer exactly
those, and it imports nothing but the standard library."""

import ast
import sys
from pathlib import Path

from privevo import adjacency, names
from privevo.cli import options
from privevo.private import NOISES


def test_every_layer_offers_the_names_privevo_names_states():
    assert adjacency.ADJACENCIES is names.ADJACENCIES
    assert NOISES is names.NOISES
    assert options.ADJACENCIES is names.ADJACENCIES and options.NOISES is names.NOISES


def test_the_names_module_imports_only_the_standard_library():
    tree = ast.parse(Path(names.__file__).read_text())
    imported = {
        (node.module if isinstance(node, ast.ImportFrom) else alias.name).split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, (ast.Import, ast.ImportFrom))
        for alias in node.names
    }
    assert imported <= set(sys.stdlib_module_names) | {"__future__"}
