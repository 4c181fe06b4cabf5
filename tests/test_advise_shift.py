"""riskcalc.advise under covariate shift (one covariance per client, diagonal in a shared
basis): identical SPECs are the shared-spectrum case exactly; an anti-aligned federation ranks
every candidate on clients_limit(..., spectra=, d=) at its tuning and weights, local ridge in
each client's own covariance; fine-tuning steps are skipped; bad input; the CLI."""

import json

import numpy as np
import pytest

import riskcalc
from riskcalc.advise import Federation, advise, from_clients
from riskcalc.advise import tune
from riskcalc.cli import main

BASE = dict(gamma=[0.5, 1.5, 2.0], r=[0.5, 1.0, 1.5], sigma=[1.0, 0.5, 0.5],
            rho=[1.1, 1.4, 1.8])
#: Client 0 and 1 anti-aligned (the directions where one's features are weak are strong for
#: the other), client 2 isotropic at twice the scale.
SPECS = ["two-point:1,4,0.5", "two-point:4,1,0.5", "scaled:2"]
D = 100


@pytest.fixture(scope="module")
def anti():
    """The advice for the anti-aligned federation (computed once). The tuned pipelines cost
    about 0.1 s per limit under covariate shift, hundreds of limits each: they run on the
    first two clients only (``anti2``), keeping the file near 20 s."""
    return advise(Federation(**BASE, spectra=SPECS, d=D),
                  ["fedavg", "ftfa", "local_ridge", "ftfa_steps"])


@pytest.fixture(scope="module")
def anti2():
    """RTFA, MAML-FL and pFedMe for the two anti-aligned clients."""
    return advise(Federation(**{k: v[:2] for k, v in BASE.items()}, spectra=SPECS[:2], d=D),
                  ["rtfa", "maml_fl", "pfedme"])


def test_identical_specs_are_the_shared_spectrum():
    """SPECs expanding to the same ordered eigenvalues (however written) give the shared
    spectrum, and advise's output is exactly that of the shared-spectrum federation."""
    shared = Federation(**BASE, spectrum=riskcalc.Spectrum.parse(SPECS[0]))
    same_specs = [SPECS[0], " Two-Point:1,4,0.5", "two-point:1,4,.5"]
    same = Federation(**BASE, spectra=same_specs, d=D)
    assert not same.shift and same.spectra is None and same.d is None
    assert same.limit_kwargs().keys() == shared.limit_kwargs().keys()
    methods = ["fedavg", "ftfa", "local_ridge", "ftfa_steps"]
    assert advise(same, methods).as_dict() == advise(shared, methods).as_dict()
    # Why the collapse is safe: the covariate-shift limits with these three (textually
    # distinct, so three types) covariances are the shared-spectrum ones.
    for method, tuning in (("ftfa", {}), ("rtfa", {"lam": [0.3, 0.5, 0.2]}),
                           ("pfedme", {"lam": 0.5})):
        ref = riskcalc.clients_limit(method, weights=[0.2, 0.5, 0.3], **tuning,
                                     **shared.limit_kwargs())
        via = riskcalc.clients_limit(method, weights=[0.2, 0.5, 0.3], **tuning,
                                     **dict(same.limit_kwargs(), spectrum=None,
                                            spectra=same_specs))
        np.testing.assert_allclose(via.risk, ref.risk, rtol=1e-12, err_msg=method)
    # scaled:1 is the identity (Sigma = I: no spectrum).
    assert Federation(**BASE, spectra=["identity", "scaled:1", "identity"]).spectrum is None


