"""Edge federations of ``riskcalc advise`` (issue 30, bugs found in the third round):
noiseless clients (sigma_j = 0) in the finite-M limits, RTFA's optimal weights when every
tuned penalty is 0, r = sigma = 0 for every client (every pipeline with a global model ties
at risk 0), and ``--methods`` lists that name no pipeline or one twice."""

import json

import numpy as np
import pytest

import riskcalc
from riskcalc.advise import Federation, advise, pipelines
from riskcalc.cli import main

#: The federation the errbars helper reported (RTFA's optimal weights raised "no starting
#: point has a finite mean risk"): two noiseless clients.
REPORTED = dict(gamma=[0.5, 0.6, 0.8, 1.5], r=[0.49, 0.0, 2.3, 1.57], sigma=[0.0, 1.61, 0.0, 1.39])


@pytest.mark.parametrize("method,tuning,doubled", [
    ("fedavg", {}, {}), ("ftfa", {}, {}),
    ("rtfa", {"lam": np.array([1e-10, 0.2, 0.3, 3.0])},
     {"lam": np.array([2e-10, 0.4, 0.6, 6.0])}),
    ("pfedme", {"lam": 0.5}, {"lam": 1.0})])
def test_noiseless_client_keeps_the_others_noise(method, tuning, doubled):
    """A client with sigma_j = 0 still carries the other clients' noise through the global
    model. Sigma = I (closed forms, ``finite_clients.identity``) against the general-spectrum
    route at Sigma = 2 I (``finite_clients.sigma``, an independent solve), where the bias
    doubles and the variance is unchanged at the doubled penalty; and against continuity in
    sigma_j (the variance is sigma_j^2 times an O(1) factor plus the others' term)."""
    kw = dict(REPORTED, weights="samples")
    ident = riskcalc.clients_limit(method, **kw, **tuning)
    two = riskcalc.clients_limit(method, **kw, spectrum=riskcalc.Spectrum([2.0]), **doubled)
    np.testing.assert_allclose(ident.variance, two.variance, rtol=1e-9, atol=1e-13)
    np.testing.assert_allclose(2 * ident.bias, two.bias, rtol=1e-9, atol=1e-13)
    near = riskcalc.clients_limit(method, **dict(kw, sigma=[1e-7, 1.61, 1e-7, 1.39]), **tuning)
    np.testing.assert_allclose(ident.risk, near.risk, rtol=1e-9, atol=1e-12)
    if method != "ftfa":                       # FTFA at gamma < 1: the client's own fit
        assert ident.variance[2] > 0.01


def test_rtfa_optimal_weights_with_noiseless_clients():
    """The reported federation: every pipeline answers, RTFA with optimal weights included;
    its risks are clients_limit's at its own weights and penalties, and its mean is no worse
    than the sample and uniform weights'."""
    adv = advise(Federation(**REPORTED), methods=["ftfa", "rtfa"])
    assert not adv.skipped
    rtfa = {c.weights: c for c in adv.candidates if c.method == "rtfa"}
    opt = rtfa["optimal"]
    lam = np.array(opt.tuning["lam"])
    ref = np.where(lam > 0, riskcalc.clients_limit(
        "rtfa", **REPORTED, weights=opt.p, lam=np.where(lam > 0, lam, 1.0)).risk,
        riskcalc.clients_limit("ftfa", **REPORTED, weights=opt.p).risk)
    np.testing.assert_allclose(opt.risks, ref, rtol=1e-9, atol=1e-14)
    assert opt.mean_risk <= min(rtfa["samples"].mean_risk, rtfa["uniform"].mean_risk) + 1e-12


