"""RTFA's penalty at an optimum at infinity (``riskcalc.advise.tune.shown_lams``): reported as
inf (text), None with the note "lam -> inf (FedAvg-like ...)" (JSON), not as the point where
the search stopped on the flat asymptote (lam = 1.043e+43 was printed). Checked against
``clients_limit`` directly: RTFA at a large finite penalty and FedAvg with the same weights."""

import json

import numpy as np

from riskcalc.advise import Federation, advise, tune
from riskcalc.cli import main
from riskcalc.linear.finite_clients import clients_limit

# Clients 0 and 1 barely differ from the centre (r small, sigma large): under the sample and
# uniform weights no finite penalty beats the global model for some of them; client 2 has
# a finite optimum under every weighting.
FED = dict(gamma=[0.5, 0.8, 2.0], r=[0.01, 0.02, 0.5], sigma=[1.0, 1.0, 0.1])


def test_infinite_penalties_reported_as_inf(tmp_path, capsys):
    fed = Federation(**FED)
    adv = advise(fed, ["rtfa"])
    seen = 0
    for c in adv.candidates:
        lam = np.array(c.tuning["lam"])
        weights = c.p if c.weights == "optimal" else c.weights
        fedavg = clients_limit("fedavg", weights=weights, gamma=FED["gamma"], r=FED["r"],
                               sigma=FED["sigma"]).risk
        inf = np.isinf(lam)
        seen += inf.sum()
        # At inf: the candidate's risk is FedAvg's (and RTFA's at a large penalty).
        far = clients_limit("rtfa", weights=weights, lam=np.where(inf, 1e12, lam), **FED).risk
        np.testing.assert_allclose(c.risks[inf], fedavg[inf], rtol=1e-9)
        np.testing.assert_allclose(far, c.risks, rtol=1e-9)
        # Elsewhere a finite penalty beats FedAvg (or lam is finite and small).
        assert np.all(lam[~inf] < tune.LAM_SPAN[1])
        assert bool(c.notes) == bool(inf.any())
        d = json.loads(json.dumps(c.as_dict(), allow_nan=False))
        assert [v is None for v in d["tuning"]["lam"]] == inf.tolist()
        if inf.any():
            assert any("lam -> inf (FedAvg-like" in n for n in d["notes"])
        assert np.isfinite(lam[2])
    assert seen >= 2
    path = tmp_path / "fed.json"
    path.write_text(json.dumps([{"gamma": g, "r": r, "sigma": s}
                                for g, r, s in zip(*FED.values())]))
    assert main(["advise", "--clients-file", str(path), "--methods", "rtfa"]) == 0
    text = capsys.readouterr().out
    assert "lam=[inf, inf," in text and "e+" not in text
    assert main(["advise", "--clients-file", str(path), "--methods", "rtfa", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    lams = [c["tuning"]["lam"] for c in out["candidates"]]
    assert any(None in lam for lam in lams)
    assert all(v is None or v < 1e8 for lam in lams for v in lam)


def test_far_penalty_beating_fedavg_stays_finite():
    """A penalty beyond LAM_SPAN whose risk is below FedAvg's is a finite optimum: kept."""
    fed = Federation(**FED)
    fedavg = clients_limit("fedavg", weights="uniform", **FED).risk
    lam = np.array([1e9, 1e9, 0.05])
    risk = fedavg * np.array([1 - 1e-6, 1 + 1e-12, 1 - 1e-3])
    shown, notes = tune.shown_lams(fed, "uniform", lam, risk)
    assert shown.tolist() == [1e9, np.inf, 0.05] and "client(s) 1" in notes[0]
