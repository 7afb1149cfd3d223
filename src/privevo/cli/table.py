"""``privevo synth-table`` and ``privevo metadata``: tabular PE from the command line.

:func:`add_tabular_commands` registers both on the main parser's subparsers.
Errors are one line (the main CLI's handler); outputs are written atomically
after every check, beside them the privacy report (``OUT.privacy.json``).
No output carries the seed's value, the exact row count or a cell's content.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..selection import selector_names
from .options import add_adjacency_and_noise, add_header_flags, check_seed, command
from .publishing import plan_paths

__all__ = ["add_tabular_commands"]


def add_tabular_commands(subparsers) -> None:
    """Add ``synth-table`` and ``metadata`` to ``subparsers`` (from ``add_subparsers``)."""
    _synth_table_parser(subparsers)
    _metadata_parser(subparsers)


def _synth_table_parser(sub) -> None:
    p = command(
        sub,
        "synth-table",
        "DP synthetic table (CSV) by tabular Private Evolution",
        "Differentially private synthetic rows of a CSV table with categorical and numeric\n"
        "columns. The metadata (privevo metadata) declares each column's public domain; numeric\n"
        "values outside it are clipped, categories outside it map to the column's declared\n"
        "'other' category (else an error). Without --metadata the domains are read off the\n"
        "data: not DP (warned; the report says so).",
        "  privevo synth-table credit.csv --metadata meta.json --epsilon 1 --rows 5000 -o syn.csv\n"
        "  privevo synth-table credit.csv --metadata meta.json --epsilon 4 --delta 1e-6 "
        "-o syn.csv\n"
        "  privevo synth-table credit.csv --metadata meta.json --epsilon 1 "
        "--noise discrete_gaussian_secure -o syn.csv",
    )
    p.add_argument(
        "data",
        metavar="DATA",
        help="private table: .csv or .tsv with a header row, or a .parquet file or folder of "
        "them (read block by block; needs --metadata)",
    )
    p.add_argument(
        "--metadata",
        help="metadata JSON (privevo metadata); default: derived from the data (not DP)",
    )
    p.add_argument("--epsilon", type=float, required=True, help="total epsilon (> 0)")
    p.add_argument(
        "--delta",
        type=float,
        help="delta in (0, 1); default 1e-6, or 1/(10 N) with N the metadata's public n_rows "
        "above 1e5; without n_rows, 1e-6 is refused for a table of more than about 1e5 rows",
    )
    _add_column_options(p)
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
    p.add_argument(
        "--selector", choices=["tabpe", *selector_names(keeps_candidates=True)], default="tabpe"
    )
    p.add_argument(
        "--pair-selection",
        choices=["adaptive", "tree"],
        default="adaptive",
        help="how the measured 2- and 3-way marginals are chosen (after --target's tables): "
        "adaptive (AIM's rounds, accounted by zCDP) or tree (MST's spanning tree); "
        "docs/tabular.md",
    )
    add_adjacency_and_noise(p)
    p.add_argument(
        "--seed", type=int, help="random seed (default: fresh randomness; never written out)"
    )
    p.add_argument(
        "-o",
        "--output",
        required=True,
        help="synthetic table (.csv or .tsv); the report goes beside it",
    )
    _add_header_options(p)
    p.add_argument(
        "--json",
        action="store_true",
        help="a short machine-readable summary on stdout (the privacy report stays in its file)",
    )
    p.add_argument("-q", "--quiet", action="store_true", help="no messages")
    p.set_defaults(func=_synth_table)


def _add_column_options(p) -> None:
    """--rows, --columns, --drop and --target: which columns are read and how many rows written."""
    p.add_argument(
        "--rows",
        type=int,
        help="synthetic rows to write (default: the metadata's public n_rows, else m)",
    )
    p.add_argument(
        "--columns",
        type=_names,
        help="comma-separated columns of DATA to synthesise, in this order (the others are "
        "not read); names from its header",
    )
    p.add_argument(
        "--drop",
        type=_names,
        help="comma-separated columns of DATA to leave out (names from its header)",
    )
    p.add_argument(
        "--target",
        metavar="COL",
        help="outcome column (categorical): its 2-way table with every other column is measured",
    )


def _names(text: str) -> list[str]:
    """A comma-separated list of column names (argparse type of --columns/--drop)."""
    names = [name.strip() for name in text.split(",")]
    if not all(names):
        raise argparse.ArgumentTypeError(
            f"an empty column name in {text!r}; give names separated by commas"
        )
    return names


def _add_header_options(p) -> None:
    add_header_flags(
        p,
        "line 1 holds the column names (public: they may be written out)",
        "every line is data (columns are named 0, 1, ...). Default: with metadata, line 1 is the "
        "header exactly when it holds the metadata's column names; without, line 1 is the header "
        "but its names are not written out (it could be a data row)",
    )


def _metadata_parser(sub) -> None:
    from ..tabular.metadata import DESCRIPTION_SYNTAX

    p = command(
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
        help="the table (.csv, .tsv, or a .parquet file or folder); with a description only "
        "its header (Parquet: its schema) is read",
    )
    p.add_argument("--public-description", help="text file describing each column (syntax above)")
    p.add_argument(
        "--categorical",
        nargs="+",
        default=(),
        help="without a description: columns to treat as categorical",
    )
    p.add_argument("-o", "--output", help="metadata JSON to write (default: stdout)")
    _add_header_options(p)
    p.set_defaults(func=_metadata)


# -- files ------------------------------------------------------------------------------


def _is_parquet(path) -> bool:
    """A Parquet file (any suffix case) or a folder (of Parquet parts: the reader checks them)."""
    from ..private import is_parquet_file

    return Path(path).is_dir() or is_parquet_file(path)


def _write_table(path: Path, df) -> None:
    df.to_csv(path, sep="\t" if path.suffix.lower() == ".tsv" else ",", index=False)


def _private_table(args, metadata):
    """(the private table for the fit, the metadata of its kept columns, whether its columns
    are positions): a Parquet path, or the CSV/TSV read by the header rule; with
    --columns/--drop, only those columns (line 1 must then be the header)."""

    selecting = args.columns is not None or args.drop is not None
    positional = False
    if _is_parquet(args.data):
        if metadata is None:
            raise ValueError(
                f"{args.data}: a Parquet table needs --metadata (its domains are not read off "
                "the data); write it with privevo metadata --public-description"
            )
        data = args.data  # read block by block by the fit
    else:
        if selecting and args.header is False:
            raise ValueError("--columns/--drop name columns of line 1: drop --no-header")
        names = None if metadata is None or selecting else metadata
        data = _read_described(args.data, names, True if selecting else args.header)
        _check_table_memory(args, data.shape[1])
        positional = metadata is None and args.header is None and not selecting
        if positional:  # line 1 could be a private row
            data.columns = [str(j) for j in range(data.shape[1])]
    if selecting:
        data, metadata = _selected(args, data, metadata)
    if metadata is not None and (selecting or _is_parquet(args.data)):
        _check_described(args, _columns_of(data), metadata)
    return data, metadata, positional


def _read_described(path, metadata, header, header_only: bool = False):
    """A CSV/TSV by the header rule with the metadata's measured names; a table that also
    holds its derived columns (their names in line 1 too) is read with every name."""
    from ..private import read_text_table

    if metadata is None:
        return read_text_table(path, None, header, header_only)
    try:
        return read_text_table(path, metadata.names, header, header_only)
    except ValueError:
        if not metadata.derived:
            raise
        first = sys.exc_info()[1]
    try:
        return read_text_table(path, metadata.output_names, header, header_only)
    except ValueError:
        raise first from None


def _columns_of(data) -> list[str]:
    from ..private import frame_source

    return list(frame_source(data).columns)


def _selected(args, data, metadata):
    """The table and metadata with only --columns (in their order), less --drop."""
    from dataclasses import replace

    from ..private import frame_source, select_columns

    rows = frame_source(data)
    for flag, names in (("--columns", args.columns), ("--drop", args.drop)):
        unknown = [c for c in names or () if c not in rows.columns]
        if unknown:
            raise ValueError(
                f"{flag}: {args.data} has no column(s) {unknown}; its columns: {rows.columns}"
            )
    kept = [c for c in args.columns or rows.columns if c not in (args.drop or ())]
    if not kept:
        raise ValueError("--columns/--drop leave no column; keep at least one")
    if metadata is not None:
        spare = [c for c in metadata.names if c not in rows.columns]
        kept_specs = tuple(metadata[c] for c in kept if c in metadata.names)
        if not spare and kept_specs:
            metadata = replace(metadata, columns=kept_specs)
    return select_columns(rows, kept), metadata


def _check_described(args, columns: list[str], metadata) -> None:
    """The metadata describes exactly the table's (kept) columns: else one line naming them."""
    missing = [c for c in metadata.names if c not in columns]
    if missing:
        raise ValueError(
            f"{args.metadata}: column(s) {missing} are not in {args.data} (its columns: "
            f"{columns}); fix the names in the metadata"
        )
    derived = metadata.derived_names  # the fit drops them unread
    extra = [c for c in columns if c not in metadata.names and c not in derived]
    if extra:
        raise ValueError(
            f"{args.data}: column(s) {extra} have no metadata in {args.metadata}; describe "
            "them, or leave them out with --drop"
        )


