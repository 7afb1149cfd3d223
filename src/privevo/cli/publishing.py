"""What the commands publish: checked output paths, outputs written atomically, the report
as published (no seed value), the summary line, progress and the heartbeat on stderr."""

from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path


def plan_paths(args, formats=None, inputs: dict | None = None) -> dict[str, Path]:
    """Every command's checked output paths: the data (``-o``, one of ``formats``; default the
    numeric writers'), the report beside it, the PNG beside it with ``--plot``, and the
    checkpoint's; each writable, none an input (``args.data``, or a file of ``inputs``: flag →
    path) or inside an input folder, all distinct."""
    from ..io import WRITE_FORMATS, check_distinct_paths, check_output_path

    paths = _outputs(args, WRITE_FORMATS if formats is None else formats)
    labelled = {
        "-o": paths.get("output"),
        "the privacy report": paths.get("report"),
        "the --plot image": paths.get("plot"),
    }
    if getattr(args, "checkpoint", None) is not None:
        labelled["--checkpoint"] = check_output_path(
            args.checkpoint, formats=None, what="checkpoint"
        )
    outputs = {k: v for k, v in labelled.items() if v is not None}
    check_distinct_paths(args.data, outputs, inputs)
    return paths


def _outputs(args, formats) -> dict[str, Path]:
    """Checked output paths: data, report beside it, PNG beside it (if --plot)."""
    from ..io import check_output_path, report_path_for

    plot = getattr(args, "plot", False)
    if args.output is None:
        if plot:
            raise ValueError("--plot needs an output file; add -o OUT.csv")
        return {}
    out = check_output_path(args.output, formats)
    paths = {"output": out, "report": report_path_for(out)}
    if out.suffix.lower() == ".parquet":
        require("pyarrow", "io", "writing Parquet")
    if plot:
        require("matplotlib", "plots", "--plot")
        paths["plot"] = out.with_suffix(".png")
    for path in paths.values():
        if path.is_dir():
            raise ValueError(f"output path {path} is a directory; choose another -o")
    return paths


def require(module: str, extra: str, what: str) -> None:
    """Fail before any private computation if an optional dependency is missing."""
    import importlib.util

    if importlib.util.find_spec(module) is None:
        raise ImportError(f"{what} needs {module}: pip install 'privevo[{extra}]'")


def progress(args) -> bool:
    return not args.quiet and not args.json and sys.stderr.isatty()


def run_keywords(args) -> dict:
    """The estimator keywords the point commands (kmeans, synth) set alike from their flags."""
    return dict(
        adjacency=args.adjacency,
        random_state=args.seed,
        progress=progress(args),
        checkpoint=args.checkpoint,
        backend=args.backend,
        noise=args.noise,
    )


_HEARTBEAT_SECONDS = 30.0


@contextlib.contextmanager
def heartbeat(args, total: int | None = None):
    """Off a terminal (no progress bar there), one line every _HEARTBEAT_SECONDS while a run
    lasts, so that a long run in a log or a pipe is never silent; none with --quiet. The line
    says where the run is (:func:`heartbeat_line`), never for how long it has run: durations
    grow with the private data size (docs/privacy.md, side channels). Yields a dict whose
    ``"done"`` (rounds completed, of ``total``) or ``"phase"`` (a public phase name) the caller
    updates."""
    import threading

    state = {"done": None, "phase": None}
    if args.quiet or sys.stderr.isatty():
        yield state
        return
    stop = threading.Event()

    def beat() -> None:
        while not stop.wait(_HEARTBEAT_SECONDS):
            print(heartbeat_line(args.command, state, total), file=sys.stderr, flush=True)

    thread = threading.Thread(target=beat, name="privevo-heartbeat", daemon=True)
    thread.start()
    try:
        yield state
    finally:
        stop.set()
        thread.join()


def heartbeat_line(command: str, state: dict, total: int | None = None) -> str:
    """``privevo synth: running (3 of 10 rounds done)``, ``privevo synth-text: running (round 2
    of 3: generating 40 texts)``, ``privevo kmeans: running``: public counts only, no time."""
    where = state.get("phase")
    if where is None and total is not None:
        where = f"{state.get('done') or 0} of {total} rounds done"
    return f"privevo {command}: running" + (f" ({where})" if where else "")


def finish(
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
            summary_line(report) + (f"; wrote {written}" if written else ""),
            file=sys.stderr if not paths else sys.stdout,
        )


def summary_line(report: dict) -> str:
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


def publishable(report: dict, args, table) -> dict:
    """The report as published: the CLI's parameters added, any seed value removed, the seed
    warning (:data:`privevo.report.SEED_WARNING`) added where the estimator's report lacks one."""
    from ..report import SEED_WARNING

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


def plot_if_asked(args, plot: str, *data, **options):
    """The --plot figure, ``privevo.plots.<plot>(*data, **options)`` (matplotlib is imported only
    then), or None without --plot."""
    if not args.plot:
        return None
    from .. import plots

    return getattr(plots, plot)(*data, **options)


def one_line(err: BaseException) -> str:
    text = " ".join(str(err).split())
    return text or type(err).__name__
