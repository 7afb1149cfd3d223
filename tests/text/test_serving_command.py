"""privevo.text.serving without starting a server: its command line and its missing-package
message (the real server runs in test_real_server.py, ``make test-server``)."""

from __future__ import annotations

import importlib.util

from privevo.text import serving


def test_the_server_batches_with_a_bounded_cache_and_logs_requests_only_when_asked():
    cmd = serving.serve_command("127.0.0.1", 8123)
    assert cmd[1:3] == ["serve", serving.SERVED_NAME] and "--continuous-batching" in cmd
    assert cmd[cmd.index("--cb-num-blocks") + 1] == str(serving.CACHE_BLOCKS)
    assert "--enable-log-requests" not in cmd
    logged = serving.serve_command(request_log=True, batching=False)
    assert "--enable-log-requests" in logged and "--continuous-batching" not in logged


def test_a_missing_server_package_is_one_line_naming_the_extra(monkeypatch, capsys):
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "uvicorn" else real(name, *a)
    )
    assert serving.main(["--prepare-only"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "privevo text server: the server needs uvicorn: pip install 'privevo[serve]'"
