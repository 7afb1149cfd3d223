"""What the commands share: options, input reading, output paths, the report as published."""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import sys
from pathlib import Path

NOISES = ("gaussian", "discrete_gaussian", "discrete_gaussian_secure")  # privevo.private.NOISES
ADJACENCIES = ("add_remove", "replace")  # kept here so that building the parser imports no numpy


SEED_WARNING = (
    "seeded run (--seed): private only while the seed is secret (anyone with the seed can rerun "
    "the command on neighbouring data); its value is recorded nowhere"
)


def _command(sub, name: str, help: str, description: str, examples: str):
    return sub.add_parser(
        name,
        help=help,
        description=f"{description}\n\nexamples:\n{examples}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def _add_header_flags(p, header_help: str, no_header_help: str) -> None:
    """``--header`` / ``--no-header`` (``args.header``: True, False, or None for the rule)."""
    header = p.add_mutually_exclusive_group()
    header.add_argument(
        "--header", dest="header", action="store_const", const=True, default=None, help=header_help
    )
    header.add_argument(
        "--no-header", dest="header", action="store_const", const=False, help=no_header_help
    )


def _add_run_options(p) -> None:
    """Options shared by the commands that read private data."""
    from .._validation import DELTA_MIN, EPSILON_MAX, EPSILON_MIN, MAX_ROUNDS

    p.add_argument(
        "data",
        metavar="DATA",
        help="private data: .csv, .tsv, .npy or .parquet (rows "
        "x features), or a folder of .parquet or of .npy files (one kind per folder)",
    )
    p.add_argument(
        "--columns", help="comma-separated column names (or 0-based indices) to use; default all"
    )
    _add_header_flags(
        p,
        "CSV/TSV: the first line holds column names",
        "CSV/TSV: every line is data. Default: the first line is a header only if none of its "
        "cells is a number or empty and the lines below are numbers",
    )
    p.add_argument(
        "--epsilon",
        type=float,
        required=True,
        help=f"total epsilon of the run, from {EPSILON_MIN:g} to {EPSILON_MAX:g}",
    )
    p.add_argument(
        "--delta",
        type=float,
        help=f"delta, from {DELTA_MIN:g} to below 1; default "
        "1e-6 under add_remove (n is private), n^-1.1 under replace (docs/privacy.md)",
    )
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
    _add_common(p)


def _add_common(p, seed: bool | str = True) -> None:
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


def check_scale(value: float | None, flag: str) -> None:
    """A public length (--radius, --R, --scale): finite, in [SCALE_MIN, SCALE_MAX]."""
    if value is None:
        return
    if not (value > 0 and math.isfinite(value)):
        raise ValueError(f"{flag} must be a finite number > 0, got {value:g}")
    if not SCALE_MIN <= value <= SCALE_MAX:
        raise ValueError(
            f"{flag} must be a number from {SCALE_MIN:g} to {SCALE_MAX:g}, got {value:g}; "
            "rescale the data if its units need more"
        )


def check_coordinates(values, flag: str) -> None:
    """Public coordinates (--bounds, --center, metadata bounds): finite, |v| <= SCALE_MAX."""
    for value in values or ():
        if not math.isfinite(value):
            raise ValueError(f"{flag} must be finite numbers, got {value:g}")
        if abs(value) > SCALE_MAX:
            raise ValueError(
                f"{flag} must be finite numbers from {-SCALE_MAX:g} to {SCALE_MAX:g}, "
                f"got {value:g}; rescale the data if its units need more"
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


def _physical_memory() -> int | None:
    import os

    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def _gib(n_bytes: float) -> str:
    return f"{n_bytes / 2**30:.3g} GiB"


def _check_common(args) -> None:
    """Cheap parameter checks, before any file is read or written."""
    from .._validation import check_delta, check_epsilon, check_rounds

    check_epsilon(args.epsilon)
    if args.delta is not None:
        check_delta(args.delta)
    check_scale(args.radius, "--radius")
    check_coordinates(args.bounds, "--bounds")
    check_coordinates(args.center, "--center")
    if args.bounds is not None and not args.bounds[1] - args.bounds[0] >= SCALE_MIN:
        raise ValueError(
            f"--bounds LO HI needs LO < HI (HI - LO >= {SCALE_MIN:g}), got {args.bounds[0]:g} "
            f"and {args.bounds[1]:g}"
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
    if args.header is not None and _is_binary_input(args.data):
        raise ValueError("--header/--no-header apply to CSV/TSV files only; drop the flag")
    if args.scheduler is not None:
        if args.backend not in ("auto", "dask"):
            raise ValueError(f"--scheduler needs --backend dask, got --backend {args.backend}")
        args.backend = "dask"


def _is_binary_input(data: str) -> bool:
    return Path(data).is_dir() or Path(data).suffix.lower() in (".npy", ".parquet", ".pq")


def _plan_paths(args) -> dict[str, Path]:
    """Checked output paths (data, report beside it, PNG beside it if --plot) and the
    checkpoint's: each writable, none the input or inside an input folder, all distinct."""
    from ..io import check_distinct_paths, check_output_path

    paths = _outputs(args)
    labelled = {
        "-o": paths.get("output"),
        "the privacy report": paths.get("report"),
        "the --plot image": paths.get("plot"),
    }
    if args.checkpoint is not None:
        labelled["--checkpoint"] = check_output_path(
            args.checkpoint, formats=None, what="checkpoint"
        )
    check_distinct_paths(args.data, {k: v for k, v in labelled.items() if v is not None})
    return paths


def _outputs(args) -> dict[str, Path]:
    """Checked output paths: data, report beside it, PNG beside it (if --plot)."""
    from ..io import check_output_path, report_path_for

    if args.output is None:
        if args.plot:
            raise ValueError("--plot needs an output file; add -o OUT.csv")
        return {}
    out = check_output_path(args.output)
    paths = {"output": out, "report": report_path_for(out)}
    if out.suffix.lower() == ".parquet":
        _require("pyarrow", "io", "writing Parquet")
    if args.plot:
        _require("matplotlib", "plots", "--plot")
        paths["plot"] = out.with_suffix(".png")
    for path in paths.values():
        if path.is_dir():
            raise ValueError(f"output path {path} is a directory; choose another -o")
    return paths


def _require(module: str, extra: str, what: str) -> None:
    """Fail before any private computation if an optional dependency is missing."""
    import importlib.util

    if importlib.util.find_spec(module) is None:
        raise ImportError(f"{what} needs {module}: pip install 'privevo[{extra}]'")


def _read(args):
    from ..io import read_table

    if Path(args.data).is_dir():
        return _read_folder(args)
    return read_table(args.data, args.columns, args.header)


def _read_folder(args):
    """A folder of Parquet or .npy row partitions (:mod:`privevo.private.files`).

    ``synth`` with a public --radius/--bounds and no --plot streams it (never
    loaded whole); otherwise the rows are read into memory.
    """
    import numpy as np

    from ..io import Table, parse_columns
    from ..private import NpySource, open_source

    hidden = sorted(f.name for f in Path(args.data).iterdir() if f.name.startswith("."))
    if hidden and not args.quiet:
        print(
            f"privevo {args.command}: note: skipped {len(hidden)} hidden file(s) in {args.data} "
            f"({', '.join(hidden[:3])}{', ...' if len(hidden) > 3 else ''})",
            file=sys.stderr,
        )
    wanted = parse_columns(args.columns)
    with _naming_the_file(args.data):
        source = open_source(args.data, columns=wanted)  # refuses a folder of mixed kinds
    if wanted is not None and isinstance(source, NpySource):
        raise ValueError(
            "--columns is not supported for a folder of .npy files; save the feature columns only"
        )
    if source.shape[0] == 0:
        raise ValueError(f"{args.data} holds no rows; it needs rows of numbers")
    names = list(getattr(source, "columns", ()))
    if isinstance(source, NpySource) or len(names) != source.shape[1]:
        names = [str(j) for j in range(source.shape[1])]
    stream = (
        args.command == "synth"
        and not args.plot
        and (args.radius is not None or args.bounds is not None)
    )
    if stream:
        return Table(source, names, str(args.data))
    with _naming_the_file(args.data):
        data = np.asarray(source, dtype=np.float64)
    _check_finite_folder(args.data, data, names)
    return Table(data, names, str(args.data))


@contextlib.contextmanager
def _naming_the_file(data):
    """Errors of a folder's parts (pyarrow's, or a bare "private data ...") name the folder
    and, for an unreadable Parquet part, the file."""
    try:
        yield
    except ValueError as err:
        if not Path(data).is_dir() or str(data) in str(err):
            raise
        raise ValueError(f"{data}: {_one_line(err)}") from None
    except Exception as err:  # pyarrow raises OSError or its own types for a corrupt part
        arrow = type(err).__module__.startswith("pyarrow")
        folder = Path(data).is_dir() and (arrow or isinstance(err, OSError))
        part = _broken_part(Path(data)) if folder else None
        if part is None:
            raise
        raise ValueError(
            f"{part} is not a readable Parquet file ({_one_line(err)}); replace or remove it"
        ) from None


def _broken_part(folder: Path) -> str | None:
    """The first Parquet part of ``folder`` that fails to read (one row group at a time)."""
    try:
        import pyarrow.parquet as pq
    except ImportError:
        return None
    for part in sorted(folder.iterdir()):
        if part.suffix not in (".parquet", ".pq"):
            continue
        try:
            handle = pq.ParquetFile(part)
            for group in range(handle.num_row_groups):
                handle.read_row_group(group)
        except Exception:
            return str(part)
    return None


def _check_finite_folder(folder, data, names: list[str]) -> None:
    import numpy as np

    bad_rows, bad_cols = np.nonzero(~np.isfinite(data))
    if bad_rows.size:
        raise ValueError(
            f"{folder}: column {names[int(bad_cols[0])]!r} has NaN or infinite values "
            f"({bad_rows.size}, first at row {int(bad_rows[0])} of the folder's parts "
            "in name order); drop or impute them first"
        )


def _cluster(args):
    """A Dask session for --backend dask: the --scheduler's cluster, else a local one."""
    if args.backend != "dask":
        return contextlib.nullcontext()
    from ..private import dask_session

    return dask_session(address=args.scheduler)


def _delta(args, n: int, library_default: bool):
    """--delta, else None if the estimator derives its own default, else the library's rule
    (:func:`privevo.accounting.run_default_delta`)."""
    if args.delta is not None or library_default:
        return args.delta
    from ..accounting import run_default_delta

    user_level = getattr(args, "user_column", None) is not None
    return run_default_delta(args.adjacency, n, user_level=user_level, flag="--delta")


def _progress(args) -> bool:
    return not args.quiet and not args.json and sys.stderr.isatty()


_HEARTBEAT_SECONDS = 30.0


@contextlib.contextmanager
def _heartbeat(args, total: int | None = None):
    """Off a terminal (no progress bar there), one line every _HEARTBEAT_SECONDS while a run
    lasts, so that a long run in a log or a pipe is never silent; none with --quiet. Yields a
    dict whose ``"done"`` the caller updates with the rounds completed."""
    import threading
    import time

    state = {"done": None}
    if args.quiet or sys.stderr.isatty():
        yield state
        return
    stop, start = threading.Event(), time.monotonic()

    def beat() -> None:
        while not stop.wait(_HEARTBEAT_SECONDS):
            done = "" if state["done"] is None else f"round {state['done']} of {total}, "
            print(
                f"privevo {args.command}: running ({done}{time.monotonic() - start:.0f} s)",
                file=sys.stderr,
                flush=True,
            )

    thread = threading.Thread(target=beat, name="privevo-heartbeat", daemon=True)
    thread.start()
    try:
        yield state
    finally:
        stop.set()
        thread.join()


def _center(args, d: int):
    import numpy as np

    if args.center is None:
        return None
    center = np.asarray(args.center, dtype=float)
    if center.size not in (1, d):
        raise ValueError(
            f"--center needs 1 or {d} values (the data has {d} columns), got {center.size}"
        )
    return np.broadcast_to(center, (d,)).copy()


def _too_many(flag: str, value: int, n: int, adjacency: str) -> str:
    """The k > n message; n is named only where it is public (replace adjacency)."""
    if adjacency == "replace":
        return f"{flag} {value} is larger than the number of rows ({n}); choose {flag} <= {n}"
    return f"{flag} {value} is larger than the number of rows; choose a smaller {flag}"


def _finish(
    args, paths: dict, points, columns, report: dict, figure=None, summary: dict | None = None
) -> None:
    """Write every output atomically (all or nothing), then print."""
    import numpy as np

    from ..io import write_json, write_outputs, write_points

    if paths:
        writers = {
            paths["output"]: lambda tmp: write_points(
                tmp, points, columns, fmt_path=paths["output"]
            ),
            paths["report"]: lambda tmp: write_json(tmp, report),
        }
        if figure is not None:
            writers[paths["plot"]] = lambda tmp: figure.savefig(tmp, format="png", dpi=110)
        write_outputs(writers)
    result = {
        **(summary or {}),
        "outputs": {k: str(v) for k, v in paths.items()},
        "privacy_report": report,
    }
    if args.json:
        if not paths:
            result["points"] = np.asarray(points).tolist()
        print(json.dumps(result, indent=2))
        return
    if not paths:
        np.savetxt(
            sys.stdout, points, fmt="%.10g", delimiter=",", header=",".join(columns), comments=""
        )
    if not args.quiet:
        written = ", ".join(str(p) for p in paths.values())
        print(
            _summary_line(report) + (f"; wrote {written}" if written else ""),
            file=sys.stderr if not paths else sys.stdout,
        )


def _summary_line(report: dict) -> str:
    """ε, δ, μ of the whole run; σ and T of its PE rounds (not of a count or sum release)."""
    rounds = next((r for r in report.get("releases", []) if r.get("name") == "nn_histogram"), {})
    sigma = rounds.get("sigma", report.get("sigma"))
    steps = rounds.get("count", report.get("steps"))

    def num(value) -> str:
        return "n/a" if value is None else f"{value:.4g}"  # zCDP: no mu

    guarantee = ""
    if not report.get("guarantee_holds", True):
        guarantee = " (guarantee does NOT hold: see warnings)"
    return (
        f"epsilon={num(report.get('epsilon'))} delta={report['delta']:.3g} "
        f"mu={num(report.get('mu'))} sigma={num(sigma)} T={steps}{guarantee}"
    )


def _cli_parameters(args, table) -> dict:
    """The CLI's own public parameters: whether a seed was given, never its value."""
    return {"command": args.command, "columns": table.columns, "seeded": args.seed is not None}


_SECRET_KEYS = ("seed", "random_state")


def _publishable(report: dict, args, table) -> dict:
    """The report as published: the CLI's parameters added, any seed value removed."""
    report = _without_secrets(report)
    public = dict(report.get("public_parameters", {}))
    report["public_parameters"] = {**public, "cli": _cli_parameters(args, table)}
    warned = any("seed" in str(w) for w in report.get("warnings", []))
    if args.seed is not None and not warned:
        report["warnings"] = [*report.get("warnings", []), SEED_WARNING]
    return report


def _without_secrets(value):
    if isinstance(value, dict):
        return {k: _without_secrets(v) for k, v in value.items() if k not in _SECRET_KEYS}
    if isinstance(value, list):
        return [_without_secrets(v) for v in value]
    return value


def _one_line(err: BaseException) -> str:
    text = " ".join(str(err).split())
    return text or type(err).__name__
