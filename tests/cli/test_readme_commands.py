"""Every command of the README's command-line block and every `--help` example runs as written."""

from __future__ import annotations

import re
import shlex

import numpy as np
import pytest

from helpers import REPO_ROOT
from privevo.cli import _parser, main

# commands whose defaults take minutes (audit: 10^5 releases and 10^3 PE runs per setting) or load
# language models (text PE: tests/text/test_text_pe_runs.py runs them): here checked by the
# parser only
PARSE_ONLY = {"audit", "synth-text", "intrinsic-dim"}


def readme_commands() -> list[str]:
    text = (REPO_ROOT / "README.md").read_text()
    block = re.search(r"## Command line\s+```bash\n(.*?)```", text, re.S).group(1)
    return [line.split("  #")[0].strip() for line in block.splitlines() if line.strip()]


def help_examples() -> list[str]:
    parser = _parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    lines = []
    for name in ("kmeans", "synth", "account", "demo", "audit"):
        description = sub.choices[name].description
        examples = description.split("examples:\n")[1].splitlines()
        lines += [ln.split("  #")[0].strip() for ln in examples]
    return [ln for ln in lines if ln.startswith("privevo ")]


@pytest.fixture()
def workdir(tmp_path, monkeypatch):
    """The files the examples name, in the current directory."""
    from sklearn.datasets import load_digits

    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(c, 0.3, (100, 3)) for c in (-2.0, 0.0, 2.0)])
    np.savetxt(tmp_path / "data.csv", X, delimiter=",", header="x,y,z", comments="")
    np.save(tmp_path / "data.npy", X)
    np.save(tmp_path / "digits.npy", load_digits().data[:400])
    patients = np.repeat(np.arange(100), 3)[:, None]  # three visits per patient
    np.savetxt(
        tmp_path / "visits.csv",
        np.hstack([X, patients]),
        delimiter=",",
        header="x,y,z,patient",
        comments="",
    )
    (tmp_path / "reviews.csv").write_text("review\ngood food\nslow service\n")
    loans = np.abs(X) * [0.5, 0.6, 6.0]  # mixed scales inside the described intervals
    np.savetxt(tmp_path / "loans.csv", loans, delimiter=",", header="ratio,ltv,rate", comments="")
    (tmp_path / "loans.txt").write_text(
        "ratio: numeric 0..1.5\nltv: numeric 0..2\nrate: numeric 0..20\n"
    )
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = pa.table({c: X[:, j] for j, c in enumerate("xyz")})
        pq.write_table(table, tmp_path / "data.parquet")
        (tmp_path / "parts").mkdir()
        for i in range(3):
            part = X[100 * i : 100 * (i + 1)]
            pq.write_table(
                pa.table({c: part[:, j] for j, c in enumerate("xyz")}),
                tmp_path / "parts" / f"p{i}.parquet",
            )
    except ImportError:
        pass
    monkeypatch.chdir(tmp_path)
    return tmp_path


def check(command: str, capsys, monkeypatch) -> None:
    argv = shlex.split(command)[1:]
    if argv[0] in PARSE_ONLY:
        _parser().parse_args(argv)
        return
    if argv[0] == "demo":  # its computation is tested in test_help_and_demo.py; options here
        import privevo.demo

        table = {"title": "t", "rows": [{"method": "m", "loss": 1.0}], "note": "n"}
        monkeypatch.setattr(
            privevo.demo, "run_demo", lambda **kw: {"tables": [table], "plots": [], "seconds": 0.0}
        )
    if "parquet" in command or "parts/" in command:
        pytest.importorskip("pyarrow")
    if "--backend dask" in command:
        pytest.importorskip("distributed")
    code = main(argv + (["-q"] if argv[0] in ("kmeans", "synth") else []))
    out, err = capsys.readouterr()
    assert code == 0, f"{command}: {err}"
    assert "error" not in err


@pytest.mark.parametrize("command", readme_commands())
def test_readme_command_runs(command, workdir, capsys, monkeypatch):
    if "--backend dask" in command:
        pytest.skip("run by test_readme_dask_command_runs (slow)")
    check(command, capsys, monkeypatch)


@pytest.mark.slow
def test_readme_dask_command_runs(workdir, capsys, monkeypatch):
    command = next(c for c in readme_commands() if "--backend dask" in c)
    check(command, capsys, monkeypatch)


@pytest.mark.parametrize("command", help_examples())
def test_help_example_runs(command, workdir, capsys, monkeypatch):
    check(command, capsys, monkeypatch)


def test_every_command_is_covered():
    assert len(readme_commands()) >= 7 and len(help_examples()) >= 10
    for command in readme_commands() + help_examples():
        assert command.startswith("privevo ")
