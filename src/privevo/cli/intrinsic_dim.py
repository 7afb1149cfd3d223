"""``privevo intrinsic-dim``: the intrinsic dimension of an LLM's variations (GAPE appendix
check). Its input must be public text: the texts are sent to the language model and the result
is not differentially private."""

from __future__ import annotations

import json
import sys

from . import text as llm
from .options import check_memory, command

__all__ = ["add_parser", "is_local_endpoint", "check_public_endpoint"]


def add_parser(sub) -> None:
    p = command(
        sub,
        "intrinsic-dim",
        "intrinsic dimension of an LLM's variations (GAPE appendix check)",
        "Rewrite each of --n-texts texts --variations times at each temperature, embed, centre per "
        "text,\n"
        "and count the singular values explaining --variance of the variance. DATA MUST BE PUBLIC "
        "TEXT:\n"
        "the texts are sent to the language model and the result is not differentially private. A\n"
        "--api-base that is not on this machine is refused unless --public-input confirms it.",
        "  privevo intrinsic-dim reviews.csv --column review --n-texts 8 --variations 16\n"
        "  privevo intrinsic-dim texts.txt --temperatures 0.6 1.0 1.4 --json\n"
        "  privevo intrinsic-dim public.txt --public-input --api-base https://host/v1 "
        "--api-model m",
    )
    llm.add_text_io(p)
    p.add_argument(
        "--n-texts", type=int, default=8, help="how many texts (the first ones) to vary (default 8)"
    )
    p.add_argument(
        "--variations", type=int, default=16, help="rewrites per text and temperature (default 16)"
    )
    p.add_argument("--temperatures", type=float, nargs="+", default=[0.6, 0.8, 1.0, 1.2, 1.4])
    p.add_argument(
        "--variance", type=float, default=0.8, help="share of variance to explain (default 0.8)"
    )
    p.add_argument(
        "--public-input",
        action="store_true",
        help="confirm that DATA is public text (required with a non-local --api-base)",
    )
    llm.add_llm_options(p)
    p.set_defaults(func=_intrinsic_dim)


LOCAL_HOSTS = ("localhost", "::1")


def is_local_endpoint(url: str) -> bool:
    """Whether an API base URL points at this machine (localhost, 127.0.0.0/8, ::1)."""
    import ipaddress
    from urllib.parse import urlsplit

    host = (urlsplit(url if "://" in url else "http://" + url).hostname or "").lower()
    if host in LOCAL_HOSTS:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_public_endpoint(api_base: str | None, public_input: bool) -> None:
    """Refuse to send intrinsic-dim's input to a server elsewhere unless it is declared public."""
    if api_base is not None and not public_input and not is_local_endpoint(api_base):
        raise ValueError(
            f"--api-base {api_base} is not on this machine and intrinsic-dim sends it every "
            "input text; pass --public-input if DATA is public text"
        )


def _check_args(args) -> None:
    """Every flag's rule, the memory of the variations included, before any read or load."""
    from .._validation import check_positive_int

    check_positive_int(args.n_texts, "--n-texts")
    check_positive_int(args.variations, "--variations", minimum=2)
    if not 0 < args.variance <= 1:
        raise ValueError(f"--variance must be in (0, 1], got {args.variance}")
    for temperature in args.temperatures:
        llm.check_temperature(temperature, "--temperatures")
    llm.check_llm_args(args)
    check_public_endpoint(args.api_base, args.public_input)
    check_variations_memory(args)


def check_variations_memory(args, dim: int = 384) -> None:
    """Refuse --variations whose texts would not fit in memory even for one input text: the
    embedder caches every variation, so one text takes variations × temperatures texts of
    8 dim + 4 max_tokens + 100 bytes (dim: the default embedder's, before it loads)."""
    texts = args.variations * len(args.temperatures)
    check_memory(
        "--variations",
        args.variations,
        float(texts) * (8 * dim + 4 * args.max_tokens + 100),
        f"{texts:.3g} variations of each input text over {len(args.temperatures)} "
        f"--temperatures, each up to {args.max_tokens} tokens with a {dim}-d embedding",
    )


def _intrinsic_dim(args) -> int:
    from ..private import read_texts
    from ..text.intrinsic import variation_intrinsic_dimension

    _check_args(args)
    if not args.quiet:
        print(
            "privevo intrinsic-dim: its input must be PUBLIC text: the texts are sent to the "
            "language "
            "model and the result is not differentially private",
            file=sys.stderr,
        )
    texts = read_texts(args.data, args.column)[: args.n_texts]
    generator, embedder = llm.load_models(args)
    rows = variation_intrinsic_dimension(
        texts,
        generator,
        embedder,
        temperatures=args.temperatures,
        n_variations=args.variations,
        variance=args.variance,
        mask_fraction=args.mask_fraction,
        kind=args.kind,
        max_new_tokens=args.max_tokens,
        random_state=args.seed,
    )
    if args.json:
        print(
            json.dumps({"variance": args.variance, "n_texts": len(texts), "rows": rows}, indent=2)
        )
        return 0
    print(f"{'temperature':>11} {'intrinsic dim':>13} {'of ambient':>10} {'max possible':>12}")
    for r in rows:
        print(
            f"{r['temperature']:>11.2f} {r['intrinsic_dim']:>13d} {r['ambient_dim']:>10d} "
            f"{r['max_rank']:>12d}"
        )
    return 0
