"""Issue 32, fuzz38 (logi3): what this fuzz found, each test failing before."""
import numpy as np
import pytest

import riskcalc

# Two spectra that describe() reads alike (six digits): atoms 1 and 1.0000001.
TWINS = (riskcalc.Spectrum([1.0, 4.0]), riskcalc.Spectrum([1.0000001, 4.0]))


@pytest.mark.parametrize("call", [
    lambda s: riskcalc.clients_limit("fedavg", gamma=[1.5, 2], r=[1, 1], sigma=[0.5, 0.5],
                                     spectrum=s),
    lambda s: riskcalc.logistic_limit(gamma=2, signal=1, r=1, lam=0.5, spectrum=s),
    lambda s: riskcalc.logistic_limit(gamma=[2, 3], signal=1, r=1, lam=0.5, spectrum=s),
    lambda s: riskcalc.logistic_clients_limit(method="rtfa", gamma=[2, 3], signal=1, r=[1, 1],
                                              lam=0.5, global_lam=0.1, spectrum=s),
], ids=["clients_limit", "logistic_limit", "logistic_limit_array", "logistic_clients_limit"])
def test_two_spectra_are_recorded_apart_by_every_result(call):
    # F1 (session 38's leftover 1): ClientsLimit and the logistic results recorded a spectrum
    # by describe(), so these two (different limits) read the same in their frames and JSON.
    a, b = TWINS
    assert a.describe() == b.describe()
    ra, rb = (call(s).as_dict()["params"]["spectrum"] for s in (a, b))
    assert ra == a.record() and rb == b.record() and ra != rb


def test_mle_threshold_at_a_large_signal_searches_the_nodes_that_matter(monkeypatch):
    # F2 (session 38's leftover 2): mle_threshold(1e5) took 11 s, every one of its ~16 search
    # steps over the rule's ~1e7 nodes. Beyond FEW_NODES the search runs on the nodes whose
    # terms are not negligible (about 3 passes over the rule in all: 2.3 s at 1e5); the value
    # is the full search's (here kappa = 2000, 183,360 nodes) to 1e-15.
    from riskcalc.logistic import transition

    seen = []
    psi = transition._psi
    monkeypatch.setattr(transition, "_psi", lambda m: seen.append(np.size(m)) or psi(m))
    h = transition.mle_threshold(2000.0)
    assert h == pytest.approx(0.0005076335907499926, rel=1e-14)
    assert sum(seen) < 4 * max(seen) and max(seen) == 183360


@pytest.mark.parametrize("weights", ["x", "Samples", None, ["samples"]])
@pytest.mark.parametrize("pfedme", [False, True])
def test_simulate_replicate_refuses_a_weighting_it_does_not_know(weights, pfedme):
    # F3 (session 38's leftover 3): the public task function read every weights but
    # "samples" as uniform (global model and FedProx's), answering for weights="x".
    from montecarlo.logistic.pipeline import simulate_replicate

    with pytest.raises(ValueError, match=r"weights must be one of \('samples', 'uniform'\)"):
        simulate_replicate(gammas=[0.5, 1.0], rs=[0.5, 0.5], signal=1.0, lams=[0.5],
                           global_lam=0.1, d=6, seed=0, rep=0, weights=weights, pfedme=pfedme)


def test_ridge_simulation_names_the_centre_it_could_not_fit(monkeypatch):
    # F4 (session 38's leftover 4): ridge.simulate(centre_scale=1e300, or 1e10 as here)
    # failed with prox's message, naming "l2" (a parameter of another function) and advising
    # "set l2 > 0". It names what the caller gave now. (fuzz39 logi F4: centre_scale 1e10
    # answers since prox's tolerance scales with the centre; a failing prox stands in.)
    from montecarlo.logistic import ridge
    from riskcalc.errors import SolverError

    def failing(*args, **kwargs):
        raise SolverError("prox: Newton did not reach gradient norm 1e-10 in 100 iterations "
                          "(with l2 = 0 ...; set l2 > 0)")
    monkeypatch.setattr(ridge, "prox", failing)
    with pytest.raises(SolverError, match=r"lam = 0\.5 around centre_scale \* w_0 "
                       r"\(centre_scale = 1e\+10, norm 1e\+10\) did not converge") as err:
        ridge.simulate_replicate(gamma=1.0, signal=1.0, r=0.5, lams=[0.5], d=6, seed=0,
                                 rep=0, centre_scale=1e10)
    assert "l2" not in str(err.value)


