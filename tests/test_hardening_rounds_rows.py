"""Issue 32, left open by the last pass: rows of a rounds list refused together but not alone.

``predict fedavg --rounds 1000,inf`` printed the own models' local risk as n/a on BOTH rows
(the double contour refused at T = 1000) where ``--rounds inf`` alone has it, and said the
refusal came from "the route with a spectrum" under Sigma = I.
"""

import dataclasses
import numpy as np
import pytest

import riskcalc
from riskcalc.cli import main
from riskcalc.cli.options.rounds import rows
from riskcalc.cli.tables.rounds import own_models

FED = dict(gamma=[2.0] * 4, r=1.0, sigma=0.5, signal=1.0, local_steps=2, step_size=0.1,
           global_step=0.05)
ARGS = ["predict", "fedavg", "--gamma", "2", "--r", "1", "--sigma", "0.5", "--clients", "4",
        "--local-steps", "2", "--local-step-size", "0.1", "--signal", "1", "--global-step",
        "0.05"]


def test_rows_refused_together_are_asked_alone(capsys):
    """T = 2000 and inf together: the double contour of the own models needs the degree 4000
    (refused); inf alone needs a few hundred nodes. The inf row's local risk is the one of
    ``--rounds inf`` to the printed digits, T = 2000's n/a with the refusal's own reason (the
    rounds, not a spectrum: there is none)."""
    assert main(ARGS + ["--rounds", "2000,inf"]) == 0
    out = capsys.readouterr().out
    alone = riskcalc.rounds_limit("fedavg", **FED, rounds=[np.inf]).local_risk[0, 0]
    row = {line.split()[0]: line.split()[1:] for line in out.splitlines()
           if line.split()[:1] in (["2000"], ["inf"])}
    assert row["2000"][4] == "n/a" and row["2000"][2] != "n/a"    # the server's risk kept
    assert float(row["inf"][4]) == pytest.approx(alone, rel=1e-7)
    assert "spectrum" not in out
    assert ("local risk n/a: the clients' own models: the double contour needs" in out
            and "the rounds up to T = 2000; ask for fewer rounds or clients" in out)


def test_own_models_fallback_marks_only_the_rows_refused_alone():
    """``own_models``: the list refused, each row asked alone, n/a (JSON null) only where
    refused alone;
    every row refused alone gives all n/a and the list's reason (nothing is asked again when
    a single row was refused)."""
    res = riskcalc.rounds_limit("fedavg", **FED, rounds=[5, 7, np.inf])

    def refused(*args):
        raise ValueError("refused together")

    broken = dataclasses.replace(res, _local=refused, _cache={})
    asked = []

    def again(T):
        asked.append(T)
        if T == 7:
            raise ValueError("refused alone")
        return riskcalc.rounds_limit("fedavg", **FED, rounds=[T])

    local, why = own_models(broken, again)
    assert why == "refused together" and asked == [5, 7, np.inf]
    assert np.isnan(local[:, 1]).all()
    np.testing.assert_allclose(local[:, [0, 2]], res.local_risk[:, [0, 2]], rtol=1e-12)
    json_rows = rows(broken, (local, why))          # --json: null where n/a
    assert [r["local_risk"] is None for r in json_rows] == [False, True, False]
    single = dataclasses.replace(res, rounds=res.rounds[:1], _local=refused, _cache={})
    local, why = own_models(single, pytest.fail)
    assert why == "refused together" and np.isnan(local).all()
    local, why = own_models(res)
    assert local is res.local_risk and why is None
