"""Checkpoint and resume: no release is made twice, resumed = uninterrupted, a checkpoint binds
to its run and data and keeps the digest and seed inside."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from privevo import PrivateEvolution
from privevo.checkpoint import load_checkpoint, rng_from_state, rng_state
from privevo.demo import MIXTURE_START, mixture_2d
from privevo.selection import GAPE, Rank, Subsample
from privevo.variation import (
    GaussianVariation,
    MultiScaleVariation,
)


@pytest.mark.parametrize("now", [None, 8])
def test_a_seed_mismatch_never_prints_the_seed(tmp_path, data, now):
    """Replays the attack: resuming with another seed printed 'random_state is 424242 there'."""
    path = tmp_path / "run.ckpt"
    with pytest.raises(Stop):
        make_pe(checkpoint=path, random_state=424242, callbacks=[stop_after(1)]).fit(data)
    with pytest.raises(ValueError, match=r"another run \(random_state\)") as refused:
        make_pe(checkpoint=path, random_state=now).fit(data)
    assert "424242" not in str(refused.value) and "NoneType" not in str(refused.value)


def rounds_of(path):
    """The round records of a checkpoint file."""
    return [r for r in load_checkpoint(path)[1] if r.key.startswith("round/")]


T = 12


def make_pe(selector=None, **kw):
    params = dict(n_synthetic=3, iterations=T, epsilon=2.0, delta=1e-5, random_state=7)
    params.update(kw)
    return PrivateEvolution(
        MIXTURE_START, GaussianVariation(0.1, 2), selector or Subsample(), **params
    )


@pytest.fixture(scope="module")
def data():
    return mixture_2d(rng=np.random.default_rng(0))[0]


@pytest.fixture(scope="module")
def reference(data):
    return make_pe().fit(data)


class Stop(Exception):
    pass


def stop_after(round_index: int):
    def callback(record):
        if record.iteration == round_index:
            raise Stop

    return callback


def test_rng_state_round_trip():
    rng = np.random.default_rng(5)
    rng.normal(size=3)
    copy = rng_from_state(rng_state(rng))
    assert np.array_equal(copy.normal(size=4), rng.normal(size=4))


def test_checkpoint_holds_the_ledger_of_releases(tmp_path, data, reference):
    path = tmp_path / "run.ckpt"
    with pytest.raises(Stop):
        make_pe(checkpoint=path, callbacks=[stop_after(4)]).fit(data)
    header, _ = load_checkpoint(path)
    saved = rounds_of(path)
    assert [e.meta["iteration"] for e in saved] == [0, 1, 2, 3, 4]
    for entry, record in zip(saved, reference.history_):
        assert entry.meta["sigma"] == record.sigma == reference.sigma_
        np.testing.assert_array_equal(entry.arrays["counts"], record.noisy_counts)
        np.testing.assert_array_equal(entry.arrays["points"], record.selected_points)
    assert header["fingerprint"]["d"] == 2 and "n" not in header["fingerprint"]
    assert list(tmp_path.iterdir()) == [path]  # no temporaries left


def test_resume_equals_uninterrupted_and_counts_each_release_once(tmp_path, data, reference):
    path = tmp_path / "run.ckpt"
    with pytest.raises(Stop):
        make_pe(checkpoint=path, callbacks=[stop_after(6)]).fit(data)
    rounds_seen = []
    resumed = make_pe(checkpoint=path, callbacks=[lambda r: rounds_seen.append(r.iteration)]).fit(
        data
    )
    assert resumed.resumed_from_ == 7
    assert rounds_seen == list(range(7, T))  # only the missing rounds were released
    np.testing.assert_array_equal(resumed.synthetic_, reference.synthetic_)
    for a, b in zip(resumed.history_, reference.history_):
        np.testing.assert_array_equal(a.noisy_counts, b.noisy_counts)
    report = resumed.privacy_report_
    assert report["releases"] == [
        {"name": "nn_histogram", "sigma": reference.sigma_, "count": T, "sensitivity": 1.0}
    ]
    assert report["epsilon"] == reference.privacy_report_["epsilon"]
    assert report["epsilon"] == pytest.approx(2.0, rel=1e-9)
    # a finished checkpoint: fitting again releases nothing and gives the same output
    again = make_pe(
        checkpoint=path, callbacks=[lambda r: rounds_seen.append(("again", r.iteration))]
    ).fit(data)
    assert again.resumed_from_ == T and not any(isinstance(r, tuple) for r in rounds_seen)
    np.testing.assert_array_equal(again.synthetic_, reference.synthetic_)


@pytest.mark.parametrize(
    "change, key",
    [
        (dict(iterations=T + 1), "iterations"),
        (dict(epsilon=3.0), "epsilon"),
        (dict(random_state=8), "random_state"),
        (dict(selector=Rank()), "selector"),
        (dict(adjacency="replace"), "adjacency"),
    ],
)
def test_resume_refuses_another_run(tmp_path, data, change, key):
    path = tmp_path / "run.ckpt"
    with pytest.raises(Stop):
        make_pe(checkpoint=path, callbacks=[stop_after(2)]).fit(data)
    before = path.read_bytes()
    with pytest.raises(ValueError, match=rf"belongs to another run \({key}[ .)]"):
        make_pe(checkpoint=path, **change).fit(data)
    with pytest.raises(ValueError, match=r"belongs to another run \(d is 2 there, 3 now\)"):
        make_pe(checkpoint=path).fit(np.hstack([data, data[:, :1]]))
    with pytest.raises(ValueError, match="made on other data"):
        make_pe(checkpoint=path).fit(data[1:])
    assert path.read_bytes() == before  # a refused run leaves the checkpoint alone


def test_corrupt_checkpoint_is_refused(tmp_path, data):
    path = tmp_path / "run.ckpt"
    path.write_bytes(b"garbage")
    with pytest.raises(ValueError, match="not a readable privevo checkpoint"):
        make_pe(checkpoint=path).fit(data)


def test_stale_temporaries_are_removed(tmp_path, data, reference):
    path = tmp_path / "run.ckpt"
    (tmp_path / ".run.ckpt.abc123.tmp").write_bytes(b"half-written")
    fitted = make_pe(checkpoint=path).fit(data)
    np.testing.assert_array_equal(fitted.synthetic_, reference.synthetic_)
    assert list(tmp_path.iterdir()) == [path]


CHILD = textwrap.dedent(
    """
    import sys, time
    import numpy as np
    from privevo import PrivateEvolution
    from privevo.demo import MIXTURE_START, mixture_2d
    from privevo.selection import Subsample
    from privevo.variation import GaussianVariation

    class SlowSubsample(Subsample):
        # sleeps *after* the round's noisy histogram was drawn, before the checkpoint
        # is written: a kill here interrupts a round between release and save
        def select(self, candidates, noisy_counts, context):
            time.sleep(float(sys.argv[2]))
            return super().select(candidates, noisy_counts, context)

        def __repr__(self):
            return "Subsample(replace=True)"

    X = mixture_2d(rng=np.random.default_rng(0))[0]
    pe = PrivateEvolution(MIXTURE_START, GaussianVariation(0.1, 2), SlowSubsample(), n_synthetic=3,
                          iterations=%d, epsilon=2.0, delta=1e-5, random_state=7,
                          checkpoint=sys.argv[1])
    pe.fit(X)
    np.save(sys.argv[1] + ".out.npy", pe.synthetic_)
    print(repr(pe.privacy_report_["epsilon"]), pe.resumed_from_, len(pe.history_))
    """
    % T
)


@pytest.mark.slow  # a real process killed mid-run, then resumed
def test_sigkill_mid_run_then_resume_matches_uninterrupted(tmp_path, reference):
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    path = tmp_path / "run.ckpt"
    child = subprocess.Popen(
        [sys.executable, str(script), str(path), "0.15"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 120
    completed = 0
    while completed < 4 and time.monotonic() < deadline and child.poll() is None:
        time.sleep(0.05)
        if path.exists() and path.stat().st_size:
            completed = len(rounds_of(path))
    assert child.poll() is None, "the child finished before it could be killed"
    time.sleep(0.05)  # most likely inside a round: released, not yet saved
    os.kill(child.pid, signal.SIGKILL)
    child.wait(timeout=30)
    assert child.returncode == -signal.SIGKILL
    killed_at = len(rounds_of(path))
    assert 4 <= killed_at < T
    assert not (tmp_path / "run.ckpt.out.npy").exists()

    done = subprocess.run(
        [sys.executable, str(script), str(path), "0"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    epsilon, resumed_from, n_history = done.stdout.split()
    assert int(resumed_from) == killed_at and int(n_history) == T
    np.testing.assert_array_equal(np.load(tmp_path / "run.ckpt.out.npy"), reference.synthetic_)
    assert float(epsilon) == reference.privacy_report_["epsilon"]
    final = rounds_of(path)
    assert [e.meta["iteration"] for e in final] == list(range(T))
    for entry, record in zip(final, reference.history_):
        np.testing.assert_array_equal(entry.arrays["counts"], record.noisy_counts)


def test_digest_and_seed_stay_inside_the_checkpoint(tmp_path, data):
    path = tmp_path / "run.ckpt"
    model = make_pe(checkpoint=path, iterations=4, random_state=918273645).fit(data)
    header, _ = load_checkpoint(path)
    report = json.dumps(model.privacy_report_)
    assert header["digest"] not in report and "918273645" not in report
    assert oct(path.stat().st_mode)[-3:] == "600"


def test_a_second_run_on_an_open_checkpoint_is_refused(tmp_path, data):
    from privevo.checkpoint import Checkpoint
    from privevo.private import data_digest

    path = tmp_path / "run.ckpt"
    model = make_pe(checkpoint=path).check_params()
    with Checkpoint.open(path, fingerprint=model.fingerprint(2), digest=data_digest(data)):
        with pytest.raises(ValueError, match="in use by another run"):
            make_pe(checkpoint=path).fit(data)


def test_a_torn_last_record_is_dropped(tmp_path, data):
    path = tmp_path / "run.ckpt"
    reference = make_pe(iterations=4).fit(data)
    make_pe(checkpoint=path, iterations=4).fit(data)
    whole = path.read_bytes()
    path.write_bytes(whole[:-100])  # a crash in the middle of writing round 3
    resumed = make_pe(checkpoint=path, iterations=4).fit(data)
    assert resumed.resumed_from_ == 3
    np.testing.assert_array_equal(resumed.synthetic_, reference.synthetic_)
    assert path.read_bytes() == whole


@pytest.mark.skipif(not hasattr(signal, "pthread_sigmask"), reason="POSIX signal masks")
def test_a_signal_during_a_write_waits_until_the_frame_is_whole(tmp_path, data, monkeypatch):
    """SIGTERM arriving while the header is being written (a handler that raises, as the CLI's
    does) must not tear it: the rerun then resumes instead of refusing the file."""
    from privevo import checkpoint

    class Stopped(Exception):
        pass

    def stop(signum, frame):
        raise Stopped

    class SignalAfterFirstWrite:  # the file handle; SIGTERM arrives after the magic's write
        def __init__(self, handle):
            self.handle, self.writes = handle, 0

        def write(self, data):
            written = self.handle.write(data)
            self.writes += 1
            if self.writes == 1:
                os.kill(os.getpid(), signal.SIGTERM)
            return written

        def __getattr__(self, name):
            return getattr(self.handle, name)

    real_open = checkpoint._open_locked
    previous = signal.signal(signal.SIGTERM, stop)
    try:
        monkeypatch.setattr(
            checkpoint, "_open_locked", lambda path: SignalAfterFirstWrite(real_open(path))
        )
        path = tmp_path / "run.ckpt"
        with pytest.raises(Stopped):
            make_pe(checkpoint=path).fit(data)
    finally:
        signal.signal(signal.SIGTERM, previous)
    monkeypatch.undo()
    header, records = load_checkpoint(path)  # the header is whole
    assert header is not None and records == []
    resumed = make_pe(checkpoint=path).fit(data)
    assert resumed.resumed_from_ == 0


def test_resume_after_changing_gape_agg_radius_is_refused(tmp_path, data, small_pe):
    def make(gape):
        variation = MultiScaleVariation(2.0, max_level=4)
        run = dict(n_synthetic=3, iterations=2, random_state=1, checkpoint=tmp_path / "run.ckpt")
        return small_pe(random_api=MIXTURE_START, variation_api=variation, selector=gape, **run)

    make(GAPE(R=2.0)).fit(data)
    with pytest.raises(ValueError, match="belongs to another run"):
        make(GAPE(R=2.0, agg_radius=0.5)).fit(data)
