"""Intrinsic dimension of an LLM's variations (GAPE paper, appendix check).

For each temperature, every seed text gets ``n_variations`` rewrites; their
embeddings are centred on their own seed's mean (the spread of the variation
distribution around one input, Cov[Z | y]) and pooled. The intrinsic
dimension is the number of singular values of the pooled, centred matrix that
explain ≥ ``variance`` of its total variance
(:func:`privevo.metrics.intrinsic_dimension`). It is at most
len(texts)·(n_variations − 1), reported beside it. The paper finds 10–25 of
768 dimensions for GPT-2 on PubMed, rising with temperature 0.6 → 1.4.
"""

from __future__ import annotations

from typing import Sequence

from .._validation import check_positive_int, check_random_state
from ..metrics import intrinsic_dimension
from .apis import LLMVariationAPI

__all__ = ["variation_intrinsic_dimension", "TEMPERATURES"]

TEMPERATURES = (0.6, 0.8, 1.0, 1.2, 1.4)


def variation_intrinsic_dimension(
    texts: Sequence[str],
    generator,
    embedder,
    *,
    temperatures=TEMPERATURES,
    n_variations: int = 16,
    variance: float = 0.8,
    mask_fraction: float = 0.5,
    kind: str = "text",
    max_new_tokens: int = 64,
    random_state=None,
) -> list[dict]:
    """Per temperature: ``{"temperature", "intrinsic_dim", "max_rank", "ambient_dim",
    "n_points"}``."""
    texts = list(texts)
    k = check_positive_int(n_variations, "n_variations", minimum=2)
    rng = check_random_state(random_state)
    rows = []
    for temperature in temperatures:
        api = LLMVariationAPI(
            generator,
            mask_fraction=mask_fraction,
            temperature=float(temperature),
            per_point=k,
            kind=kind,
            max_new_tokens=max_new_tokens,
        )
        Z = embedder.embed(api.vary_texts(texts, rng)).reshape(len(texts), k, -1)
        centred = (Z - Z.mean(axis=1, keepdims=True)).reshape(len(texts) * k, -1)
        rows.append(
            {
                "temperature": float(temperature),
                "intrinsic_dim": intrinsic_dimension(centred, variance),
                "max_rank": len(texts) * (k - 1),
                "ambient_dim": int(Z.shape[2]),
                "n_points": int(len(centred)),
            }
        )
    return rows
