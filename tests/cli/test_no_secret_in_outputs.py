"""No command publishes a secret: the seed's value is in no output, file or message, and no
summary carries the exact row count under add/remove adjacency."""

from __future__ import annotations

import json

import pytest

from helpers.cli import KMEANS, SMALL_AUDIT, SYNTH, fill, swap
from privevo.report import SEED_WARNING

SEED = 987654321  # a value no output may contain


def test_the_seed_value_is_in_no_output(files, tmp_path, cli):
    seen = []
    for argv in (
        swap(KMEANS, seed=SEED, plot=[], output=tmp_path / "c.csv"),
        swap(KMEANS, seed=SEED, json=[]),
        swap(SYNTH, seed=SEED, plot=[], output=tmp_path / "s.csv"),
        swap(SYNTH, seed=SEED, json=[]),
        [*SMALL_AUDIT, "--seed", SEED, "--json"],
    ):
        code, out, err = cli(fill(argv, files))
        assert code == 0, err
        seen.append(out + err)
    _assert_no_seed(seen, tmp_path)
    report = json.loads((tmp_path / "c.privacy.json").read_text())
    assert report["public_parameters"]["cli"]["seeded"] is True
    assert SEED_WARNING in report["warnings"]  # the one text, from the library's report


@pytest.mark.slow  # the demo's quick run fits every method at two epsilons
def test_the_seed_value_is_in_no_demo_output(tmp_path, cli, monkeypatch):
    import privevo.demo

    real = privevo.demo.run_demo
    monkeypatch.setattr(privevo.demo, "run_demo", lambda **kw: real(**kw, quick=True))
    code, out, err = cli(["demo", "--seed", SEED, "--json", "--out", tmp_path / "demo"])
    assert code == 0, err
    _assert_no_seed([out + err], tmp_path)


def _assert_no_seed(texts: list[str], folder) -> None:
    """The seed's value is in none of ``texts`` and in no file under ``folder``."""
    assert not any(str(SEED) in text for text in texts)
    for path in folder.rglob("*"):
        if path.is_file():
            assert str(SEED).encode() not in path.read_bytes(), path


def test_summaries_never_carry_the_exact_n_under_add_remove(files, cli):
    for argv in (swap(SYNTH, json=[]), swap(KMEANS, json=[])):
        code, out, _ = cli(fill(argv, files))
        assert code == 0
        result = json.loads(out)
        result.pop("privacy_report")
        result.pop("points")
        assert "400" not in json.dumps(result)
    for argv in (SYNTH, KMEANS):  # the stderr summary's delta is not derived from n
        code, _, err = cli(fill(argv, files))
        assert code == 0 and "delta=1e-06 " in err
        assert f"{400**-1.1:.3g}" not in err and f"{0.1 / 400:.3g}" not in err
