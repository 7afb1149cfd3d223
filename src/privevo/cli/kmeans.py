"""``privevo kmeans``: DP k-means centres (PE-means / HDPE-means)."""

from __future__ import annotations

import re

from .inputs import cluster, read_input
from .options import add_run_options, check_common, command, public_center, too_many
from .publishing import finish, heartbeat, plan_paths, plot_if_asked, publishable, run_keywords

DOMAIN_FLAGS = "--radius, --bounds or --metadata"


def add_parser(sub) -> None:
    from ..kmeans import DPKMeans
    from ..kmeans.plan import HDPE_RECOVER_SHARE, PE_MEANS_RECOVER_SHARE

    projection_share = DPKMeans().projection_share
    p = command(
        sub,
        "kmeans",
        "DP k-means centres (PE-means)",
        "Differentially private k-means by PE-means; writes the k centres and a JSON privacy "
        "report.\nThe default T = floor(4 sqrt(d)) PE rounds at every epsilon (hdpe-means: its "
        "projected d'),\ncapped at the largest --iterations allowed. A folder of .parquet or "
        ".npy parts is read block by block\n(never whole) when the domain is public "
        f"({DOMAIN_FLAGS}) and there is no --plot.",
        "  privevo kmeans data.csv --k 8 --epsilon 1 --radius 10 -o centers.csv\n"
        "  privevo kmeans digits.npy --k 10 --epsilon 2 --bounds 0 16 -o centers.npy --plot\n"
        "  privevo kmeans loans.csv --k 4 --epsilon 1 --bounds 0,0,0 1.5,2,20 -o c.csv\n"
        "  privevo kmeans loans.csv --k 4 --epsilon 1 --metadata loans.txt -o c.csv\n"
        "  privevo kmeans parts/ --columns x,y,z --k 4 --epsilon 0.5 --radius 1 --json",
    )
    p.add_argument("--k", type=int, required=True, help="number of clusters (1 <= k <= n)")
    p.add_argument(
        "--method",
        choices=["auto", "pe-means", "hdpe-means"],
        default="auto",
        help="auto = hdpe-means when d > 32",
    )
    p.add_argument(
        "--recover-share",
        type=float,
        default=None,
        help="share of the budget (of mu^2) for the noisy Lloyd (recover) steps; 0 = the "
        f"paper's PE-means (default {PE_MEANS_RECOVER_SHARE:g} for pe-means, "
        f"{HDPE_RECOVER_SHARE:g} for hdpe-means)",
    )
    p.add_argument(
        "--projection",
        choices=["pca", "random"],
        default="pca",
        help=f"hdpe-means' projection: private PCA ({projection_share * 100:g}%% of mu^2) or the "
        "paper's random one (default pca)",
    )
    add_run_options(p)
    p.add_argument(
        "--metadata",
        metavar="FILE",
        help="public per-column bounds: a description ('ratio: numeric 0..1.5', one line per "
        "column, as privevo metadata reads) or a metadata JSON (not with --radius/--bounds)",
    )
    p.add_argument(
        "--units",
        choices=["data", "scaled"],
        default="data",
        help="where distances are measured: data = the columns' own units (wide columns weigh "
        "most), scaled = each column's --bounds/--metadata interval mapped to [-1, 1] first "
        "(columns weigh alike); centres are written in data units (default data)",
    )
    _per_column_bounds(p)
    p.set_defaults(func=_kmeans)


def _per_column_bounds(p) -> None:
    """--bounds takes LO HI or LO1,LO2,... HI1,HI2,... (negative lists are values, not flags)."""
    p._negative_number_matcher = re.compile(r"^-\d*\.?\d+([eE][-+]?\d+)?(,[-+]?[\d.eE+-]*)*$")
    for action in p._actions:
        if action.dest == "bounds":
            action.type = _numbers
            action.metavar = ("LO[,LO2,...]", "HI[,HI2,...]")
            action.help = (
                "public bounds: one LO HI pair for every column, or one value per column, "
                "comma-separated (--bounds 0,0,0 1.5,2,20); not with --center"
            )