def test_anti_aligned_ranks_on_the_shift_limits(anti, anti2):
    """Every candidate with a global model has the risks of clients_limit with the clients'
    spectra at its own tuning and weights; the ranking is by mean risk; the optimal weights
    are never worse than the sample or uniform ones."""
    seen = set()
    for adv, m in ((anti, 3), (anti2, 2)):
        means = [c.mean_risk for c in adv.candidates]
        assert means == sorted(means) and adv.recommended.mean_risk == min(means)
        kw = dict(gamma=BASE["gamma"][:m], r=BASE["r"][:m], sigma=BASE["sigma"][:m],
                  spectra=SPECS[:m])
        for c in adv.candidates:
            if c.method == "local_ridge":
                continue
            seen.add(c.method)
            weights = c.weights if c.weights in ("samples", "uniform") else c.p
            ref = riskcalc.clients_limit(c.method, weights=weights, **kw, **c.tuning)
            np.testing.assert_allclose(c.risks, ref.risk, rtol=1e-10, err_msg=c.method)
        for method in {c.method for c in adv.candidates} - {"local_ridge"}:
            by = {c.weights: c.mean_risk for c in adv.candidates if c.method == method}
            assert set(by) == {"samples", "uniform", "optimal"}
            assert by["optimal"] <= min(by["samples"], by["uniform"]), method
    assert seen == {"fedavg", "ftfa", "rtfa", "maml_fl", "pfedme"}
    # Each RTFA lam_j is the best of a grid for its client (its risk depends on lam_j only).
    rtfa = next(c for c in anti2.candidates if (c.method, c.weights) == ("rtfa", "samples"))
    two = dict(gamma=BASE["gamma"][:2], r=BASE["r"][:2], sigma=BASE["sigma"][:2],
               spectra=SPECS[:2])
    grid = np.min([riskcalc.clients_limit("rtfa", weights="samples", lam=[g, g], **two).risk
                   for g in np.logspace(-2, 1, 13)], axis=0)
    assert np.all(rtfa.risks <= grid * (1 + 1e-9))
    # Covariate shift changes the advice: not the shared-spectrum limits of client 0's SPEC.
    fedavg = next(c for c in anti.candidates if (c.method, c.weights) == ("fedavg", "samples"))
    shared = riskcalc.clients_limit("fedavg", weights="samples", gamma=BASE["gamma"],
                                    r=BASE["r"], sigma=BASE["sigma"],
                                    spectrum=riskcalc.Spectrum.parse(SPECS[0]))
    assert np.all(np.abs(fedavg.risks / shared.risk - 1) > 1e-3)


def test_anti_aligned_local_ridge_and_skips(anti):
    """Local ridge in each client's own covariance: the two-point clients at the two-point
    measure; the scaled:2 client by the exact rescaling Sigma = 2 I -> I (theta -> sqrt(2)
    theta, lam -> lam / 2), the identity closed form at rho sqrt(2). Fine-tuning steps are
    skipped with one sentence."""
    ridge = next(c for c in anti.candidates if c.method == "local_ridge")
    g, s, rho = (np.array(BASE[k]) for k in ("gamma", "sigma", "rho"))
    two = riskcalc.optimal_limit("local_ridge", gamma=g[:2], sigma=s[:2], rho=rho[:2],
                                 spectrum=riskcalc.Spectrum.two_point(1.0, 4.0, 0.5))
    iso = riskcalc.optimal_limit("local_ridge", gamma=g[2], sigma=s[2],
                                 rho=np.sqrt(2.0) * rho[2])
    np.testing.assert_allclose(ridge.risks[:2], two.risk, rtol=1e-12)
    np.testing.assert_allclose(ridge.risks[2], iso.risk, rtol=1e-9)
    np.testing.assert_allclose(ridge.tuning["lam"][2], 2 * iso.params["lam"], rtol=1e-9)
    assert [s for s in anti.skipped if s.startswith("ftfa_steps")] == [anti.skipped[0]]
    assert len(anti.skipped) == 1 and "covariate shift" in anti.skipped[0]
    out = json.loads(json.dumps(anti.as_dict(), allow_nan=False))
    assert out["federation"]["spectra"] == SPECS and out["federation"]["d"] == D
    assert "spectrum" not in out["federation"]


def test_shift_bad_input(tmp_path):
    fed = dict(gamma=[0.5, 1.5], r=[1, 1], sigma=[1, 1])
    two = riskcalc.Spectrum.two_point(1.0, 4.0, 0.5)
    for kw, match in (
            (dict(spectrum=two, spectra=SPECS[:2]), "not both"),
            (dict(spectra=SPECS), "spectra lists 3 clients, gamma 2"),
            (dict(spectra=SPECS[0]), "one SPEC string per client"),
            (dict(spectra=[two, two]), "one SPEC string per client"),
            (dict(spectra=["powerlaw:1", "identity"]), "powerlaw needs the number"),
            (dict(spectra=["powerlaw:1,50", "identity"], d=100), "50 eigenvalues for d = 100"),
            (dict(spectra=["nosuch", "identity"]), "is not one of"),
            (dict(spectra=SPECS[:2], d=10.5), "d must be an integer"),
            (dict(spectrum=two, d=100), "d applies to spectra"),
            (dict(spectrum=[two, None]), "give one SPEC per client in spectra")):
        with pytest.raises(ValueError, match=match):
            Federation(**fed, **kw)
    with pytest.raises(ValueError, match="client 1's spectrum must be a SPEC string"):
        from_clients([{"gamma": 0.5, "r": 1, "sigma": 1}, {"gamma": 1, "r": 1, "sigma": 1,
                                                           "spectrum": 2}])
    with pytest.raises(ValueError, match="covariate shift"):      # a measure cannot be ordered
        from_clients([{"gamma": 0.5, "r": 1, "sigma": 1, "spectrum": SPECS[2]},
                      {"gamma": 1, "r": 1, "sigma": 1}], spectrum=two)
    shift = Federation(**fed, spectra=SPECS[:2])
    with pytest.raises(ValueError, match="covariate shift"):
        tune.optimal_steps(shift, "samples")
    # A client without a SPEC has Sigma = I; n turns into gamma with d.
    mixed = from_clients([{"n": 200, "r": 1, "sigma": 1, "spectrum": "powerlaw:1"},
                          {"gamma": 1, "r": 1, "sigma": 1}], d=100)
    assert mixed.spectra == ("powerlaw:1", "identity") and mixed.gamma.tolist() == [0.5, 1.0]


