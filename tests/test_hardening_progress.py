"""Issue 32: progress on stderr where a theory call may take more than a few seconds (the
limits under a spectrum with 1000 atoms or M = 10-30 clients ran 13-50 s and longer with nothing
shown; pass 6 measured ``predict rtfa --rounds 0,10,inf --clients 10`` with 1000 atoms past 70 s).
``riskcalc.cli.shared.guards.working``: a live line on a terminal (erased when the answer comes), a
line now and then in a log."""

import io
import time

import pytest

from riskcalc.cli import main
from riskcalc.cli.shared import guards


class _Stream(io.StringIO):
    def __init__(self, tty):
        super().__init__()
        self.tty = tty

    def isatty(self):
        return self.tty


@pytest.mark.parametrize("tty", [False, True])
def test_a_long_call_shows_progress_and_a_short_one_nothing(monkeypatch, tty):
    monkeypatch.setattr(guards, "PROGRESS_TTY", (0.05, 0.05))
    monkeypatch.setattr(guards, "PROGRESS_LOG", (0.05, 0.05))
    stream = _Stream(tty)
    monkeypatch.setattr("sys.stderr", stream)
    with guards.working("riskcalc predict x"):
        time.sleep(0.4)
    text = stream.getvalue()
    if tty:     # live updates, erased at the end: the terminal is left clean
        assert text.startswith("\rriskcalc predict x: computing, ")
        assert text.count("\r") >= 3 and text.endswith("\r") and text.rstrip("\r").endswith(" ")
    else:       # whole lines in a log
        lines = text.splitlines()
        assert len(lines) >= 2 and all(line.startswith("progress: riskcalc predict x: "
                                                       "computing, ") for line in lines)
    stream = _Stream(tty)
    monkeypatch.setattr("sys.stderr", stream)
    monkeypatch.setattr(guards, "PROGRESS_TTY", (5.0, 1.0))
    monkeypatch.setattr(guards, "PROGRESS_LOG", (5.0, 1.0))
    start = time.monotonic()
    with guards.working("quick"):
        pass
    assert stream.getvalue() == "" and time.monotonic() - start < 1.0   # no wait on leaving


def test_predict_runs_under_the_progress_line(monkeypatch, capsys):
    import riskcalc.cli.predict as predict

    monkeypatch.setattr(guards, "PROGRESS_LOG", (0.05, 10.0))
    monkeypatch.setattr(predict, "_run", lambda args: time.sleep(0.3) or 0)
    assert main(["predict", "ftfa", "--gamma", "2", "--r", "1", "--sigma", "0.5"]) == 0
    err = capsys.readouterr().err
    assert err.startswith("progress: riskcalc predict ftfa: computing, ") and err.count("\n") == 1


def test_estimate_runs_under_the_progress_line(monkeypatch, capsys, tmp_path):
    # fuzz27 F12: estimate read and estimated a 97 MB CSV for 37 s showing nothing.
    import numpy as np

    import riskcalc.estimate as est_mod

    rng = np.random.default_rng(0)
    data = tmp_path / "fed.npz"
    np.savez(data, X=rng.standard_normal((60, 3)), y=rng.standard_normal(60),
             client=np.repeat(np.arange(3), 20))
    slow = est_mod.estimate_file
    monkeypatch.setattr(guards, "PROGRESS_LOG", (0.05, 10.0))
    monkeypatch.setattr(est_mod, "estimate_file",
                        lambda *a, **k: time.sleep(0.3) or slow(*a, **k))
    assert main(["estimate", "--data", str(data)]) == 0
    err = capsys.readouterr().err
    assert err.startswith("progress: riskcalc estimate: computing, ") and err.count("\n") == 1