# -- commands ---------------------------------------------------------------------------


def _synth_table(args) -> int:
    from .._validation import check_delta, check_epsilon
    from ..io import (
        write_json,
        write_outputs,
    )
    from ..private import TABLE_FORMATS
    from ..tabular.estimator import TabularPE

    check_epsilon(args.epsilon, "--epsilon")
    if args.delta is not None:
        check_delta(args.delta, "--delta")
    check_seed(args)
    for name in ("rows", "population", "iterations"):
        value = getattr(args, name)
        if value is not None and value < 1:
            raise ValueError(f"--{name} must be an integer >= 1, got {value}")
    _check_table_memory(args, 1)
    paths = plan_paths(args, TABLE_FORMATS, {"--metadata": args.metadata})
    out, report_path = paths["output"], paths["report"]
    metadata = _load_metadata(args.metadata)
    if metadata is not None:
        _check_metadata_bounds(args.metadata, metadata)
        _check_table_memory(args, len(metadata.columns))
    data, metadata, positional = _private_table(args, metadata)
    rows = args.rows
    if rows is None and metadata is not None and metadata.n_rows is not None:
        rows = metadata.n_rows  # public: the description's n_rows
        _check_table_memory(args, len(metadata.columns), rows)
    model = TabularPE(
        args.epsilon,
        args.delta,
        metadata,
        iterations="auto" if args.iterations is None else args.iterations,
        n_synthetic="auto" if args.population is None else args.population,
        selector=args.selector,
        adjacency=args.adjacency,
        noise=args.noise,
        target=args.target,
        pair_selection=args.pair_selection,
        random_state=args.seed,
    ).fit(data)
    synthetic = model.sample(rows)
    if positional and not args.quiet and not args.json:
        print(
            "privevo synth-table: note: line 1 is taken as the header, but without "
            "--metadata its names are not written out (line 1 could be a data row): the "
            "output names the columns 0, 1, ...; pass --header to keep them",
            file=sys.stderr,
        )
    report = model.privacy_report_
    write_outputs(
        {
            out: lambda tmp: _write_table(tmp, synthetic),
            report_path: lambda tmp: write_json(tmp, report),
        }
    )
    _print_summary(args, out, report_path, len(synthetic), report)
    return 0


