"""The atomic writers of public outputs (privevo.io): all or nothing, permissions, the output
guard's path checks, signals held while files move into place."""

from __future__ import annotations

import os

import numpy as np
import pytest

from privevo import io
from privevo.private import read_points


def test_check_output_path(tmp_path):
    assert io.check_output_path(tmp_path / "o.csv") == tmp_path / "o.csv"
    (tmp_path / "file").write_text("x")
    cases = {
        tmp_path: "is a directory",
        tmp_path / "nowhere" / "o.csv": "does not exist",
        tmp_path / "file" / "o.csv": "is not a directory",
        tmp_path / "o.xlsx": "unsupported file type",
    }
    for path, message in cases.items():
        with pytest.raises(ValueError) as err:
            io.check_output_path(path)
        assert message in str(err.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]  # the probe left nothing


def test_report_path_for():
    assert str(io.report_path_for("out/centers.csv")) == os.path.join("out", "centers.privacy.json")


def test_atomic_write_leaves_nothing_on_error(tmp_path):
    target = tmp_path / "o.json"
    target.write_text("old")
    with pytest.raises(RuntimeError):
        with io.atomic_write(target) as tmp:
            tmp.write_text("half")
            raise RuntimeError("crash")
    assert target.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["o.json"]


def test_write_outputs_is_all_or_nothing(tmp_path):
    def fail(tmp):
        raise ValueError("cannot serialise")

    with pytest.raises(ValueError):
        io.write_outputs(
            {
                tmp_path / "a.csv": lambda t: io.write_points(t, np.ones((2, 2)), fmt_path="a.csv"),
                tmp_path / "b.json": fail,
            }
        )
    assert list(tmp_path.iterdir()) == []
    io.write_outputs(
        {
            tmp_path / "a.csv": lambda t: io.write_points(t, np.ones((2, 2)), fmt_path="a.csv"),
            tmp_path / "b.json": lambda t: io.write_json(t, {"x": 1}),
        }
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.csv", "b.json"]
    np.testing.assert_array_equal(read_points(tmp_path / "a.csv"), np.ones((2, 2)))


def test_outputs_get_normal_permissions_checkpoints_private(tmp_path):
    umask = os.umask(0o022)
    os.umask(umask)
    with io.atomic_write(tmp_path / "o.json") as tmp:
        io.write_json(tmp, {})
    with io.atomic_write(tmp_path / "c.ckpt", private=True) as tmp:
        tmp.write_bytes(b"x")
    io.write_outputs({tmp_path / "a.json": lambda t: io.write_json(t, [])})
    assert (tmp_path / "o.json").stat().st_mode & 0o777 == 0o666 & ~umask
    assert (tmp_path / "a.json").stat().st_mode & 0o777 == 0o666 & ~umask
    assert (tmp_path / "c.ckpt").stat().st_mode & 0o777 == 0o600


def test_check_distinct_paths(tmp_path):
    data = tmp_path / "d.csv"
    data.write_text("1\n")
    (tmp_path / "parts").mkdir()
    os.symlink(data, tmp_path / "link.csv")
    os.link(data, tmp_path / "hard.csv")
    io.check_distinct_paths(data, {"-o": tmp_path / "o.csv", "--checkpoint": tmp_path / "c"})
    cases = [
        (data, {"-o": tmp_path / "d.csv"}, "-o " + str(tmp_path / "d.csv") + " is the input"),
        (data, {"-o": tmp_path / "sub" / ".." / "d.csv"}, "is the input data file"),
        (data, {"-o": tmp_path / "link.csv"}, "is the input data file"),
        (data, {"--checkpoint": tmp_path / "hard.csv"}, "is the input data file"),
        (tmp_path / "parts", {"-o": tmp_path / "parts" / "o.csv"}, "inside the input folder"),
        (data, {"-o": tmp_path / "x", "--checkpoint": tmp_path / "x"}, "-o and --checkpoint are"),
    ]
    for source, outputs, message in cases:
        with pytest.raises(ValueError) as err:
            io.check_distinct_paths(source, outputs)
        assert message in str(err.value)


def test_write_outputs_holds_signals_while_moving_files_into_place(tmp_path, monkeypatch):
    import signal

    moved = []
    real_replace = os.replace

    def replace(src, dst):
        if not moved:  # a SIGTERM-like signal arrives between the two moves
            os.kill(os.getpid(), signal.SIGINT)
        moved.append(dst)
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    inherited = signal.signal(signal.SIGINT, signal.default_int_handler)  # nohup ignores SIGINT
    with pytest.raises(KeyboardInterrupt):
        io.write_outputs(
            {
                tmp_path / "a.json": lambda t: io.write_json(t, 1),
                tmp_path / "b.json": lambda t: io.write_json(t, 2),
            }
        )
    signal.signal(signal.SIGINT, inherited)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json", "b.json"]  # both, not one
