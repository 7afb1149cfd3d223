"""The ``privevo`` command line.

Commands: ``kmeans`` (DP k-means centres), ``synth`` (DP synthetic points by
Private Evolution), ``account`` (σ ↔ ε of T Gaussian releases), ``demo`` and
``audit`` (empirical lower bounds on ε, :mod:`privevo.audit`).

Every error ends the command with a non-zero exit status and one line on
stderr that says what to fix; no traceback (set ``PRIVEVO_DEBUG=1`` to get
one) and no partial output file (outputs are written atomically, and output
paths are checked before any private computation runs: none may be the input,
lie inside an input folder or be another output of the run). Ctrl-C (SIGINT)
and SIGTERM stop a run cleanly (exit 130 / 143); with ``--checkpoint`` the same
command resumes it. Next to every output file the JSON privacy report is
written (``OUT.privacy.json``); no output carries the seed's value.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import signal
import sys
import warnings
from pathlib import Path

EXIT_ERROR = 2
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143
NOISES = ("gaussian", "discrete_gaussian", "discrete_gaussian_secure")
SEED_WARNING = (
    "seeded run (--seed): private only while the seed is secret (anyone with the seed can rerun "
    "the command on neighbouring data); its value is recorded nowhere"
)


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (no usage block)."""

    def error(self, message: str):
        self.exit(EXIT_ERROR, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


class _Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread so that a run stops as on Ctrl-C."""


@contextlib.contextmanager
def _sigterm_as_interrupt():
    def handler(signum, frame):
        raise _Terminated()

    try:
        previous = signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if not hasattr(args, "func"):
        parser.print_help()
        return EXIT_ERROR
    prog = f"privevo {args.command}"
    with warnings.catch_warnings(), _sigterm_as_interrupt():
        warnings.showwarning = _one_line_warning
        try:
            _check_seed(args)
            return args.func(args) or 0
        except BrokenPipeError:  # e.g. `privevo ... | head`: stop quietly
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 1
        except KeyboardInterrupt as stop:
            term = isinstance(stop, _Terminated)
            hint = ""
            if getattr(args, "checkpoint", None):
                hint = "; rerun the same command to resume from the checkpoint"
            what = "terminated (SIGTERM)" if term else "interrupted"
            print(f"{prog}: {what}{hint}", file=sys.stderr)
            return EXIT_TERMINATED if term else EXIT_INTERRUPTED
        except (ValueError, OSError, ImportError) as err:
            if os.environ.get("PRIVEVO_DEBUG"):
                raise
            print(f"{prog}: error: {_one_line(err)}", file=sys.stderr)
            return EXIT_ERROR
        except Exception as err:  # a bug: still one line, with a way to see more
            if os.environ.get("PRIVEVO_DEBUG"):
                raise
            print(f"{prog}: internal error: {type(err).__name__}: {_one_line(err)} "
                  "(set PRIVEVO_DEBUG=1 for a traceback)", file=sys.stderr)
            return 1


def _one_line(err: BaseException) -> str:
    text = " ".join(str(err).split())
    return text or type(err).__name__


def _one_line_warning(message, category, filename, lineno, file=None, line=None) -> None:
    print(f"privevo: warning: {category.__name__}: {_one_line(message)}", file=sys.stderr)


def _check_seed(args) -> None:
    seed = getattr(args, "seed", None)
    if seed is not None and seed < 0:
        raise ValueError(f"--seed must be an integer >= 0, got {seed}")


# -- parser ---------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="privevo",
        description="Differentially private clustering and synthetic data by Private Evolution.",
    )
    from . import __version__

    parser.add_argument("--version", action="version", version=f"privevo {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    _kmeans_parser(sub)
    _synth_parser(sub)
    _account_parser(sub)
    _demo_parser(sub)
    _audit_parser(sub)
    from .text.cli import add_text_commands  # synth-text, intrinsic-dim (stdlib-only import)

    add_text_commands(sub)
    __import__("privevo.tabular.cli", fromlist=["cli"]).add_tabular_commands(sub)  # synth-table, metadata
    return parser


def _command(sub, name: str, help: str, description: str, examples: str):
    return sub.add_parser(
        name,
        help=help,
        description=f"{description}\n\nexamples:\n{examples}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def _add_run_options(p) -> None:
    """Options shared by the commands that read private data."""
    from ._validation import DELTA_MIN, EPSILON_MAX, EPSILON_MIN, MAX_ROUNDS

    p.add_argument("data", metavar="DATA", help="private data: .csv, .tsv, .npy or .parquet (rows "
                   "x features), or a folder of .parquet or of .npy files (one kind per folder)")
    p.add_argument("--columns", help="comma-separated column names (or 0-based indices) to use; "
                   "default all")
    header = p.add_mutually_exclusive_group()
    header.add_argument("--header", dest="header", action="store_const", const=True, default=None,
                        help="CSV/TSV: the first line holds column names")
    header.add_argument("--no-header", dest="header", action="store_const", const=False,
                        help="CSV/TSV: every line is data. Default: the first line is a header "
                        "only if none of its cells is a number or empty and the lines below are "
                        "numbers")
    p.add_argument("--epsilon", type=float, required=True,
                   help=f"total epsilon of the run, from {EPSILON_MIN:g} to {EPSILON_MAX:g}")
    p.add_argument("--delta", type=float, help=f"delta, from {DELTA_MIN:g} to below 1; default "
                   "1e-6 under add_remove (n is private), n^-1.1 under replace (docs/privacy.md)")
    domain = p.add_mutually_exclusive_group()
    domain.add_argument("--radius", type=float,
                        help="public L2 bound of the data around --center (default origin)")
    domain.add_argument("--bounds", type=float, nargs=2, metavar=("LO", "HI"),
                        help="public per-feature bounds [LO, HI] (not with --center)")
    p.add_argument("--center", type=float, nargs="+", metavar="C",
                   help="centre of the --radius ball (one value or d values)")
    p.add_argument("--adjacency", choices=["add_remove", "replace"], default="add_remove",
                   help="neighbouring data sets (default add_remove)")
    p.add_argument("--iterations", type=int,
                   help=f"T, the number of private releases (PE rounds), at most {MAX_ROUNDS}")
    p.add_argument("--noise", choices=NOISES, default="gaussian",
                   help="noise of every release: gaussian, or the exact discrete Gaussian (zCDP "
                   "accounting; _secure draws from the OS's randomness); default gaussian")
    p.add_argument("-o", "--output", help="output file (.csv, .tsv, .npy, .parquet); the privacy "
                   "report goes beside it (never the input, nor inside an input folder)")
    p.add_argument("--plot", action="store_true",
                   help="also write a PNG beside the output (it shows the private data: not DP)")
    p.add_argument("--checkpoint", metavar="PATH",
                   help="checkpoint file: written after every round, resumed if it exists")
    p.add_argument("--backend", choices=["auto", "numpy", "faiss", "dask"], default="auto",
                   help="where the private histogram is counted (dask: on a Dask cluster, which "
                   "takes seconds to start; default auto)")
    p.add_argument("--scheduler", metavar="ADDRESS", help="Dask scheduler address, e.g. "
                   "tcp://host:8786 (implies --backend dask; default: a local cluster)")
    _add_common(p)


def _add_common(p, seed: bool = True) -> None:
    if seed:
        p.add_argument("--seed", type=int, help="random seed >= 0 (default: fresh randomness); a "
                       "seeded run is private only while the seed is secret: no output records it")
    p.add_argument("--json", action="store_true", help="machine-readable output on stdout")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bars or messages")


def _kmeans_parser(sub) -> None:
    p = _command(
        sub,
        "kmeans",
        "DP k-means centres (PE-means)",
        "Differentially private k-means by PE-means; writes the k centres and a JSON privacy "
        "report.\npe-means' default T grows with epsilon above 1 (T = floor(epsilon * "
        "floor(4 sqrt(d)))); a T above\nthe maximum (see --iterations) is refused with a line "
        "that says to pass --iterations.",
        "  privevo kmeans data.csv --k 8 --epsilon 1 --radius 10 -o centers.csv\n"
        "  privevo kmeans digits.npy --k 10 --epsilon 2 --bounds 0 16 -o centers.npy --plot\n"
        "  privevo kmeans data.parquet --columns x,y,z --k 4 --epsilon 0.5 --radius 1 --json",
    )
    p.add_argument("--k", type=int, required=True, help="number of clusters (1 <= k <= n)")
    p.add_argument("--method", choices=["auto", "pe-means", "hdpe-means"], default="auto",
                   help="auto = hdpe-means when d > 32")
    p.add_argument("--recover-share", type=float, default=None,
                   help="share of the budget (of mu^2) for the final noisy Lloyd step; 0 = the "
                   "paper's PE-means (default 0.25 for pe-means, 0.55 for hdpe-means)")
    p.add_argument("--projection", choices=["pca", "random"], default="pca",
                   help="hdpe-means' projection: private PCA (10%% of mu^2) or the paper's random "
                   "one (default pca)")
    _add_run_options(p)
    p.set_defaults(func=_kmeans)


SELECTORS = ("gape", "rank", "subsample", "weighted_kmeans")


def _synth_parser(sub) -> None:
    p = _command(
        sub,
        "synth",
        "DP synthetic points by Private Evolution",
        "Differentially private synthetic points by Private Evolution; writes the points and a "
        "JSON privacy report.\nThe gape selector may deliver fewer than --m points (only points "
        "that pass its noise threshold);\nit says so on stderr and in --json (m_requested, "
        "m_delivered); --fill tops the selection up to exactly m.",
        "  privevo synth data.csv --m 200 --selector gape --epsilon 1 --radius 5 -o synthetic.csv\n"
        "  privevo synth data.npy --m 50 --selector rank --epsilon 4 --iterations 20 --radius 3 "
        "--plot -o syn.npy\n"
        "  privevo synth data.csv --m 100 --epsilon 1 --radius 5 --checkpoint run.ckpt -o syn.csv"
        "   # resumable",
    )
    p.add_argument("--m", type=int, required=True, help="number of synthetic points (>= 1)")
    p.add_argument("--selector", choices=SELECTORS, default="gape",
                   help="selection step (default gape)")
    p.add_argument("--fill", action="store_true", help="gape: top the selection up to exactly "
                   "--m points with the next best candidates (the other selectors always give m)")
    p.add_argument("--R", type=float, dest="R",
                   help="gape: public lower bound on the separation of clusters (default radius/4)")
    p.add_argument("--scale", type=float,
                   help="rank/subsample: Gaussian variation scale (default radius/20)")
    p.add_argument("--variations", type=int, default=4,
                   help="variations per selected point (default 4)")
    _add_run_options(p)
    p.set_defaults(func=_synth, iterations_default=10)


def _account_parser(sub) -> None:
    from ._validation import DELTA_MIN, EPSILON_MAX, EPSILON_MIN

    p = _command(
        sub,
        "account",
        "noise sigma for (epsilon, delta, steps), or epsilon for a sigma",
        "Gaussian-DP accounting of T noisy histogram releases. sigma is rounded up, so the "
        "epsilon it gives\nback never exceeds the one asked for.",
        "  privevo account --epsilon 1 --delta 1e-5 --steps 10\n"
        "  privevo account --sigma 11.8 --delta 1e-5 --steps 10 --json",
    )
    p.add_argument("--epsilon", type=float,
                   help=f"total epsilon of the run, from {EPSILON_MIN:g} to {EPSILON_MAX:g}")
    p.add_argument("--sigma", type=float, help="noise std per count (gives epsilon instead)")
    p.add_argument("--delta", type=float, required=True,
                   help=f"delta, from {DELTA_MIN:g} to below 1")
    p.add_argument("--steps", type=int, required=True, help="number of releases T")
    p.add_argument("--adjacency", choices=["add_remove", "replace"], default="add_remove")
    p.add_argument("--noise", choices=NOISES, default="gaussian",
                   help="gaussian (exact GDP) or discrete_gaussian[_secure] (zCDP, "
                   "docs/privacy.md); default gaussian")
    _add_common(p, seed=False)
    p.set_defaults(func=_account)


def _audit_parser(sub) -> None:
    p = _command(
        sub,
        "audit",
        "empirical privacy audit: lower bounds on epsilon beside the claims",
        "Run the noisy histogram (one release) and whole PE runs many times on neighbouring data "
        "sets\n(D and D plus one canary) and print a 95% lower bound on the epsilon they really "
        "spend beside the\nclaimed epsilon (privevo.audit; docs/privacy.md). Exit status 1 if a "
        "bound exceeds its claim.",
        "  privevo audit\n  privevo audit --epsilon 1 --noise discrete_gaussian --runs 0 --json",
    )
    p.add_argument("--epsilon", type=float, nargs="+", default=[0.5, 1.0, 4.0],
                   help="claimed epsilons (default 0.5 1 4)")
    p.add_argument("--delta", type=float, default=1e-5,
                   help="delta of every setting (default 1e-5)")
    p.add_argument("--noise", nargs="+", choices=["gaussian", "discrete_gaussian"],
                   default=["gaussian", "discrete_gaussian"])
    p.add_argument("--adjacency", nargs="+", choices=["add_remove", "replace"],
                   default=["add_remove", "replace"])
    p.add_argument("--releases", type=int, default=100_000,
                   help="single releases per data set (default 100000)")
    p.add_argument("--runs", type=int, default=1000,
                   help="whole PE runs per data set (default 1000; 0 skips them)")
    p.add_argument("--iterations", type=int, default=5,
                   help="rounds T of each audited PE run (default 5)")
    p.add_argument("--alpha", type=float, default=0.05,
                   help="1 - confidence of the lower bounds (default 0.05)")
    _add_common(p)
    p.set_defaults(func=_audit)


def _audit(args) -> int:
    from .audit import cli_audit

    with _heartbeat(args):
        return cli_audit(args)


def _demo_parser(sub) -> None:
    p = _command(
        sub,
        "demo",
        "run privevo on built-in data: a result table and plots",
        "Run privevo on built-in data (no download): DP k-means vs a DP baseline on a real data "
        "set,\nGAPE vs rank selection on a 2-D mixture; prints a table and writes plots to a "
        "folder.",
        "  privevo demo\n  privevo demo --seed 1 --out demo-plots --json",
    )
    p.add_argument("--out", default="privevo-demo",
                   help="folder for the plots (default ./privevo-demo)")
    p.add_argument("--no-plots", action="store_true", help="skip the plots")
    _add_common(p)
    p.set_defaults(func=_demo)


# -- shared steps -----------------------------------------------------------------


def _check_common(args) -> None:
    """Cheap parameter checks, before any file is read or written."""
    from ._validation import check_delta, check_epsilon, check_positive_real, check_rounds

    check_epsilon(args.epsilon)
    if args.delta is not None:
        check_delta(args.delta)
    if args.radius is not None:
        check_positive_real(args.radius, "--radius")
    if args.bounds is not None and not all(map(math.isfinite, args.bounds)):
        raise ValueError("--bounds must be finite numbers")
    if args.bounds is not None and not args.bounds[0] < args.bounds[1]:
        raise ValueError(f"--bounds LO HI needs LO < HI, got {args.bounds[0]} and {args.bounds[1]}")
    if args.center is not None:
        if args.bounds is not None:
            raise ValueError("--center goes with --radius, not --bounds (the box fixes its "
                             "centre); drop --center")
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
    from .io import check_distinct_paths, check_output_path

    paths = _outputs(args)
    labelled = {"-o": paths.get("output"), "the privacy report": paths.get("report"),
                "the --plot image": paths.get("plot")}
    if args.checkpoint is not None:
        labelled["--checkpoint"] = check_output_path(args.checkpoint, formats=None,
                                                     what="checkpoint")
    check_distinct_paths(args.data, {k: v for k, v in labelled.items() if v is not None})
    return paths


def _outputs(args) -> dict[str, Path]:
    """Checked output paths: data, report beside it, PNG beside it (if --plot)."""
    from .io import check_output_path, report_path_for

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
    from .io import read_table

    if Path(args.data).is_dir():
        return _read_folder(args)
    return read_table(args.data, args.columns, args.header)


def _read_folder(args):
    """A folder of Parquet or .npy row partitions (:mod:`privevo.streaming`).

    ``synth`` with a public --radius/--bounds and no --plot streams it (never
    loaded whole); otherwise the rows are read into memory.
    """
    import numpy as np

    from .io import Table, parse_columns
    from .streaming import NpySource, open_source

    suffixes = {f.suffix for f in Path(args.data).iterdir() if f.is_file()}
    if not suffixes & {".parquet", ".pq", ".npy"}:
        raise ValueError(f"{args.data} is a directory without .parquet or .npy files; "
                         "give a data file or a folder of them")
    wanted = parse_columns(args.columns)
    with _naming_the_file(args.data):
        source = open_source(args.data, columns=wanted)  # refuses a folder of mixed kinds
    if wanted is not None and isinstance(source, NpySource):
        raise ValueError("--columns is not supported for a folder of .npy files; "
                         "save the feature columns only")
    if source.shape[0] == 0:
        raise ValueError(f"{args.data} holds no rows; it needs rows of numbers")
    names = list(getattr(source, "columns", ()))
    if isinstance(source, NpySource) or len(names) != source.shape[1]:
        names = [str(j) for j in range(source.shape[1])]
    stream = args.command == "synth" and not args.plot and (
        args.radius is not None or args.bounds is not None)
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
        raise ValueError(f"{part} is not a readable Parquet file ({_one_line(err)}); "
                         "replace or remove it") from None


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
        raise ValueError(f"{folder}: column {names[int(bad_cols[0])]!r} has NaN or infinite values "
                         f"({bad_rows.size}, first at row {int(bad_rows[0])} of the folder's parts "
                         "in name order); drop or impute them first")


def _cluster(args):
    """A Dask session for --backend dask: the --scheduler's cluster, else a local one."""
    if args.backend != "dask":
        return contextlib.nullcontext()
    from .distributed import dask_session

    return dask_session(address=args.scheduler)


def _delta(args, n: int, library_default: bool):
    """--delta, else None if the estimator derives its own default, else the library's rule.

    ``accounting.default_delta``: n^-1.1 where n is public (replace adjacency),
    a fixed 1e-6 under add/remove, where n is private.
    """
    if args.delta is not None or library_default:
        return args.delta
    from .accounting import default_delta

    if args.adjacency == "replace" and n < 2:
        raise ValueError("the default delta n^-1.1 needs at least 2 rows; pass --delta")
    return default_delta(n if args.adjacency == "replace" else None)


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
            print(f"privevo {args.command}: running ({done}{time.monotonic() - start:.0f} s)",
                  file=sys.stderr, flush=True)

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
        raise ValueError(f"--center needs 1 or {d} values (the data has {d} columns), "
                         f"got {center.size}")
    return np.broadcast_to(center, (d,)).copy()


def _too_many(flag: str, value: int, n: int, adjacency: str) -> str:
    """The k > n message; n is named only where it is public (replace adjacency)."""
    if adjacency == "replace":
        return f"{flag} {value} is larger than the number of rows ({n}); choose {flag} <= {n}"
    return f"{flag} {value} is larger than the number of rows; choose a smaller {flag}"


def _finish(args, paths: dict, points, columns, report: dict, figure=None,
            summary: dict | None = None) -> None:
    """Write every output atomically (all or nothing), then print."""
    import numpy as np

    from .io import write_json, write_outputs, write_points

    if paths:
        writers = {
            paths["output"]: lambda tmp: write_points(tmp, points, columns,
                                                      fmt_path=paths["output"]),
            paths["report"]: lambda tmp: write_json(tmp, report),
        }
        if figure is not None:
            writers[paths["plot"]] = lambda tmp: figure.savefig(tmp, format="png", dpi=110)
        write_outputs(writers)
    result = {**(summary or {}), "outputs": {k: str(v) for k, v in paths.items()},
              "privacy_report": report}
    if args.json:
        if not paths:
            result["points"] = np.asarray(points).tolist()
        print(json.dumps(result, indent=2))
        return
    if not paths:
        np.savetxt(sys.stdout, points, fmt="%.10g", delimiter=",", header=",".join(columns),
                   comments="")
    if not args.quiet:
        written = ", ".join(str(p) for p in paths.values())
        print(_summary_line(report) + (f"; wrote {written}" if written else ""),
              file=sys.stderr if not paths else sys.stdout)


def _summary_line(report: dict) -> str:
    """ε, δ, μ of the whole run; σ and T of its PE rounds (not of a count or sum release)."""
    rounds = next((r for r in report.get("releases", []) if r.get("name") == "nn_histogram"), {})
    sigma = rounds.get("sigma", report.get("sigma"))
    steps = rounds.get("count", report.get("steps"))
    num = lambda value: "n/a" if value is None else f"{value:.4g}"  # zCDP: no mu
    guarantee = ""
    if not report.get("guarantee_holds", True):
        guarantee = " (guarantee does NOT hold: see warnings)"
    return (f"epsilon={num(report.get('epsilon'))} delta={report['delta']:.3g} "
            f"mu={num(report.get('mu'))} sigma={num(sigma)} T={steps}{guarantee}")


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


# -- commands -----------------------------------------------------------------------


def _kmeans(args) -> int:
    from ._validation import check_positive_int

    check_positive_int(args.k, "--k")
    if args.recover_share is not None and not 0 <= args.recover_share < 1:
        raise ValueError(f"--recover-share must be in [0, 1) (0: no recover step), "
                         f"got {args.recover_share}")
    _check_common(args)
    paths = _plan_paths(args)
    table = _read(args)
    X = table.data
    n, d = X.shape
    if args.k > n:
        raise ValueError(_too_many("--k", args.k, n, args.adjacency))
    _check_kmeans_rounds(args, d)
    model = _kmeans_model(args, n, d)
    with _cluster(args), _heartbeat(args):
        model.fit(X)
    report = _publishable(model.privacy_report_, args, table)
    figure = None
    if args.plot:
        from .plots import plot_centers

        figure = plot_centers(X, model.cluster_centers_, columns=table.columns,
                              title=f"DP k-means, k={args.k}, ε={args.epsilon:g}")
    _finish(args, paths, model.cluster_centers_, table.columns, report, figure,
            {"n_clusters": args.k})
    return 0


def _check_kmeans_rounds(args, d: int) -> None:
    """Refuse a default T (it grows with ε) above MAX_ROUNDS, saying what to pass."""
    from ._validation import MAX_ROUNDS

    if args.iterations is not None:
        return
    try:
        from .kmeans import hdpe_iterations, hdpe_projection_dim, paper_iterations
    except ImportError:  # the estimator checks its own T
        return
    hdpe = args.method == "hdpe-means" or (args.method == "auto" and d > 32)
    if hdpe:
        T = hdpe_iterations(min(hdpe_projection_dim(d), d))
    else:
        T = paper_iterations(args.epsilon, d)
    if T > MAX_ROUNDS:
        raise ValueError(f"--epsilon {args.epsilon:g} gives T = {T} PE rounds by default (T grows "
                         f"with epsilon), above the maximum {MAX_ROUNDS}; pass --iterations N "
                         f"with N <= {MAX_ROUNDS}")


def _kmeans_model(args, n: int, d: int):
    try:
        from .kmeans import DPKMeans
    except ImportError as err:
        raise ImportError(f"DPKMeans is not available in this installation ({err})") from None
    model = DPKMeans()
    supported = model.get_params()
    params = dict(
        n_clusters=args.k,
        epsilon=args.epsilon,
        delta=_delta(args, n, library_default=supported.get("delta", 0) is None),
        radius=args.radius,
        center=_center(args, d),
        bounds=None if args.bounds is None else tuple(args.bounds),
        method=args.method,
        recover_share=args.recover_share,
        projection=args.projection,
        iterations=args.iterations,
        adjacency=args.adjacency,
        random_state=args.seed,
        progress=_progress(args),
        backend=args.backend,
    )
    for flag, name, value, default in (("--checkpoint", "checkpoint", args.checkpoint, None),
                                       ("--noise", "noise", args.noise, "gaussian")):
        if value == default:
            continue
        if name not in supported:
            raise ValueError(f"{flag} is not supported by this version of DPKMeans; drop {flag}")
        params[name] = value
    return model.set_params(**{k: v for k, v in params.items() if k in supported})


def _synth(args) -> int:
    from ._validation import check_positive_int

    check_positive_int(args.m, "--m")
    check_positive_int(args.variations, "--variations")
    _check_common(args)
    for name in ("R", "scale"):
        value = getattr(args, name)
        if value is not None and not (value > 0 and math.isfinite(value)):
            raise ValueError(f"--{name} must be a finite number > 0, got {value}")
    selector = _selector(args.selector)  # fails early if the selector is not installed
    paths = _plan_paths(args)
    table = _read(args)
    X = table.data
    n, d = X.shape
    center, radius, leak = _synth_domain(args, X)
    X = _clipped(args, X, center, radius)
    pe = _synth_model(args, selector, center, radius, n)
    with _cluster(args), _naming_the_file(args.data), _heartbeat(args, pe.iterations) as beat:
        pe.callbacks = [*pe.callbacks, lambda record: beat.update(done=record.iteration + 1)]
        pe.fit(X)
    points = pe.synthetic_
    if args.bounds is not None:  # post-processing: keep the output inside the public box
        points = points.clip(args.bounds[0], args.bounds[1])
    report = _synth_report(args, pe, table, leak)
    figure = None
    if args.plot:
        from .plots import plot_trajectories

        figure = plot_trajectories(pe.history_, X, columns=table.columns,
                                   title=f"PE ({args.selector}), m={args.m}, ε={args.epsilon:g}")
    delivered = len(points)
    if delivered < args.m and not args.quiet:
        print(f"privevo synth: note: the {args.selector} selector delivered {delivered} of the "
              f"{args.m} points asked for (it keeps only points that pass its noise threshold); "
              "pass --fill to get exactly --m", file=sys.stderr)
    _finish(args, paths, points, table.columns, report, figure,
            {"m_requested": args.m, "m_delivered": delivered, "selector": args.selector})
    return 0


def _selector(name: str):
    if name == "rank":
        from .selection import Rank

        return Rank()
    if name == "subsample":
        from .selection import Subsample

        return Subsample()
    try:
        if name == "gape":
            from .selection.gape import GAPE

            return GAPE
        from .selection.weighted_kmeans import WeightedKMeans

        return WeightedKMeans()
    except ImportError as err:
        raise ImportError(f"selector {name!r} is not available in this installation ({err}); "
                          "use --selector rank") from None


def _synth_domain(args, X):
    """(center, radius, leak): the public ball the population lives in.

    --radius (and --center) or --bounds are public; with neither, the data's
    own extent is used, a PrivacyLeakWarning is raised and the report says the
    guarantee does not hold.
    """
    import numpy as np

    from ._clip import row_norms
    from .exceptions import PrivacyLeakWarning

    d = X.shape[1]
    if args.bounds is not None:
        lo, hi = args.bounds
        return np.full(d, (lo + hi) / 2), (hi - lo) / 2 * math.sqrt(d), False
    center = _center(args, d)
    center = np.zeros(d) if center is None else center
    if args.radius is not None:
        return center, float(args.radius), False
    radius = float(row_norms(X, center).max()) or 1.0
    if not math.isfinite(radius):
        raise ValueError("the data's extent is beyond the float range; pass a public --radius "
                         "or --bounds")
    warnings.warn(
        "no --radius or --bounds given: the radius was taken from the private data, so the "
        "result is not DP; pass a public --radius or --bounds",
        PrivacyLeakWarning,
        stacklevel=2,
    )
    return center, radius, True


def _clipped(args, X, center, radius: float):
    """In-memory rows moved into the public domain (box or ball), as DPKMeans does: a public
    per-row map (each row still votes once) that keeps huge finite values finite."""
    import numpy as np

    from ._clip import clip_to_ball

    if not isinstance(X, np.ndarray):  # a streamed folder: clipped block by block as it is read
        from .streaming import ClippedSource

        bounds = None if args.bounds is None else tuple(args.bounds)
        return ClippedSource(X, center=center, radius=radius, bounds=bounds)
    if args.bounds is not None:
        return np.clip(X, args.bounds[0], args.bounds[1])
    return clip_to_ball(X, radius, center)


def _synth_model(args, selector, center, radius: float, n: int):
    import inspect

    from . import PrivateEvolution
    from .variation import GaussianVariation, LevyVariation, MultiScaleVariation, UniformBall

    R = args.R if args.R is not None else radius / 4
    if args.selector == "gape":
        variation = MultiScaleVariation(R, radius=radius, center=center)
        selector = selector(R=R, fill=args.fill)
    elif args.selector == "weighted_kmeans":
        variation = LevyVariation(per_point=args.variations, radius=radius, center=center)
    else:
        scale = args.scale if args.scale is not None else radius / 20
        variation = GaussianVariation(scale, args.variations, radius=radius, center=center)
    delta_param = inspect.signature(PrivateEvolution).parameters["delta"]
    return PrivateEvolution(
        UniformBall(radius, center=center),
        variation,
        selector,
        n_synthetic=args.m,
        iterations=args.iterations or args.iterations_default,
        epsilon=args.epsilon,
        delta=_delta(args, n, library_default=delta_param.default is None),
        adjacency=args.adjacency,
        random_state=args.seed,
        progress=_progress(args),
        checkpoint=args.checkpoint,
        backend=args.backend,
        noise=args.noise,
        public_parameters={"radius": radius, "center": center, "bounds": args.bounds,
                           "R": R if args.selector == "gape" else None},
    )


def _synth_report(args, pe, table, leak: bool) -> dict:
    report = _publishable(pe.privacy_report_, args, table)
    if leak:
        report["warnings"] = [*report["warnings"],
                              "radius taken from the private data (no --radius/--bounds): not DP"]
        report["guarantee_holds"] = False
    return report


def _account(args) -> int:
    from . import accounting
    from ._validation import check_adjacency

    sensitivity = check_adjacency(args.adjacency)
    if (args.epsilon is None) == (args.sigma is None):
        raise ValueError("give exactly one of --epsilon or --sigma")
    discrete = accounting.is_discrete_gaussian(args.noise)
    if args.sigma is None:
        to_sigma = accounting.discrete_gaussian_sigma if discrete else accounting.gaussian_sigma
        sigma = to_sigma(args.epsilon, args.delta, args.steps, sensitivity)
        to_epsilon = accounting.discrete_gaussian_epsilon if discrete else accounting.epsilon_of
        epsilon = to_epsilon(sigma, args.delta, args.steps, sensitivity)  # <= --epsilon
    else:
        sigma = args.sigma
        to_epsilon = accounting.discrete_gaussian_epsilon if discrete else accounting.epsilon_of
        epsilon = to_epsilon(sigma, args.delta, args.steps, sensitivity)
    result = {"epsilon": epsilon, "delta": args.delta, "steps": args.steps,
              "adjacency": args.adjacency, "sensitivity": sensitivity}
    if discrete:
        result.update(noise=args.noise, sigma=sigma,
                      rho=accounting.zcdp_rho(sigma, args.steps, sensitivity))
    else:
        from ._validation import EPSILON_MAX, EPSILON_MIN

        target = args.epsilon if args.epsilon is not None else epsilon
        classical = None  # the classical bound, for comparison, where it is defined
        if EPSILON_MIN <= target <= EPSILON_MAX:
            classical = accounting.classical_sigma(target, args.delta, args.steps, sensitivity)
        result.update(sigma=sigma, mu=math.sqrt(args.steps) * sensitivity / sigma,
                      classical_sigma=classical)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        for key, value in result.items():
            print(f"{key:>16}: {value}")
    return 0


def _demo(args) -> int:
    from .demo import format_table, run_demo

    out = None if args.no_plots else Path(args.out)
    if out is not None:
        _require("matplotlib", "plots", "the demo's plots (or use --no-plots)")
        if out.exists() and not out.is_dir():
            raise ValueError(f"--out {out} exists and is not a folder; choose another --out")
        out.mkdir(parents=True, exist_ok=True)
    with _heartbeat(args):
        result = run_demo(seed=0 if args.seed is None else args.seed, out_dir=out,
                          progress=_progress(args))
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    for section in result["tables"]:
        print(f"\n{section['title']}\n")
        print(format_table(section["rows"]))
        if section.get("note"):
            print(f"\n{section['note']}")
    if result["plots"]:
        print(f"\nplots written to {out}/: " + ", ".join(Path(p).name for p in result["plots"]))
    print(f"\n(total {result['seconds']:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
