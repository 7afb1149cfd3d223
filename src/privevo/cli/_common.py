"""The old home of the commands' shared helpers, kept only for the commands not yet moved.

The helpers live in :mod:`.options` (argparse options and checks), :mod:`.inputs` (reading
the private data) and :mod:`.publishing` (outputs, the report, stderr). ``cli/text.py`` and
``cli/table.py`` still import these names from here; this module goes once they import from
the three modules.
"""

from .options import ADJACENCIES, NOISES, add_header_flags, check_coordinates, check_memory
from .options import command as _command
from .options import run_delta as _delta

_add_header_flags = add_header_flags

__all__ = [
    "ADJACENCIES",
    "NOISES",
    "_add_header_flags",
    "_command",
    "_delta",
    "check_coordinates",
    "check_memory",
]
