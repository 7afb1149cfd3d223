"""The ``privevo`` command line.

Commands, each registered by its module in :func:`_parser`:

* ``kmeans`` — DP k-means centres (:mod:`.kmeans`);
* ``synth`` — DP synthetic points by Private Evolution (:mod:`.synth`);
* ``account`` — σ ↔ ε of T Gaussian releases (:mod:`.account`);
* ``demo`` — privevo on built-in data, a result table and plots (:mod:`.demo`);
* ``audit`` — empirical lower bounds on ε beside the claims (:mod:`.audit`);
* ``synth-text`` — DP synthetic texts with a language model (:mod:`.synth_text`);
* ``intrinsic-dim`` — the intrinsic dimension of a language model's variations
  (:mod:`.intrinsic_dim`);
* ``synth-table`` — a DP synthetic table by tabular Private Evolution (:mod:`.table`);
* ``metadata`` — a table's public metadata JSON from a public description (:mod:`.table`).

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
import os
import re
import signal
import sys
import warnings

from .options import check_seed
from .publishing import one_line

EXIT_ERROR = 2


EXIT_INTERRUPTED = 130


EXIT_TERMINATED = 143


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (no usage block); negative numbers in any notation
    (``-1e1``, ``-.5``, ``-inf``), and comma-separated lists that start with one
    (``--labels -1,1``), are values, never options (no option starts with "-" and a digit)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # no option of privevo starts with "-" and a digit: such a word is always a value
        self._negative_number_matcher = re.compile(
            r"^-(\d|\.\d)|^-(inf|infinity|nan)($|,)",
            re.IGNORECASE,
        )

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
            check_seed(args)
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
        except UnicodeDecodeError:  # its text quotes the bytes of a cell: name the file only
            if os.environ.get("PRIVEVO_DEBUG"):
                raise
            print(f"{prog}: error: {_not_utf8(args)}", file=sys.stderr)
            return EXIT_ERROR
        except (ValueError, OSError, ImportError) as err:
            if os.environ.get("PRIVEVO_DEBUG"):
                raise
            print(f"{prog}: error: {one_line(err)}", file=sys.stderr)
            return EXIT_ERROR
        except Exception as err:  # a bug: still one line, with a way to see more
            if os.environ.get("PRIVEVO_DEBUG"):
                raise
            print(
                f"{prog}: internal error: {type(err).__name__}: {one_line(err)} "
                "(set PRIVEVO_DEBUG=1 for a traceback)",
                file=sys.stderr,
            )
            return 1


def _not_utf8(args) -> str:
    """The message for input that is not UTF-8: the first file of the command that is not."""
    for flag in ("data", "metadata", "public_description"):
        path = getattr(args, flag, None)
        if path and os.path.isfile(path):
            try:
                with open(path, encoding="utf-8") as handle:
                    for _ in iter(lambda: handle.read(1 << 20), ""):
                        pass
            except UnicodeDecodeError:
                return f"{path} is not UTF-8 text; save it as UTF-8"
            except OSError:
                continue
    return "an input file is not UTF-8 text; save it as UTF-8"


def _one_line_warning(message, category, filename, lineno, file=None, line=None) -> None:
    print(f"privevo: warning: {category.__name__}: {one_line(message)}", file=sys.stderr)


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="privevo",
        description="Differentially private clustering and synthetic data by Private Evolution.",
    )
    from .._version import __version__

    parser.add_argument("--version", action="version", version=f"privevo {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    from . import account, audit, demo, intrinsic_dim, kmeans, synth, synth_text

    for command in (kmeans, synth, account, demo, audit, synth_text, intrinsic_dim):
        command.add_parser(sub)
    from .table import add_tabular_commands  # synth-table, metadata

    add_tabular_commands(sub)
    return parser
