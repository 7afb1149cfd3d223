"""``privevo synth``: DP synthetic points by Private Evolution."""

from __future__ import annotations

import sys

from ..selection import SELECTOR_NAMES
from .inputs import cluster, read_input
from .options import (
    add_run_options,
    check_common,
    check_memory_of,
    check_scale,
    command,
    public_center,
    run_delta,
)
from .publishing import finish, heartbeat, plan_paths, plot_if_asked, publishable, run_keywords


def add_parser(sub) -> None:
    p = command(
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
    p.add_argument(
        "--selector",
        choices=SELECTOR_NAMES,
        default="gape",
        help="selection step (default gape; gape_agg also thresholds neighbourhood sums)",
    )
    p.add_argument(
        "--fill",
        action="store_true",
        help="gape: top the selection up to exactly "
        "--m points with the next best candidates (the other selectors always give m)",
    )
    p.add_argument(
        "--R",
        type=float,
        dest="R",
        help="gape: public lower bound on the separation of clusters (default radius/4)",
    )
    p.add_argument(
        "--scale", type=float, help="rank/subsample: Gaussian variation scale (default radius/20)"
    )
    p.add_argument(
        "--variations", type=int, default=4, help="variations per selected point (default 4)"
    )
    p.add_argument(
        "--user-column",
        metavar="NAME",
        help="a numeric column of user ids (dropped from the features): each user's votes are "
        "scaled to norm 1, so the guarantee protects users with several rows, not rows",
    )
    p.add_argument(
        "--neighbors",
        type=int,
        default=1,
        metavar="K",
        help="each private row votes 1/sqrt(K) for each of its K nearest candidates (default 1)",
    )
    add_run_options(p)
    p.set_defaults(func=_synth, iterations_default=10)


def _synth(args) -> int:
    from .._validation import check_positive_int
    from ..private import naming_the_file

    check_positive_int(args.m, "--m")
    check_positive_int(args.variations, "--variations")
    check_common(args)
    check_scale(args.R, "--R")
    check_scale(args.scale, "--scale")
    check_positive_int(args.neighbors, "--neighbors")
    _check_synth_memory(args, len(args.center or ()) or 1)
    paths = plan_paths(args)
    table, groups = _split_users(args, read_input(args))
    X = table.data
    n, d = X.shape
    _check_synth_memory(args, d)  # d: the public schema's column count
    center, radius, leak = _synth_domain(args, X)
    X = _clipped(args, X, center, radius)
    pe = _synth_model(args, center, radius, n)
    with cluster(args), naming_the_file(args.data), heartbeat(args, pe.iterations) as beat:
        pe.callbacks = [*pe.callbacks, lambda record: beat.update(done=record.iteration + 1)]
        pe.fit(X, groups=groups)
    points = pe.synthetic_
    if args.bounds is not None:  # post-processing: keep the output inside the public box
        points = points.clip(args.bounds[0], args.bounds[1])
    report = _synth_report(args, pe, table, leak)
    title = f"PE ({args.selector}), m={args.m}, ε={args.epsilon:g}"
    figure = plot_if_asked(
        args, "plot_trajectories", pe.history_, X, columns=table.columns, title=title
    )
    delivered = len(points)
    if delivered < args.m and not args.quiet:
        print(
            f"privevo synth: note: the {args.selector} selector delivered {delivered} of the "
            f"{args.m} points asked for (it keeps only points that pass its noise threshold); "
            "pass --fill to get exactly --m",
            file=sys.stderr,
        )
    finish(
        args,
        paths,
        points,
        table.columns,
        report,
        figure,
        {"m_requested": args.m, "m_delivered": delivered, "selector": args.selector},
    )
    return 0


def _check_synth_memory(args, d: int) -> None:
    """The population and candidates of a round hold about 2 m (variations + 1) points; the
    message blames --m or --variations, whichever is the larger factor."""
    rows = 2.0 * args.m * (args.variations + 1)
    check_memory_of(
        {"--m": (args.m, args.m), "--variations": (args.variations, args.variations + 1)},
        8.0 * rows * max(d, 1),
        f"{rows:.3g} candidate points: 2 x --m x (--variations + 1)",
    )


def _split_users(args, table):
    """(table of the features, user ids or None): ``--user-column`` read and dropped."""
    import numpy as np

    from ..private import Table

    if args.user_column is None:
        return table, None
    if not isinstance(table.data, np.ndarray):
        raise ValueError(
            "--user-column needs the rows in memory; a streamed folder has none "
            "(drop --user-column, or add --plot to read the folder)"
        )
    if args.user_column not in table.columns:
        raise ValueError(
            f"--user-column {args.user_column} is not a column of {args.data}"
            + ("; add it to --columns" if args.columns else "")
        )
    j = table.columns.index(args.user_column)
    features = [c for i, c in enumerate(table.columns) if i != j]
    if not features:
        raise ValueError("--user-column leaves no feature column; DATA needs one more column")
    groups = table.data[:, j]
    return Table(np.delete(table.data, j, axis=1), features, table.path), groups


def _synth_domain(args, X):
    """(center, radius, leak): the public ball the population lives in.

    --radius (and --center) or --bounds are public; with neither, the data's
    own extent is used, a PrivacyLeakWarning is raised and the report says the
    guarantee does not hold.
    """
    from ..private import public_domain

    center = public_center(args, X.shape[1]) if args.bounds is None else None
    domain = public_domain(
        X,
        radius=args.radius,
        center=center,
        bounds=args.bounds,
        stacklevel=4,
        hint="--radius or --bounds",
    )
    return domain.center, domain.radius, domain.leaked


def _clipped(args, X, center, radius: float):
    """In-memory rows moved into the public domain (box or ball), as DPKMeans does: a public
    per-row map (each row still votes once) that keeps huge finite values finite."""
    import numpy as np

    from ..private import ClippedSource, clip_to_ball

    if not isinstance(X, np.ndarray):  # a streamed folder: clipped block by block as it is read
        bounds = None if args.bounds is None else tuple(args.bounds)
        return ClippedSource(X, center=center, radius=radius, bounds=bounds)
    if args.bounds is not None:
        return np.clip(X, args.bounds[0], args.bounds[1])
    return clip_to_ball(X, radius, center)


def _synth_model(args, center, radius: float, n: int):
    import inspect

    from ..evolution import PrivateEvolution
    from ..selection import make_selector
    from ..variation import GaussianVariation, LevyVariation, MultiScaleVariation, UniformBall

    gape = args.selector.startswith("gape")
    R = args.R if args.R is not None else radius / 4
    selector = make_selector(args.selector, R=R, fill=args.fill)
    if gape:
        variation = MultiScaleVariation(R, radius=radius, center=center)
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
        delta=run_delta(args, n, library_default=delta_param.default is None),
        **run_keywords(args),
        n_neighbors=args.neighbors,
        public_parameters={
            "radius": radius,
            "center": center,
            "bounds": args.bounds,
            "R": R if gape else None,
        },
    )


def _synth_report(args, pe, table, leak: bool) -> dict:
    report = publishable(pe.privacy_report_, args, table)
    if leak:
        report["warnings"] = [
            *report["warnings"],
            "radius taken from the private data (no --radius/--bounds): not DP",
        ]
        report["guarantee_holds"] = False
    return report
