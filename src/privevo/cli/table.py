"""``privevo synth-table`` and ``privevo metadata``: tabular PE from the command line.

:func:`add_tabular_commands` registers both on the main parser's subparsers.
Errors are one line (the main CLI's handler); outputs are written atomically
after every check, beside them the privacy report (``OUT.privacy.json``).
No output carries the seed's value, the exact row count or a cell's content.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from ._common import ADJACENCIES, _command  # one set of helpers for every command

__all__ = ["add_tabular_commands", "read_table"]

TABLE_FORMATS = (".csv", ".tsv")


def add_tabular_commands(subparsers) -> None:
    """Add ``synth-table`` and ``metadata`` to ``subparsers`` (from ``add_subparsers``)."""
    _synth_table_parser(subparsers)
    _metadata_parser(subparsers)


def _synth_table_parser(sub) -> None:
    p = _command(
        sub,
        "synth-table",
        "DP synthetic table (CSV) by tabular Private Evolution",
        "Differentially private synthetic rows of a CSV table with categorical and numeric\n"
        "columns. The metadata (privevo metadata) declares each column's public domain; numeric\n"
        "values outside it are clipped, categories outside it map to the column's declared\n"
        "'other' category (else an error). Without --metadata the domains are read off the\n"
        "data: not DP (warned; the report says so).",
        "  privevo synth-table credit.csv --metadata meta.json --epsilon 1 --rows 5000 -o syn.csv\n"
        "  privevo synth-table credit.csv --metadata meta.json --epsilon 4 --delta 1e-6 -o syn.csv",
    )
    p.add_argument("data", metavar="DATA", help="private table: .csv or .tsv with a header row")
    p.add_argument(
        "--metadata",
        help="metadata JSON (privevo metadata); default: derived from the data (not DP)",
    )
    p.add_argument("--epsilon", type=float, required=True, help="total epsilon (> 0)")
    p.add_argument(
        "--delta",
        type=float,
        help="delta in (0, 1); default 1/(N ln N) with N the metadata's public n_rows, else 1e-6",
    )
    p.add_argument("--rows", type=int, help="synthetic rows to write (default: m)")
    p.add_argument(
        "--population",
        type=int,
        help="m, rows selected per PE round (default: N/30 in [50, 3000] with N the metadata's "
        "public n_rows, else 300)",
    )
    p.add_argument(
        "--iterations",
        type=int,
        help="T, the PE rounds (default: from the public n_rows and the budget, TabularPE's auto)",
    )
    p.add_argument("--selector", choices=["tabpe", "rank", "subsample", "gape"], default="tabpe")
    p.add_argument("--adjacency", choices=ADJACENCIES, default="add_remove")
    p.add_argument(
        "--seed", type=int, help="random seed (default: fresh randomness; never written out)"
    )
    p.add_argument(
        "-o",
        "--output",
        required=True,
        help="synthetic table (.csv or .tsv); the report goes beside it",
    )
    p.add_argument("--json", action="store_true", help="machine-readable summary on stdout")
    p.add_argument("-q", "--quiet", action="store_true", help="no messages")
    p.set_defaults(func=_synth_table)


def _metadata_parser(sub) -> None:
    from ..tabular.metadata import DESCRIPTION_SYNTAX

    p = _command(
        sub,
        "metadata",
        "write a table's metadata JSON (public column kinds and domains)",
        "From a public description (only the table's header is read), or, without one, from\n"
        "the data itself: then the metadata is not public, a warning says so and every fit\n"
        "with it reports "
        f"guarantee_holds: false.\n\ndescription syntax: {DESCRIPTION_SYNTAX}",
        "  privevo metadata credit.csv --public-description credit.txt -o meta.json\n"
        "  privevo metadata credit.csv -o meta.json   # from the data: NOT differentially private",
    )
    p.add_argument(
        "data",
        metavar="DATA",
        help="the table (.csv or .tsv); only its header is read with a description",
    )
    p.add_argument("--public-description", help="text file describing each column (syntax above)")
    p.add_argument(
        "--categorical",
        nargs="+",
        default=(),
        help="without a description: columns to treat as categorical",
    )
    p.add_argument("-o", "--output", help="metadata JSON to write (default: stdout)")
    p.set_defaults(func=_metadata)


# -- files ------------------------------------------------------------------------------


def read_table(path, header_only: bool = False):
    """A CSV/TSV as a DataFrame (strings stay strings; empty cells are missing)."""
    import pandas as pd

    path = Path(path)
    if path.suffix.lower() not in TABLE_FORMATS:
        raise ValueError(
            f"{path}: unsupported table type {path.suffix or '(none)'!r}; use .csv or .tsv"
        )
    if not path.is_file():
        raise ValueError(f"{path} does not exist or is not a file")
    try:
        return pd.read_csv(
            path,
            sep="\t" if path.suffix.lower() == ".tsv" else ",",
            nrows=0 if header_only else None,
        )
    except pd.errors.EmptyDataError:
        raise ValueError(f"{path} is empty; it needs a header row and data rows") from None
    except pd.errors.ParserError as err:
        raise ValueError(f"{path} is not a well-formed table ({_first_line(err)})") from None


def _first_line(err: Exception) -> str:
    return str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__


def _write_table(path: Path, df) -> None:
    df.to_csv(path, sep="\t" if path.suffix.lower() == ".tsv" else ",", index=False)


# -- commands ---------------------------------------------------------------------------


def _synth_table(args) -> int:
    from ..io import (
        check_distinct_paths,
        check_output_path,
        report_path_for,
        write_json,
        write_outputs,
    )
    from ..tabular.estimator import TabularPE

    for name in ("rows", "population", "iterations"):
        value = getattr(args, name)
        if value is not None and value < 1:
            raise ValueError(f"--{name} must be an integer >= 1, got {value}")
    out = check_output_path(args.output, TABLE_FORMATS)
    report_path = report_path_for(out)
    check_distinct_paths(
        args.data, {"-o": out, "the privacy report": report_path}, {"--metadata": args.metadata}
    )
    metadata = _load_metadata(args.metadata)
    df = read_table(args.data)
    model = TabularPE(
        args.epsilon,
        args.delta,
        metadata,
        iterations="auto" if args.iterations is None else args.iterations,
        n_synthetic="auto" if args.population is None else args.population,
        selector=args.selector,
        adjacency=args.adjacency,
        random_state=args.seed,
    ).fit(df)
    synthetic = model.sample(args.rows)
    report = model.privacy_report_
    write_outputs(
        {
            out: lambda tmp: _write_table(tmp, synthetic),
            report_path: lambda tmp: write_json(tmp, report),
        }
    )
    _print_summary(args, out, report_path, len(synthetic), report)
    return 0


def _load_metadata(path):
    from ..tabular.metadata import TableMetadata

    return None if path is None else TableMetadata.from_json(_existing(path))


def _existing(path) -> Path:
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"{path} does not exist or is not a file")
    return path


def _print_summary(args, out: Path, report_path: Path, rows: int, report: dict) -> None:
    if args.json:
        print(
            json.dumps(
                {"output": str(out), "report": str(report_path), "rows": rows, "privacy": report},
                indent=2,
            )
        )
    elif not args.quiet:
        eps = report["epsilon"]
        note = (
            ""
            if report["guarantee_holds"]
            else " (NOT differentially private: see the report's warnings)"
        )
        print(
            f"wrote {rows} synthetic rows to {out} (epsilon={eps:.4g}, "
            f"delta={report['delta']:.3g}){note}; privacy report: {report_path}",
            file=sys.stderr,
        )


def _metadata(args) -> int:
    from ..io import check_distinct_paths, check_output_path, write_json, write_outputs
    from ..tabular.metadata import metadata_from_data, metadata_from_description

    out = check_output_path(args.output, (".json",)) if args.output else None
    if out is not None:
        check_distinct_paths(
            args.data, {"-o": out}, {"--public-description": args.public_description}
        )
    if args.public_description:
        header = read_table(args.data, header_only=True).columns
        meta = metadata_from_description(
            _existing(args.public_description).read_text(), list(header)
        )
    else:
        meta = metadata_from_data(read_table(args.data), categorical=args.categorical)
    if out is None:
        print(json.dumps(meta.as_dict(), indent=2))
    else:
        write_outputs({out: lambda tmp: write_json(tmp, meta.as_dict())})
    return 0
