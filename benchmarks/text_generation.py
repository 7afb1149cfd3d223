"""Local SmolLM2 engines side by side: texts/s and tokens/s at 48 new tokens.

Every engine gets the same prompts: Aug-PE fill-in-the-blanks rewrites of
public-domain food-review prompts' outputs — one PE round's variation calls
(``LLMVariationAPI`` prompts, half the words blanked) — at temperature 1.0,
48 new tokens, on the same threads. Engines are measured in interleaved
repeats (A B C, A B C, ...) so that load from other processes on shared cores
hits them alike; the table gives each one's median, texts per CPU-second of
the process (less sensitive to that load) and the ratio to today's
``TransformersLM`` (batch 32). Tokens are counted by re-tokenising each
completion with the model's tokenizer (the same count for every engine).

    python benchmarks/text_generation.py                  # 128 prompts, 3 repeats, 2 threads
    python benchmarks/text_generation.py --quick          # 32 prompts, 1 repeat
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

OUT = Path(__file__).parent / "out"


def prompts(n: int, seed: int) -> list[str]:
    """n variation prompts of one PE round (public texts: the random API's food reviews)."""
    from privevo.text.apis import FILL_PROMPT, mask_words

    rng = np.random.default_rng(seed)
    seeds = [
        "This coffee is smooth and rich, with a hint of chocolate; I buy it every month.",
        "The chips arrived stale and half the bag was crumbs. Not buying again.",
        "My dog loves these treats and they always arrive fresh.",
        "A lovely floral tea with no bitterness, even when it steeps too long.",
        "Too sweet for me: the cereal is mostly sugar and gets soggy fast.",
        "Best hot sauce I have tried, spicy but full of flavour, great on eggs.",
        "The protein bars taste like chalk and the wrapper sticks to them. Avoid.",
        "Good value pasta that cooks evenly and holds the sauce well.",
    ]
    return [
        FILL_PROMPT.format(kind="food review", text=mask_words(seeds[i % len(seeds)], 0.5, rng))
        for i in range(n)
    ]


def one_engine(threads: int, **kw):
    """The CTranslate2 engine as it was before one engine per core: every prompt of a call on
    one engine with ``threads`` threads (``ctranslate2_one`` in ``--engines``)."""
    from privevo.text import CTranslate2LM
    from privevo.text.engines import ctranslate2_model

    class OneEngine(CTranslate2LM):
        def _shard_size(self, n_prompts: int) -> int:
            return max(1, n_prompts)

        def _engine(self, seed, warm_up, options, threads=1):
            return super()._engine(seed, warm_up, options, self.threads)

    return OneEngine(ctranslate2_model(model="smollm2-135m"), threads=threads, **kw)


def engines(names: list[str], threads: int):
    """(label, backend) pairs; engines that are not installed are reported and skipped."""
    import torch

    from privevo.text import smollm2

    torch.set_num_threads(threads)
    out = []
    for name in names:
        engine, _, batch = name.partition(":")
        kw = {"batch_size": int(batch)} if batch else {}
        if engine == "ctranslate2":
            kw["threads"] = threads
        if engine == "llama_cpp":
            kw = {"threads": threads}
        try:
            tic = time.perf_counter()
            if engine == "ctranslate2_one":
                lm = one_engine(threads, **kw)
            else:
                lm = smollm2(engine=engine, **kw)
            log(f"{name}: loaded in {time.perf_counter() - tic:.1f}s")
            out.append((name, lm))
        except ImportError as err:
            log(f"{name}: skipped ({err})")
    return out


def main(argv=None) -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument(
        "--engines",
        nargs="+",
        default=[
            "transformers:32",
            "transformers:64",
            "ctranslate2:32",
            "ctranslate2:64",
            "ctranslate2:128",
            "llama_cpp",
        ],
    )
    p.add_argument("--n", type=int, default=128, help="prompts per measurement")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--max-tokens", type=int, default=48)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--quick", action="store_true")
    args = p.parse_args(argv)
    if args.quick:
        args.n, args.repeats = 32, 1
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from transformers import AutoTokenizer

    from privevo.text.engines import ctranslate2_model

    tokenizer = AutoTokenizer.from_pretrained(str(ctranslate2_model(model="smollm2-135m")))
    batch = prompts(args.n, seed=0)
    backends = engines(args.engines, args.threads)
    runs: dict[str, list[dict]] = {name: [] for name, _ in backends}
    for rep in range(args.repeats):
        for name, lm in backends:
            tic, cpu = time.perf_counter(), time.process_time()
            texts = lm.generate(batch, temperature=1.0, max_new_tokens=args.max_tokens, seed=rep)
            seconds, cpu = time.perf_counter() - tic, time.process_time() - cpu
            tokens = sum(len(tokenizer.encode(t, add_special_tokens=False)) for t in texts)
            runs[name].append(
                {
                    "seconds": seconds,
                    "cpu_seconds": cpu,
                    "texts_per_cpu_s": len(texts) / cpu,
                    "texts_per_s": len(texts) / seconds,
                    "tokens_per_s": tokens / seconds,
                    "tokens_per_text": tokens / len(texts),
                }
            )
            log(
                f"repeat {rep} {name}: {len(texts) / seconds:.1f} texts/s, "
                f"{tokens / seconds:.0f} tokens/s, "
                f"{tokens / len(texts):.1f} tokens/text; e.g. {' '.join(texts[0].split())[:80]!r}"
            )
    rows = [
        {"engine": name, **{k: statistics.median(r[k] for r in rs) for k in rs[0]}}
        for name, rs in runs.items()
    ]
    base = next((r for r in rows if r["engine"].startswith("transformers")), rows[0])
    for r in rows:
        r["speedup"] = r["texts_per_s"] / base["texts_per_s"]
    OUT.mkdir(exist_ok=True)
    meta = {
        "n_prompts": args.n,
        "repeats": args.repeats,
        "max_new_tokens": args.max_tokens,
        "threads": args.threads,
        "cpu_count": os.cpu_count(),
        "load_avg": os.getloadavg(),
    }
    (OUT / "text_generation.json").write_text(
        json.dumps({"meta": meta, "rows": rows, "runs": runs}, indent=2)
    )
    print(
        f"\n{args.n} prompts, {args.max_tokens} new tokens, temperature 1.0, "
        f"{args.threads} threads, median of {args.repeats} interleaved repeats; "
        f"load average at the end {meta['load_avg'][0]:.1f}\n"
    )
    print(
        "| engine (batch) | texts/s | tokens/s | tokens/text | texts per CPU-second "
        "| × TransformersLM |"
    )
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['engine']} | {r['texts_per_s']:.1f} | {r['tokens_per_s']:.0f} | "
            f"{r['tokens_per_text']:.1f} | "
            f"{r['texts_per_cpu_s']:.2f} | {r['speedup']:.1f}× |"
        )


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