_CELL_BYTES = 64  # per synthetic cell: codes, embedding, the frame and its CSV text


def _check_table_memory(args, columns: int, default_rows: int | None = None) -> None:
    from .options import check_memory

    rows = ("--rows (default: the metadata's n_rows)", default_rows or args.rows)
    for flag, value in (rows, ("--population", args.population)):
        if value is not None:
            need = float(value) * (16 + _CELL_BYTES * max(columns, 1))
            check_memory(flag, value, need, f"{_CELL_BYTES} bytes a cell, {columns} column(s)")


def _check_metadata_bounds(path, metadata) -> None:
    """Numeric domains in the range the numeric code keeps finite (public inputs only)."""
    from .options import check_coordinates

    for spec in metadata.columns:
        if spec.is_numeric:
            check_coordinates((spec.lower, spec.upper), f"{path}: column {spec.name!r} bounds")


def _load_metadata(path):
    from ..tabular.metadata import TableMetadata

    return None if path is None else TableMetadata.from_json(_existing(path))


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"{path} is not UTF-8 text; save it as UTF-8") from None


def _existing(path) -> Path:
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"{path} does not exist or is not a file")
    return path


def _print_summary(args, out: Path, report_path: Path, rows: int, report: dict) -> None:
    if args.json:
        print(json.dumps(_json_summary(out, report_path, rows, report), indent=2))
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