def test_rtfa_optimal_weights_when_every_penalty_is_zero():
    """Noiseless clients with gamma_j < 1 interpolate their own data exactly: FTFA (RTFA at
    lam = 0) has risk 0 for each, and RTFA's optimal weights start from lam = 0 for every
    client; they answer, tie at risk 0, and the tie is reported."""
    fed = Federation(gamma=[0.5, 0.6, 0.8], r=[1.0, 0.5, 2.0], sigma=[0.0, 0.0, 0.0])
    adv = advise(fed, methods=["fedavg", "ftfa", "rtfa"])
    assert {(c.method, c.weights) for c in adv.candidates if c.mean_risk == 0} == {
        (m, w) for m in ("ftfa", "rtfa") for w in ("samples", "uniform", "optimal")}
    assert adv.recommended.mean_risk == 0 and len(adv.ties()) == 5
    assert all(row["tied"] == 5 for row in adv.per_client())


def test_no_signal_differences_and_no_noise(tmp_path, capsys):
    """r_j = sigma_j = 0 for every client: theta_j = theta_0 and no noise, so every pipeline
    with a global model (pooled N > d) recovers theta_j exactly (risk 0: clients_limit, and
    the oracle limit at r = sigma = 0); local ridge at gamma_j > 1 keeps the bias
    rho_j^2 (1 - 1/gamma_j) of its null space. The CLI answers, reports the ties, no NaN."""
    clients = [{"gamma": g, "r": 0, "sigma": 0, "rho": 1} for g in (0.5, 0.6, 0.8, 1.5)]
    path = tmp_path / "fed.json"
    path.write_text(json.dumps(clients))
    assert main(["advise", "--clients-file", str(path), "--json", "--no-progress"]) == 0
    res = json.loads(capsys.readouterr().out)
    gam = np.array([0.5, 0.6, 0.8, 1.5])
    for c in res["candidates"]:
        if c["method"] == "local_ridge":
            np.testing.assert_allclose(c["risks"], np.maximum(1 - 1 / gam, 0), atol=1e-12)
        else:
            assert c["risks"] == [0.0] * 4, c
    assert len(res["recommended"]["tied_with"]) == len(res["candidates"]) - 2
    assert all(g["gain_vs_samples"] == 0.0 for g in res["weight_gains"])
    assert main(["advise", "--clients-file", str(path), "--no-progress", "--methods",
                 "fedavg,ftfa,local_ridge"]) == 0
    out = capsys.readouterr()
    assert "tied (mean risk equal within" in out.out and "nan" not in out.out.lower()


@pytest.mark.parametrize("text,match", [
    ("", "an empty name"), (",,,", "an empty name"), ("fedavg,,ftfa", "an empty name"),
    ("fedavg,fedavg", "fedavg more than once"), ("rtfa, ftfa ,rtfa", "rtfa more than once"),
    ("FedAvg", "'FedAvg'")])
def test_methods_lists_refused(tmp_path, capsys, text, match):
    """Every list that names no pipeline, an empty one, an unknown one or one twice is
    refused with one line (the CLI exits 2), before the federation is solved."""
    with pytest.raises(ValueError, match=match):
        pipelines(text)
    path = tmp_path / "fed.json"
    path.write_text(json.dumps([{"gamma": 0.5, "r": 1, "sigma": 1}] * 2))
    assert main(["advise", "--clients-file", str(path), "--methods", text]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: methods must be among") and match in err
    assert err.count("\n") == 1


def test_methods_lists_accepted():
    assert pipelines(None) == pipelines(",".join(pipelines(None)))
    assert pipelines(" rtfa , fedavg") == ("rtfa", "fedavg") == pipelines(["rtfa", "fedavg"])


def test_a_spec_string_is_one_shared_spectrum():
    # 'identity' was read as a list of 8 per-client spectra ("spectrum lists 8 clients").
    kw = dict(gamma=[1, 2], r=[1, 1], sigma=[0.5, 0.5])
    assert riskcalc.Federation(**kw, spectrum="identity").spectrum is None
    fed = riskcalc.Federation(**kw, spectrum="two-point:1,3,0.5")
    assert fed.spectrum.describe() == riskcalc.Spectrum.two_point(1, 3, 0.5).describe()