def _numbers(text: str):
    """One float, or a tuple of floats from a comma-separated list."""
    parts = text.split(",")
    try:
        values = tuple(float(v) for v in parts)
    except ValueError:
        raise ValueError(f"not a number or a comma-separated list of numbers: {text!r}") from None
    return values[0] if len(values) == 1 else values


def _kmeans(args) -> int:
    from .._validation import check_positive_int

    check_positive_int(args.k, "--k")
    _check_domain_flags(args)
    check_common(args)
    model = _kmeans_model(args)
    model._validate_params()  # DPKMeans' own rules (--recover-share's range), before any read
    paths = plan_paths(args)
    table = read_input(args)
    X = table.data
    n, d = X.shape
    if n < 2:  # refused without saying n: under add/remove it is private
        raise ValueError(f"{args.data}: k-means needs at least 2 rows")
    if args.k > n:
        raise ValueError(too_many("--k", args.k, n, args.adjacency))
    bounds = _bounds(args, table.columns, d)
    _check_shares(args, model, d)
    model.set_params(center=public_center(args, d), bounds=bounds)
    model._domain_hint = DOMAIN_FLAGS  # the leak warning names the flags
    with cluster(args), heartbeat(args):
        model.fit(X)
    report = publishable(model.privacy_report_, args, table)
    title = f"DP k-means, k={args.k}, ε={args.epsilon:g}"
    figure = plot_if_asked(
        args, "plot_centers", X, model.cluster_centers_, columns=table.columns, title=title
    )
    summary = {"n_clusters": args.k, "low_signal_clusters": report["low_signal_clusters"]}
    finish(args, paths, model.cluster_centers_, table.columns, report, figure, summary)
    return 0


def _check_domain_flags(args) -> None:
    """--metadata is a domain of its own; per-column --bounds lists must match each other."""
    if args.metadata is not None and (args.radius is not None or args.bounds is not None):
        raise ValueError("--metadata gives the bounds: drop --radius/--bounds, or --metadata")
    if args.units == "scaled" and args.metadata is None and args.bounds is None:
        raise ValueError(
            "--units scaled maps each column's interval to [-1, 1]: give the intervals with "
            "--bounds or --metadata (or use --units data)"
        )
    if args.bounds is None:
        return
    lo, hi = (v if isinstance(v, tuple) else (v,) for v in args.bounds)
    if len(lo) != len(hi) and 1 not in (len(lo), len(hi)):
        raise ValueError(
            f"--bounds LO HI need as many values each (or one), got {len(lo)} and {len(hi)}"
        )
    for low, high in zip(
        lo * (len(hi) if len(lo) == 1 else 1), hi * (len(lo) if len(hi) == 1 else 1)
    ):
        if not high > low:
            raise ValueError(
                f"--bounds LO HI needs LO < HI for every column, got {low:g} and {high:g}"
            )


def _bounds(args, columns, d: int):
    """(lo, hi) from --bounds (per column or one pair) or --metadata; None without them."""
    import numpy as np

    if args.metadata is not None:
        return metadata_bounds(args.metadata, columns)
    if args.bounds is None:
        return None
    lo, hi = (np.atleast_1d(np.asarray(v, dtype=float)) for v in args.bounds)
    for name, values in (("LO", lo), ("HI", hi)):
        if values.size not in (1, d):
            raise ValueError(
                f"--bounds {name} needs 1 or {d} values (the data has {d} columns), "
                f"got {values.size}"
            )
    return np.broadcast_to(lo, (d,)).copy(), np.broadcast_to(hi, (d,)).copy()