def _json_summary(out: Path, report_path: Path, rows: int, report: dict) -> dict:
    """The --json summary: where the outputs are and the guarantee in brief (the whole
    privacy report is its file)."""
    keys = ("epsilon", "delta", "adjacency", "noise", "guarantee_holds", "seeded")
    return {
        "output": str(out),
        "report": str(report_path),
        "rows": rows,  # the synthetic rows written (public: the flag or the metadata's n_rows)
        **{key: report[key] for key in keys if key in report},
        "warnings": len(report.get("warnings", ())),
    }


def _metadata(args) -> int:
    from ..io import check_distinct_paths, check_output_path, write_json, write_outputs
    from ..tabular.metadata import metadata_from_data

    out = check_output_path(args.output, (".json",)) if args.output else None
    if out is not None:
        check_distinct_paths(
            args.data, {"-o": out}, {"--public-description": args.public_description}
        )
    if args.public_description:
        text = _read_text(_existing(args.public_description))
        meta = _described(args, text)
    else:
        df = _whole_table(args)
        unknown = [c for c in args.categorical if c not in df.columns]
        if unknown:
            what = "line 1 (the header)" if args.header is not False else "0, 1, ... (no header)"
            raise ValueError(
                f"--categorical {unknown[0]} is not a column of {args.data}; give names from {what}"
            )
        meta = metadata_from_data(df, categorical=args.categorical)
    if out is None:
        print(json.dumps(meta.as_dict(), indent=2))
    else:
        write_outputs({out: lambda tmp: write_json(tmp, meta.as_dict())})
    return 0


def _described(args, text: str):
    """Metadata from a description, checked against the table's header (CSV/TSV, by the
    header rule) or schema (Parquet): a column either lacks is refused by name."""
    from ..private import frame_source
    from ..tabular.metadata import metadata_from_description

    declared = metadata_from_description(text)
    if _is_parquet(args.data):
        header = frame_source(args.data).columns  # the schema's names: public
    else:
        header = _read_described(args.data, declared, args.header, header_only=True).columns
    try:
        return metadata_from_description(text, list(header))
    except ValueError as err:
        raise ValueError(f"{args.public_description} against {args.data}: {err}") from None


def _whole_table(args):
    """The whole CSV/TSV in memory, for metadata read off the data (not DP: warned). A
    Parquet table's metadata comes from a description only, as synth-table's does."""
    from ..private import read_text_table

    if _is_parquet(args.data):
        raise ValueError(
            f"{args.data}: the metadata of a Parquet table is written from a public "
            "description only (its schema is read, no row); pass --public-description"
        )
    return read_text_table(args.data, None, args.header)
