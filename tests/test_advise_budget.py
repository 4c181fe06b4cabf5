"""The time budget of ``riskcalc advise`` (issue 30, item 1; ``--max-minutes``): refused before
solving when the estimate exceeds it (the rounds counted too), stopped in flight at the limit
when the estimate is wrong (linear and logistic), one error line naming what would fit."""

from riskcalc.cli import main
from tests.test_advise_speed import GAM, R, SIG


def test_advise_budget_refusal_and_progress(tmp_path, capsys):
    """--max-minutes: an estimate before solving, refused in one line naming what would fit;
    within the limit the command runs (the bar goes to stderr, hidden by --no-progress)."""
    import json
    path = tmp_path / "fed.json"
    path.write_text(json.dumps([{"gamma": float(g), "r": float(r), "sigma": float(s)}
                                for g, r, s in zip(GAM, R, SIG)] * 100))
    assert main(["advise", "--clients-file", str(path), "--max-minutes", "0.01"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: advise (400 clients): estimated")
    assert "--methods" in err[0] and "--max-minutes" in err[0]
    small = tmp_path / "small.json"
    small.write_text(json.dumps([{"gamma": float(g), "r": float(r), "sigma": float(s)}
                                 for g, r, s in zip(GAM, R, SIG)]))
    assert main(["advise", "--clients-file", str(small), "--methods", "fedavg,rtfa",
                 "--no-progress", "--json"]) == 0
    out = capsys.readouterr()
    assert out.err == "" and json.loads(out.out)["recommended"]["method"] in ("fedavg", "rtfa")


def test_advise_stops_in_flight_at_the_limit(tmp_path, capsys, monkeypatch):
    """--max-minutes also holds when the estimate is wrong: the run stops at the limit with
    one line naming the pipelines that finished (a stand-in advice that never ends after two
    pipelines and an estimate of 0.01 s per pipeline, so the test does not depend on the
    machine's speed)."""
    import json
    import time

    import riskcalc.advise as adv

    def endless(fed, methods=None, rounds=None, signal=None, progress=None):
        progress("fedavg")
        progress("ftfa")
        while True:
            time.sleep(0.01)

    monkeypatch.setattr(adv, "advise", endless)
    monkeypatch.setattr(adv.cost, "estimate_seconds",
                        lambda fed, methods, rounds=None: {m: 0.01 for m in methods})
    path = tmp_path / "fed.json"
    path.write_text(json.dumps([{"gamma": float(g), "r": float(r), "sigma": float(s)}
                                for g, r, s in zip(GAM, R, SIG)]))
    start = time.monotonic()
    assert main(["advise", "--clients-file", str(path), "--max-minutes", "0.005",
                 "--no-progress"]) == 2
    assert time.monotonic() - start < 5.0
    out = capsys.readouterr()
    err = out.err.strip().splitlines()
    assert out.out == "" and len(err) == 1
    assert err[0].startswith("error: stopped at the --max-minutes limit (0.3 s)")
    assert "--methods fedavg,ftfa finished in time" in err[0]


def test_advise_budget_counts_the_rounds(tmp_path, capsys):
    """--rounds is estimated too (FedAvg's curves grow like M^2): a federation whose pipelines
    fit but whose rounds do not is refused, naming the run without --rounds."""
    import json
    path = tmp_path / "fed.json"
    path.write_text(json.dumps([{"gamma": float(g), "r": float(r), "sigma": float(s)}
                                for g, r, s in zip(GAM, R, SIG)] * 50))
    assert main(["advise", "--clients-file", str(path), "--methods", "fedavg", "--rounds", "50",
                 "--signal", "1", "--max-minutes", "0.1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--rounds ~" in err[0]
    assert "--methods fedavg without --rounds would take" in err[0]


def test_logistic_advise_stops_in_flight_at_the_limit(tmp_path, capsys, monkeypatch):
    """--model logistic honours --max-minutes in flight as the linear advise does."""
    import json
    import time

    import riskcalc.advise.logistic as logistic

    def endless(fed, methods=None, progress=None):
        progress("fedavg")
        while True:
            time.sleep(0.01)

    monkeypatch.setattr(logistic, "advise_logistic", endless)
    monkeypatch.setattr(logistic, "estimate_seconds", lambda fed, methods: 0.01)
    path = tmp_path / "fed.json"
    path.write_text(json.dumps({"fedrisk_federation": 1, "signal": 1.5,
                                "clients": [{"gamma": 0.5, "r": 0.5}, {"gamma": 2.0, "r": 1.0}]}))
    code = main(["advise", "--model", "logistic", "--federation", str(path), "--global-lam",
                 "0.05", "--max-minutes", "0.005", "--no-progress"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1, err
    assert err[0].startswith("error: stopped at the --max-minutes limit (0.3 s)")
    assert "--methods fedavg finished in time" in err[0]
