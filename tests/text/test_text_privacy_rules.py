"""Text PE's privacy rules, each test replaying the attack it prevents.

- a private text's embedding must be a function of that text alone (not of its batch);
- no output of ``synth-text`` (texts, report, --json, stderr) may carry the seed's value;
- ``--noise`` reaches every release;
- ``intrinsic-dim`` says its input must be public and refuses a remote server without
  ``--public-input``.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from helpers.text_doubles import HashEmbedder, TopicLM, needs_models
from privevo.cli.intrinsic_dim import is_local_endpoint
from privevo.cli.text import write_texts

TEXTS = [
    "ok",
    "great coffee, rich and smooth, i buy it every month and never regret it",
    "the dog loves these treats",
    "stale chips, half the bag was crumbs, not buying again, a waste of money and time",
    "lovely floral tea",
    "the chocolate melted in shipping and tasted waxy when it finally arrived at the door",
]


@pytest.fixture(scope="module")
def embedder():
    from privevo.cli.text import load_embedder

    return load_embedder()


@needs_models
def test_a_private_embedding_is_the_same_alone_and_inside_any_batch(embedder):
    alone = np.stack([embedder.embed_private([t])[0] for t in TEXTS])
    rng = np.random.default_rng(0)
    for _ in range(3):
        order = rng.permutation(len(TEXTS))
        batch = embedder.embed_private([TEXTS[i] for i in order])
        assert np.array_equal(batch, alone[order])  # bit for bit
    assert np.array_equal(
        embedder.embed([TEXTS[1]], cache=False)[0], alone[1]
    )  # the documented private path
    # the attack: sentence-transformers' batched encoding pads by length, so a text's
    # embedding moves with its batch-mates (the reason private texts go one at a time)
    batched = embedder._encode(list(TEXTS))
    assert not np.array_equal(batched, alone)


@needs_models
def test_public_embeddings_are_batch_independent_too_so_resumes_are_exact(embedder):
    embedder.clear_cache()
    first = embedder.embed(TEXTS[2:5])
    embedder.clear_cache()
    again = embedder.embed(TEXTS)[2:5]
    assert np.array_equal(first, again)


@pytest.mark.parametrize(
    "models", ["stand-ins", pytest.param("real", marks=[pytest.mark.slow, needs_models])]
)
def test_synth_text_never_writes_the_seed_and_honours_noise(tmp_path, capsys, monkeypatch, models):
    from privevo.cli import main
    from privevo.cli import text as cli_text

    if models == "stand-ins":  # else the command loads SmolLM2 and MiniLM
        monkeypatch.setattr(cli_text, "_models", lambda args: (TopicLM(), HashEmbedder()))

    seed = 918273645
    data = tmp_path / "reviews.csv"
    write_texts(data, TEXTS * 3, column="review")
    out = tmp_path / "syn.csv"
    flags = "--column review --m 2 --iterations 2 --epsilon 2 --max-tokens 6 --batch-size 16"
    args = ["synth-text", str(data), *flags.split(), "--seed", str(seed)]
    args += ["--noise", "discrete_gaussian_secure"]
    assert main([*args, "-o", str(out)]) == 0
    first = capsys.readouterr()
    assert main([*args, "--json"]) == 0
    second = capsys.readouterr()
    report = json.loads((tmp_path / "syn.privacy.json").read_text())
    published = [
        out.read_text(),
        (tmp_path / "syn.privacy.json").read_text(),
        first.out,
        first.err,
        second.out,
        second.err,
    ]
    assert not any(str(seed) in text for text in published)
    assert report["seeded"] is True and any("seed" in w for w in report["warnings"])
    assert report["noise"] == "discrete_gaussian_secure" and report["guarantee_holds"]
    assert json.loads(second.out)["privacy_report"]["noise"] == "discrete_gaussian_secure"


@pytest.mark.parametrize(
    "url, local",
    [
        ("http://127.0.0.1:8000/v1", True),
        ("http://localhost:8000/v1", True),
        ("http://[::1]:9/v1", True),
        ("127.0.0.5:8000", True),
        ("https://api.example.com/v1", False),
        ("http://10.0.0.2:8000/v1", False),
        ("http://localhost.example.com/v1", False),
    ],
)
def test_local_endpoints_are_recognised(url, local):
    assert is_local_endpoint(url) is local


def test_intrinsic_dim_refuses_a_remote_server_unless_the_input_is_declared_public(
    tmp_path, capsys
):
    from privevo.cli import main

    data = tmp_path / "t.txt"
    data.write_text("one text\nanother text\n")
    code = main(
        ["intrinsic-dim", str(data), "--api-base", "https://api.example.com/v1", "--api-model", "m"]
    )
    err = capsys.readouterr().err
    assert code == 2 and "--public-input" in err and len(err.strip().splitlines()) == 1
    assert "one text" not in err  # never the content of the input


def test_intrinsic_dim_says_its_input_must_be_public(tmp_path, capsys, monkeypatch):
    from privevo.cli import main
    from privevo.cli import text as text_cli

    def stop(args):
        raise ValueError("stopped before loading models")

    monkeypatch.setattr(text_cli, "_models", stop)
    data = tmp_path / "t.txt"
    data.write_text("one text\n")
    assert (
        main(
            [
                "intrinsic-dim",
                str(data),
                "--public-input",
                "--api-base",
                "https://h/v1",
                "--api-model",
                "m",
            ]
        )
        == 2
    )
    assert "must be PUBLIC text" in capsys.readouterr().err
    assert (
        main(["intrinsic-dim", str(data)]) == 2
    )  # local model: no flag needed, the notice still shows
    assert "must be PUBLIC text" in capsys.readouterr().err