@pytest.mark.parametrize("call", [
    lambda **kw: riskcalc.logistic_limit(gamma=2, signal=1, r=1, lam=0.5, clients=3, **kw),
    lambda **kw: riskcalc.logistic_limit(gamma=[2, 3], signal=1, r=1, lam=0.5, clients=3,
                                         **kw),
    lambda **kw: riskcalc.logistic_clients_limit(gamma=[2, 3], signal=1, r=[1, 1], lam=0.5,
                                                 **kw),
    lambda **kw: riskcalc.logistic_clients_limit(gamma=[[2, 3]], signal=1, r=[1, 1], lam=0.5,
                                                 **kw),
], ids=["finite", "finite_grid", "clients", "clients_grid"])
def test_local_ridge_notes_the_global_penalty_it_does_not_use(call):
    # F5 (session 38's leftover 5): local ridge took global_lam in Python and answered with no
    # note (the command line noted it): a reader of the result took the penalty to count.
    note = "local_ridge uses no global model: global_lam plays no part"
    given = call(method="local_ridge", global_lam=0.1)
    assert note in given.notes
    assert note not in call(method="local_ridge").notes
    assert note not in call(method="rtfa", global_lam=0.1).notes


def test_the_command_line_says_the_local_ridge_note_once(capsys):
    # F5's command-line side: the command line noted the penalty (its own note) while the
    # Python result did not; now the result notes it, and the command line says it once.
    from tests.helpers import run_cli

    argv = ["predict", "local_ridge", "--model", "logistic", "--gamma", "2", "--signal", "1",
            "--r", "1", "--lam", "0.5", "--clients", "3", "--global-lam", "0.1"]
    code, out, _ = run_cli(argv, capsys)
    assert code == 0 and out.count("no global model") == 1
    assert "global_lam plays no part" in riskcalc.logistic_limit(
        gamma=2, signal=1, r=1, lam=0.5, clients=3, global_lam=0.1,
        method="local_ridge").as_dict()["notes"][0]


def test_advise_says_a_refusal_shared_by_every_candidate_once():
    # F6 (session 38's leftover 6): a signal beyond the limits' reach refused every candidate
    # alike, and "no candidate could be evaluated" repeated that refusal seven times (local
    # ridge's as "local_ridge with none weights"). Each reason is said once, after the
    # candidates it applies to.
    from riskcalc.advise.logistic import LogisticFederation, advise_logistic

    fed = LogisticFederation(gamma=[2.0, 3.0], r=[1.0, 1.0], signal=2e5, global_lam=0.1)
    with pytest.raises(ValueError, match=r"^no candidate could be evaluated: fedavg with "
                       r"samples weights, fedavg with uniform weights, .*pfedme with uniform "
                       r"weights, local_ridge: signal = 200000") as err:
        advise_logistic(fed)
    assert str(err.value).count("signal = 200000") == 1


TASK = dict(gammas=[0.5, 1.0], rs=[0.5, 0.5], signal=1.0, lams=[0.5], global_lam=0.1, d=6,
            seed=0, rep=0)


