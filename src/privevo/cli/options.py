"""The commands' options: argparse builders, the cheap checks run before any file is read,
and the public parameters derived from them (δ's default, the centre)."""

from __future__ import annotations

import argparse
import math

from ..names import ADJACENCIES, EPSILON_MAX, EPSILON_MIN, NOISES
from .inputs import is_binary_input

DELTA_HELP = (
    "1e-6, or 1/(10 n) when the number of rows n is public (under replace) and above 1e5; "
    "a run refuses 1e-6 when its noisy count shows more than 1e5 rows (docs/privacy.md)"
)


def command(sub, name: str, help: str, description: str, examples: str):
    return sub.add_parser(
        name,
        help=help,
        description=f"{description}\n\nexamples:\n{examples}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def add_header_flags(p, header_help: str, no_header_help: str) -> None:
    """``--header`` / ``--no-header`` (``args.header``: True, False, or None for the rule)."""
    header = p.add_mutually_exclusive_group()
    header.add_argument(
        "--header", dest="header", action="store_const", const=True, default=None, help=header_help
    )
    header.add_argument(
        "--no-header", dest="header", action="store_const", const=False, help=no_header_help
    )


#: --noise's help where a run draws every release with it.
RUN_NOISE_HELP = (
    "noise of every release (default gaussian; "
    "discrete_gaussian_secure for production: exact sampler, zCDP accounting)"
)
#: --epsilon's help.
EPSILON_HELP = f"total epsilon of the run, from {EPSILON_MIN:g} to {EPSILON_MAX:g}"


def add_adjacency_and_noise(p, noise_help: str = RUN_NOISE_HELP) -> None:
    """--adjacency (default add_remove) and --noise (default gaussian), as text and account
    take them."""
    p.add_argument("--adjacency", choices=ADJACENCIES, default="add_remove")
    p.add_argument("--noise", choices=NOISES, default="gaussian", help=noise_help)


def add_run_options(p) -> None:
    """Options shared by the commands that read private data."""
    from .._validation import DELTA_MIN, MAX_ROUNDS

    p.add_argument(
        "data",
        metavar="DATA",
        help="private data: .csv, .tsv, .npy or .parquet (rows "
        "x features), or a folder of .parquet or of .npy files (one kind per folder)",
    )
    p.add_argument(
        "--columns", help="comma-separated column names (or 0-based indices) to use; default all"
    )
    add_header_flags(
        p,
        "CSV/TSV: the first line holds column names",
        "CSV/TSV: every line is data. Default: the first line is a header only if none of its "
        "cells is a number or empty and the lines below are numbers",
    )
    p.add_argument(
        "--epsilon",
        type=float,
        required=True,
        help=EPSILON_HELP,
    )
    p.add_argument(
        "--delta",
        type=float,
        help=f"delta, from {DELTA_MIN:g} to below 1; default {DELTA_HELP}",
    )
    _add_domain_options(p)
    p.add_argument(
        "--adjacency",
        choices=ADJACENCIES,
        default="add_remove",
        help="neighbouring data sets (default add_remove)",
    )
    p.add_argument(
        "--iterations",
        type=int,
        help=f"T, the number of private releases (PE rounds), at most {MAX_ROUNDS}",
    )
    p.add_argument(
        "--noise",
        choices=NOISES,
        default="gaussian",
        help="noise of every release: gaussian, or the exact discrete Gaussian (zCDP "
        "accounting; _secure draws from the OS's randomness); default gaussian",
    )
    _add_output_options(p)
    add_common(p)


def _add_domain_options(p) -> None:
    """The public domain of the private rows: --radius (around --center) or --bounds."""
    domain = p.add_mutually_exclusive_group()
    domain.add_argument(
        "--radius", type=float, help="public L2 bound of the data around --center (default origin)"
    )
    domain.add_argument(
        "--bounds",
        type=float,
        nargs=2,
        metavar=("LO", "HI"),
        help="public per-feature bounds [LO, HI] (not with --center)",
    )
    p.add_argument(
        "--center",
        type=float,
        nargs="+",
        metavar="C",
        help="centre of the --radius ball (one value or d values)",
    )


def _add_output_options(p) -> None:
    """Where a run writes (-o, --plot, --checkpoint) and where it counts (--backend)."""
    p.add_argument(
        "-o",
        "--output",
        help="output file (.csv, .tsv, .npy, .parquet); the privacy "
        "report goes beside it (never the input, nor inside an input folder)",
    )
    p.add_argument(
        "--plot",
        action="store_true",
        help="also write a PNG beside the output (it shows the private data: not DP)",
    )
    p.add_argument(
        "--checkpoint",
        metavar="PATH",
        help="checkpoint file: written after every round, resumed if it exists",
    )
    p.add_argument(
        "--backend",
        choices=["auto", "numpy", "faiss", "dask"],
        default="auto",
        help="where the private histogram is counted (dask: on a Dask cluster, which "
        "takes seconds to start; default auto)",
    )
    p.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="Dask scheduler address, e.g. "
        "tcp://host:8786 (implies --backend dask; default: a local cluster)",
    )


def add_common(p, seed: bool | str = True) -> None:
    """--seed (``seed="fixed"``: a command that defaults to seed 0), --json, -q."""
    if seed == "fixed":
        p.add_argument(
            "--seed",
            type=int,
            help="random seed >= 0 (default 0: the same run, and the same numbers, every time)",
        )
    elif seed:
        p.add_argument(
            "--seed",
            type=int,
            help="random seed >= 0 (default: fresh randomness); a "
            "seeded run is private only while the seed is secret: no output records it",
        )
    p.add_argument("--json", action="store_true", help="machine-readable output on stdout")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bars or messages")


