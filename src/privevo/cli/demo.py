"""``privevo demo``: privevo on built-in data, a result table and plots."""

from __future__ import annotations

import json
from pathlib import Path

from .options import add_common, command
from .publishing import heartbeat, progress, require


def add_parser(sub) -> None:
    p = command(
        sub,
        "demo",
        "run privevo on built-in data: a result table and plots",
        "Run privevo on built-in data (no download): DP k-means vs a DP baseline on a real data "
        "set,\nGAPE vs rank selection on a 2-D mixture; prints a table and writes plots to a "
        "folder.",
        "  privevo demo\n  privevo demo --seed 1 --out demo-plots --json",
    )
    p.add_argument(
        "--out", default="privevo-demo", help="folder for the plots (default ./privevo-demo)"
    )
    p.add_argument("--no-plots", action="store_true", help="skip the plots")
    add_common(p, seed="fixed")
    p.set_defaults(func=_demo)


def _demo(args) -> int:
    from ..demo import format_table, run_demo

    out = None if args.no_plots else Path(args.out)
    if out is not None:
        require("matplotlib", "plots", "the demo's plots (or use --no-plots)")
        if out.exists() and not out.is_dir():
            raise ValueError(f"--out {out} exists and is not a folder; choose another --out")
        out.mkdir(parents=True, exist_ok=True)
    with heartbeat(args):
        result = run_demo(
            seed=0 if args.seed is None else args.seed, out_dir=out, progress=progress(args)
        )
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