@pytest.mark.parametrize("change,match", [
    (dict(target=2), r"target must be an integer in \[0, 1\], got 2"),
    (dict(target=-1), r"target must be an integer in \[0, 1\], got -1"),
    (dict(target=True), r"target must be an integer in \[0, 1\], got True"),
    (dict(global_lam=-1.0), r"global_lam must lie in \[0, inf\)"),
    (dict(global_lam=np.nan), r"global_lam must be a finite number"),
    (dict(signal=-1.0), r"signal must lie in \[0, inf\)"),
    (dict(lams=[0.0]), r"lam must lie in \(0, inf\)"),
    (dict(d=1), r"d must be an integer >= 2"),
    (dict(eigenvalues=[1.0] * 5), r"eigenvalues must hold d = 6 values, got 5"),
    (dict(rep=-1), r"rep must be an integer >= 0"),
])
def test_the_pipeline_task_function_checks_its_arguments(change, match):
    # F7 (this fuzz): the public task function checked nothing: target 2 of 2 clients was an
    # IndexError, -1 silently the last client, True numpy's broadcast error, global_lam -1
    # prox's "set l2 > 0", five eigenvalues beside d = 6 a broadcast error; d = 1, signal -1
    # and lam 0 answered (simulate_pipeline refuses each). It checks them as the pipeline does.
    from montecarlo.logistic.pipeline import simulate_replicate

    with pytest.raises(ValueError, match=match):
        simulate_replicate(**{**TASK, **change})


@pytest.mark.parametrize("n_test", [0, True, 2.5])
def test_the_ridge_task_function_refuses_a_test_set_size_that_is_no_count(n_test):
    # F8 (this fuzz): n_test = 0 measured NaN metrics (numpy's "Mean of empty slice"), True
    # and 2.5 were TypeErrors naming no parameter.
    from montecarlo.logistic import ridge

    with pytest.raises(ValueError, match=r"^n_test must be an integer >= 1"):
        ridge.simulate_replicate(gamma=1.0, signal=1.0, r=0.5, lams=[0.5], d=6, seed=0, rep=0,
                                 n_test=n_test)


def test_a_logistic_federation_of_nested_lists_says_what_is_wrong():
    # F9 (this fuzz): r = [[1, 1]] beside gamma = [2, 3] was refused as "gamma and r must be
    # lists of one length (one entry per client); got 2 and 2", a contradiction.
    from riskcalc.advise.logistic import LogisticFederation

    with pytest.raises(ValueError, match=r"^r must be a 1-d list \(one entry per client\), "
                       r"got an array of shape \(1, 2\)$"):
        LogisticFederation(gamma=[2.0, 3.0], r=[[1.0, 1.0]], signal=1.0, global_lam=0.1)


@pytest.mark.parametrize("extra", [{"signal": 5.0}, {"sigma": 0.5}, {"lam": 3.0}])
def test_a_client_entry_with_a_key_it_does_not_use_is_refused(extra):
    # F10 (this fuzz): logistic_clients_limit(clients=[{"gamma", "r", "signal": 5}, ...])
    # dropped the other keys silently: a client's own signal or penalty read as taken.
    key = next(iter(extra))
    with pytest.raises(ValueError, match=rf"^client 0: unknown key\(s\) '{key}'; a client "
                       r"entry takes 'gamma' and 'r' only$"):
        riskcalc.logistic_clients_limit(
            clients=[{"gamma": 2.0, "r": 1.0, **extra}, {"gamma": 3.0, "r": 1.0}],
            signal=1.0, lam=0.5, global_lam=0.1)


def test_logistic_advise_beyond_the_limits_reach_says_so_before_its_estimate(tmp_path, capsys):
    # F11 (this fuzz): a federation file with signal 1e6 was refused by the time estimate,
    # "estimated 66.6 days of work ... use fewer clients, or allow more time with
    # --max-minutes" (2 clients; neither answers). It says the reach, and what does answer.
    import json

    from tests.helpers import run_cli

    fed = tmp_path / "fed.json"
    fed.write_text(json.dumps({"fedrisk_federation": 1, "signal": 1e6, "clients": [
        {"name": "a", "gamma": 2.0, "r": 1.0}, {"name": "b", "gamma": 3.0, "r": 1.0}]}))
    code, _, err = run_cli(["advise", "--model", "logistic", "--federation", str(fed),
                            "--global-lam", "0.1", "--no-progress"], capsys)
    assert code == 2 and err.startswith("error: signal = 1e+06 and r up to 1 put ||w_i|| at ")
    assert err.rstrip().endswith("lower signal and r") and "days" not in err