SCALE_MAX = 1e15  # the public scales and coordinates the numeric kernels keep finite
SCALE_MIN = 1e-15


def shown(value: float) -> str:
    """A number as the user gave it: its shortest exact repr (``1000001.0``), never rounded."""
    return repr(float(value))


def check_scale(value: float | None, flag: str) -> None:
    """A public length (--radius, --R, --scale): finite, in [SCALE_MIN, SCALE_MAX]."""
    if value is None:
        return
    if not (value > 0 and math.isfinite(value)):
        raise ValueError(f"{flag} must be a finite number > 0, got {shown(value)}")
    if not SCALE_MIN <= value <= SCALE_MAX:
        raise ValueError(
            f"{flag} must be a number from {SCALE_MIN:g} to {SCALE_MAX:g}, got {shown(value)}; "
            "rescale the data if its units need more"
        )


def check_coordinates(values, flag: str) -> None:
    """Public coordinates (--bounds, --center, metadata bounds): finite, |v| <= SCALE_MAX."""
    for value in values or ():
        if not math.isfinite(value):
            raise ValueError(f"{flag} must be finite numbers, got {shown(value)}")
        if abs(value) > SCALE_MAX:
            raise ValueError(
                f"{flag} must be finite numbers from {-SCALE_MAX:g} to {SCALE_MAX:g}, "
                f"got {shown(value)}; rescale the data if its units need more"
            )


def check_memory(flag: str, value: int, n_bytes: float, what: str) -> None:
    """Refuse, before any data is read, a size whose arrays would not fit in this machine's
    memory; the message gives the memory it would need."""
    total = _physical_memory()
    if total is not None and n_bytes > total:
        raise ValueError(
            f"{flag} {value} needs about {_gib(n_bytes)} of memory ({what}); this machine "
            f"has {_gib(total)}: choose a smaller {flag}"
        )


def check_memory_of(flags: dict[str, tuple[int, int]], n_bytes: float, what: str) -> None:
    """:func:`check_memory` for a size that is a product of several flags' factors; ``flags``
    maps each flag to (its value, its factor), e.g. ``{"--variations": (v, v + 1)}``. The
    message blames the flag of the largest factor (the first of equal ones)."""
    flag = max(flags, key=lambda f: flags[f][1])
    check_memory(flag, flags[flag][0], n_bytes, what)


def _physical_memory() -> int | None:
    import os

    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def _gib(n_bytes: float) -> str:
    return f"{n_bytes / 2**30:.3g} GiB"


def check_common(args) -> None:
    """Cheap parameter checks, before any file is read or written."""
    from .._validation import check_delta, check_epsilon, check_rounds

    check_epsilon(args.epsilon, "--epsilon")
    if args.delta is not None:
        check_delta(args.delta, "--delta")
    check_scale(args.radius, "--radius")
    check_coordinates(_flat(args.bounds), "--bounds")
    check_coordinates(args.center, "--center")
    scalar = args.bounds is not None and not any(isinstance(b, tuple) for b in args.bounds)
    if scalar and not args.bounds[1] - args.bounds[0] >= SCALE_MIN:
        raise ValueError(
            f"--bounds LO HI needs LO < HI (HI - LO >= {SCALE_MIN:g}), got "
            f"{shown(args.bounds[0])} and {shown(args.bounds[1])}"
        )
    if args.center is not None:
        if args.bounds is not None:
            raise ValueError(
                "--center goes with --radius, not --bounds (the box fixes its "
                "centre); drop --center"
            )
        if not all(map(math.isfinite, args.center)):
            bad = next(c for c in args.center if not math.isfinite(c))
            raise ValueError(f"--center must be finite numbers, got {bad}")
    if args.iterations is not None:
        check_rounds(args.iterations, "--iterations")
    if args.header is not None and is_binary_input(args.data):
        raise ValueError("--header/--no-header apply to CSV/TSV files only; drop the flag")
    if args.scheduler is not None:
        if args.backend not in ("auto", "dask"):
            raise ValueError(f"--scheduler needs --backend dask, got --backend {args.backend}")
        args.backend = "dask"


def _flat(values) -> list | None:
    """--bounds' values, each LO/HI one number or a per-column tuple (``privevo kmeans``)."""
    if values is None:
        return None
    return [v for value in values for v in (value if isinstance(value, tuple) else (value,))]


def run_delta(args, n: int, library_default: bool):
    """--delta, else None if the estimator derives its own default, else the one default
    rule (:func:`privevo.accounting.default_delta`) of the size where it is public."""
    if args.delta is not None or library_default:
        return args.delta
    from ..accounting import default_delta, public_size

    user_level = getattr(args, "user_column", None) is not None
    return default_delta(public_size(args.adjacency, n, user_level=user_level), flag="--delta")


def public_center(args, d: int):
    import numpy as np

    if args.center is None:
        return None
    center = np.asarray(args.center, dtype=float)
    if center.size not in (1, d):
        raise ValueError(
            f"--center needs 1 or {d} values (the data has {d} columns), got {center.size}"
        )
    return np.broadcast_to(center, (d,)).copy()


def too_many(flag: str, value: int, n: int, adjacency: str) -> str:
    """The k > n message; n is named only where it is public (replace adjacency)."""
    if adjacency == "replace":
        return f"{flag} {value} is larger than the number of rows ({n}); choose {flag} <= {n}"
    return f"{flag} {value} is larger than the number of rows; choose a smaller {flag}"


def check_seed(args) -> None:
    """--seed, where given, is an integer >= 0 (every command that takes one)."""
    seed = getattr(args, "seed", None)
    if seed is not None and seed < 0:
        raise ValueError(f"--seed must be an integer >= 0, got {seed}")
