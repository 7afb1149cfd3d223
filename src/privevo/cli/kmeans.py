"""``privevo kmeans``: DP k-means centres (PE-means / HDPE-means)."""

from __future__ import annotations

from .inputs import cluster, read_input
from .options import add_run_options, check_common, command, public_center, too_many
from .publishing import finish, heartbeat, plan_paths, plot_if_asked, publishable, run_keywords


def add_parser(sub) -> None:
    p = command(
        sub,
        "kmeans",
        "DP k-means centres (PE-means)",
        "Differentially private k-means by PE-means; writes the k centres and a JSON privacy "
        "report.\nThe default T = floor(4 sqrt(d)) PE rounds at every epsilon (hdpe-means: its "
        "projected d'),\ncapped at the largest --iterations allowed.",
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
    add_run_options(p)
    p.set_defaults(func=_kmeans)


def _kmeans(args) -> int:
    from .._validation import check_positive_int

    check_positive_int(args.k, "--k")
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
    model.set_params(center=public_center(args, d))
    with cluster(args), heartbeat(args):
        model.fit(X)
    report = publishable(model.privacy_report_, args, table)
    title = f"DP k-means, k={args.k}, ε={args.epsilon:g}"
    figure = plot_if_asked(
        args, "plot_centers", X, model.cluster_centers_, columns=table.columns, title=title
    )
    finish(
        args, paths, model.cluster_centers_, table.columns, report, figure, {"n_clusters": args.k}
    )
    return 0


def _kmeans_model(args):
    """The estimator from the flags (its centre set once d is known); δ's default, T, the
    recover share's range and every other rule are DPKMeans' own."""
    from ..kmeans import DPKMeans

    return DPKMeans(
        n_clusters=args.k,
        epsilon=args.epsilon,
        delta=args.delta,
        radius=args.radius,
        bounds=None if args.bounds is None else tuple(args.bounds),
        method=args.method,
        recover_share=args.recover_share,
        projection=args.projection,
        iterations=args.iterations,
        **run_keywords(args),
    )