def _cli(tmp_path, capsys, clients, *extra):
    path = tmp_path / "fed.json"
    path.write_text(json.dumps(clients))
    code = main(["advise", "--clients-file", str(path), *extra])
    return code, capsys.readouterr()


def test_cli_shift(tmp_path, capsys):
    clients = [dict(gamma=g, r=r, sigma=s, rho=p, spectrum=sp)
               for g, r, s, p, sp in zip(*BASE.values(), SPECS)]
    methods = ("--methods", "fedavg,ftfa,local_ridge,ftfa_steps")
    code, out = _cli(tmp_path, capsys, clients, *methods)
    assert code == 0, out.err
    lines = out.out.splitlines()
    assert lines[0] == ("federation: 3 clients, covariate shift (spectra two-point:1,4,0.5 / "
                        "two-point:4,1,0.5 / scaled:2)")
    assert "recommended for the federation" in out.out
    assert any(s.startswith("skipped: ftfa_steps: no finite-M limit") for s in lines)
    # The --spectrum default fills clients without one; --d sizes powerlaw:P.
    clients[2].pop("spectrum")
    code, out = _cli(tmp_path, capsys, clients, *methods, "--spectrum", "powerlaw:1",
                     "--d", "100", "--json")
    assert code == 0, out.err
    res = json.loads(out.out)
    assert res["federation"]["spectra"] == SPECS[:2] + ["powerlaw:1"]
    assert res["federation"]["d"] == 100
    for extra, match in ((("--spectrum", "powerlaw:1"), "powerlaw needs the number"),
                         (("--spectrum", "powerlaw:1,50", "--d", "100"), "50 eigenvalues"),
                         (("--spectrum", "nosuch"), "is not one of")):
        code, out = _cli(tmp_path, capsys, clients, *methods, *extra)
        assert code == 2 and out.err.startswith("error: ") and match in out.err, out.err
        assert out.err.count("\n") == 1


def test_simulated_federation_has_the_clients_covariances(anti):
    """montecarlo.linear.federation samples each client with its own covariance (the SPEC's ordered
    eigenvalues) and measures each client's risk in it: the simulated candidates (FedAvg,
    FTFA, local ridge; d = 200, 16 replicates) match their predictions within 4 s.e. + 3%
    (finite-d corrections of order 1/d), as in the shared-spectrum test of test_advise.py."""
    from montecarlo.linear.federation import sample_federation, simulate

    fed = Federation(**BASE, spectra=SPECS, d=D)
    X, _, _, s = sample_federation(fed, 200, seed=1, rep=0)
    np.testing.assert_array_equal(s[1], riskcalc.spectrum.ordered_eigenvalues(SPECS[1], 200))
    np.testing.assert_allclose([np.mean(x ** 2, axis=0)[:100].mean() for x in X],
                               [1.0, 4.0, 2.0], rtol=0.1)
    cands = [c for c in anti.candidates if c.method != "ftfa_steps"]
    reps = 16
    sim = simulate(fed, cands, d=200, reps=reps, seed=3).mean(axis=2)
    mean, se = sim.mean(0), sim.std(0, ddof=1) / np.sqrt(reps)
    for c, mu, sd in zip(cands, mean, se):
        assert abs(mu - c.mean_risk) <= 4 * sd + 0.03 * c.mean_risk, (c.method, c.weights, mu)