def metadata_bounds(path, columns):
    """(lo, hi) per column from a public description or metadata JSON (the format of
    ``privevo metadata``/``synth-table``); every column must be numeric with LO..HI."""
    import json
    from pathlib import Path

    import numpy as np

    from ..tabular.metadata import TableMetadata, metadata_from_description

    try:
        text = Path(path).read_text()
    except (OSError, UnicodeDecodeError) as err:
        raise ValueError(f"--metadata {path}: cannot read it ({type(err).__name__})") from None
    try:
        if text.lstrip().startswith("{"):
            data = json.loads(text)
            _check_json_bounds(data, path)
            meta = TableMetadata.from_dict(data)
            specs = [meta[c] for c in _described(meta.names, columns, path)]
        else:
            specs = list(metadata_from_description(text, list(columns)).columns)
    except (ValueError, KeyError, TypeError) as err:
        raise ValueError(f"--metadata {path}: {err}") from None
    odd = [spec.name for spec in specs if not spec.is_numeric]
    if odd:
        raise ValueError(
            f"--metadata {path}: column(s) {odd} are not numeric; k-means needs 'numeric LO..HI' "
            "for every column (or leave them out with --columns)"
        )
    lo = np.array([float(spec.lower) for spec in specs])
    hi = np.array([float(spec.upper) for spec in specs])
    bad = [
        spec.name for spec, a, b in zip(specs, lo, hi) if not (np.isfinite([a, b]).all() and b > a)
    ]
    if bad:
        raise ValueError(f"--metadata {path}: column(s) {bad} need finite LO < HI")
    return lo, hi


def _described(names, columns, path) -> list:
    """The data's columns, each described in the metadata JSON."""
    missing = [c for c in columns if c not in names]
    if missing:
        raise ValueError(f"it does not describe column(s) {missing}; add them")
    return list(columns)


def _check_json_bounds(data, path) -> None:
    """Numbers for every numeric column's lower/upper, named by column when not."""
    for entry in data.get("columns", []) if isinstance(data, dict) else []:
        if not isinstance(entry, dict) or entry.get("kind") != "numeric":
            continue
        for key in ("lower", "upper"):
            value = entry.get(key)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ValueError(
                    f"column {entry.get('name')!r}: {key} must be a number, got {value!r}"
                )


def _check_shares(args, model, d: int) -> None:
    """--recover-share leaves the PE rounds a share of the budget: refused in the flag's terms."""
    from ..kmeans.plan import RECOVER_SHARE_MIN

    if args.recover_share is None:
        return
    if 0 < args.recover_share < RECOVER_SHARE_MIN:
        raise ValueError(
            f"--recover-share {args.recover_share!r} is too small to calibrate the recover "
            f"step's noise; use 0 (no recover step) or at least {RECOVER_SHARE_MIN:g}"
        )
    hdpe = args.method == "hdpe-means" or (args.method == "auto" and d > 32)
    projection = model.projection_share if hdpe and args.projection == "pca" else 0.0
    count = model.count_share if args.adjacency != "replace" else 0.0
    limit = 1.0 - projection - count
    if args.recover_share >= limit:
        parts = " and ".join(
            f"{name} {share:g}"
            for name, share in (("the noisy count's", count), ("the projection's", projection))
            if share
        )
        raise ValueError(
            f"--recover-share {args.recover_share!r} leaves the PE rounds no budget: "
            + (f"with {parts} it must be below {limit:g}" if parts else "it must be below 1")
            + "; choose a smaller --recover-share"
        )


def _kmeans_model(args):
    """The estimator from the flags (its centre and bounds set once d is known); δ's default,
    T, the recover share's range and every other rule are DPKMeans' own."""
    from ..kmeans import DPKMeans

    return DPKMeans(
        n_clusters=args.k,
        epsilon=args.epsilon,
        delta=args.delta,  # the δ rule's default: DPKMeans' own (accounting.run_default_delta)
        radius=args.radius,
        method=args.method,
        recover_share=args.recover_share,
        projection=args.projection,
        iterations=args.iterations,
        units=args.units,
        **run_keywords(args),
    )
