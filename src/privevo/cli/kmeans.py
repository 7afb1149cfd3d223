"""``privevo kmeans``: DP k-means centres (PE-means / HDPE-means)."""

from __future__ import annotations

from ._common import (
    _add_run_options,
    _center,
    _check_common,
    _cluster,
    _command,
    _delta,
    _finish,
    _heartbeat,
    _plan_paths,
    _progress,
    _publishable,
    _read,
    _too_many,
)


def add_parser(sub) -> None:
    p = _command(
        sub,
        "kmeans",
        "DP k-means centres (PE-means)",
        "Differentially private k-means by PE-means; writes the k centres and a JSON privacy "
        "report.\npe-means' default T grows with epsilon from 1 to 2 (T = floor(min(epsilon, 2) * "
        "floor(4 sqrt(d)))); a T above\nthe maximum (see --iterations) is refused with a line "
        "that says to pass --iterations.",
        "  privevo kmeans data.csv --k 8 --epsilon 1 --radius 10 -o centers.csv\n"
        "  privevo kmeans digits.npy --k 10 --epsilon 2 --bounds 0 16 -o centers.npy --plot\n"
        "  privevo kmeans data.parquet --columns x,y,z --k 4 --epsilon 0.5 --radius 1 --json",
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
        help="share of the budget (of mu^2) for the final noisy Lloyd step; 0 = the "
        "paper's PE-means (default 0.25 for pe-means, 0.55 for hdpe-means)",
    )
    p.add_argument(
        "--projection",
        choices=["pca", "random"],
        default="pca",
        help="hdpe-means' projection: private PCA (10%% of mu^2) or the paper's random "
        "one (default pca)",
    )
    _add_run_options(p)
    p.set_defaults(func=_kmeans)


def _kmeans(args) -> int:
    from .._validation import check_positive_int

    check_positive_int(args.k, "--k")
    if args.recover_share is not None and not 0 <= args.recover_share < 1:
        raise ValueError(
            f"--recover-share must be in [0, 1) (0: no recover step), got {args.recover_share}"
        )
    _check_common(args)
    paths = _plan_paths(args)
    table = _read(args)
    X = table.data
    n, d = X.shape
    if n < 2:  # refused without saying n: under add/remove it is private
        raise ValueError(f"{args.data}: k-means needs at least 2 rows")
    if args.k > n:
        raise ValueError(_too_many("--k", args.k, n, args.adjacency))
    _check_kmeans_rounds(args, d)
    model = _kmeans_model(args, n, d)
    with _cluster(args), _heartbeat(args):
        model.fit(X)
    report = _publishable(model.privacy_report_, args, table)
    figure = None
    if args.plot:
        from ..plots import plot_centers

        figure = plot_centers(
            X,
            model.cluster_centers_,
            columns=table.columns,
            title=f"DP k-means, k={args.k}, ε={args.epsilon:g}",
        )
    _finish(
        args, paths, model.cluster_centers_, table.columns, report, figure, {"n_clusters": args.k}
    )
    return 0


def _check_kmeans_rounds(args, d: int) -> None:
    """Refuse a default T (it grows with ε up to 2, and with d) above MAX_ROUNDS, saying what to
    pass."""
    from .._validation import MAX_ROUNDS

    if args.iterations is not None:
        return
    try:
        from ..kmeans import hdpe_iterations, hdpe_projection_dim, pe_means_iterations
    except ImportError:  # the estimator checks its own T
        return
    hdpe = args.method == "hdpe-means" or (args.method == "auto" and d > 32)
    if hdpe:
        T = hdpe_iterations(min(hdpe_projection_dim(d), d))
    else:
        T = pe_means_iterations(args.epsilon, d)
    if T > MAX_ROUNDS:
        raise ValueError(
            f"--epsilon {args.epsilon:g} gives T = {T} PE rounds by default (T grows "
            f"with epsilon), above the maximum {MAX_ROUNDS}; pass --iterations N "
            f"with N <= {MAX_ROUNDS}"
        )


def _kmeans_model(args, n: int, d: int):
    try:
        from ..kmeans import DPKMeans
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
    for flag, name, value, default in (
        ("--checkpoint", "checkpoint", args.checkpoint, None),
        ("--noise", "noise", args.noise, "gaussian"),
    ):
        if value == default:
            continue
        if name not in supported:
            raise ValueError(f"{flag} is not supported by this version of DPKMeans; drop {flag}")
        params[name] = value
    return model.set_params(**{k: v for k, v in params.items() if k in supported})
