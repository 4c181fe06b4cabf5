"""Issue 32, fuzz36 (api): what this fuzz found, each test failing before."""

import re

import numpy as np
import pytest

import figures
import montecarlo
import paper_checks
import riskcalc
from riskcalc import advise
from riskcalc import minimax as mm

TWO = np.array(["auto", "closed"])


@pytest.mark.parametrize("call, name", [
    (lambda: riskcalc.limit("ftfa", gamma=2.0, r=1.0, sigma=0.5, route=TWO), "route"),
    (lambda: riskcalc.limit("rtfa", gamma=0.5, r=1.0, sigma=0.5, lam=0.5, clients=3,
                            route=TWO), "route"),
    (lambda: riskcalc.limit("rtfa", gamma=0.5, r=1.0, sigma=0.5, lam=0.5, clients=2,
                            weights=np.array([0.5, 0.5])), "weights"),
    (lambda: riskcalc.optimal_lambda("rtfa", gamma=2.0, r=1.0, sigma=0.5, how=TWO), "how"),
    (lambda: riskcalc.logistic_limit(gamma=1.0, signal=1.0, r=1.0, lam=1.0, centre=TWO),
     "centre"),
    (lambda: riskcalc.logistic_limit(gamma=1.0, signal=1.0, r=1.0, lam=1.0, method=TWO),
     "method"),
    (lambda: riskcalc.logistic_limit(gamma=1.0, signal=1.0, r=1.0, lam=1.0, clients=5,
                                     global_lam=1e-3, weights=np.ones(5)), "weights"),
    (lambda: mm.optimal_method(1.0, 0.5, oracle=TWO), "oracle"),
    (lambda: mm.fedprox_regime(0.5, 1000, 10, kind=TWO), "kind"),
    (lambda: mm.evaluate(["fedavg_aer"]), "unknown bound"),
    (lambda: montecarlo.compare("ftfa", gamma=2.0, r=1.0, sigma=0.5, d=60, reps=3,
                                measure=TWO), "measure"),
    (lambda: montecarlo.compare("ftfa", gamma=2.0, r=1.0, sigma=0.5, d=60, reps=3,
                                eigvecs=TWO), "eigvecs"),
    (lambda: figures.get_figure(["p003-region"]), "unknown figure"),
])
def test_a_choice_given_as_an_array_is_named(call, name, monkeypatch):
    """F1: a named choice (route, how, centre, weights, oracle, kind, measure, ...) given as an
    array was numpy's "The truth value of an array ... is ambiguous" (naming nothing), and a
    list for a bound's or a figure's name was a TypeError "unhashable type"."""
    monkeypatch.setattr("figures.core.load_all", lambda: {})   # its 1 s of imports
    with pytest.raises(ValueError) as info:
        call()
    assert name in str(info.value) and "ambiguous" not in str(info.value), str(info.value)


@pytest.mark.parametrize("call, name", [
    (lambda: mm.fedprox_constants(1.0, 0.5, 0.1, rederived="no"), "rederived"),
    (lambda: mm.fedprox_lambda(1, 1, 1, 1, 100, 10, rederived=1), "rederived"),
    (lambda: mm.fedprox_global_error_bound(1, 1, 1, 1, 100, 10, rederived=None), "rederived"),
    (lambda: mm.local_case2_lambda(1, 1, 1, 1, 100, 10, printed="yes"), "printed"),
    (lambda: mm.table1_rates(0.5, 100, 10, printed=0), "printed"),
    (lambda: mm.logistic_constants(1, 1, 10, printed="no"), "printed"),
    (lambda: mm.thm31_distance_lower_bound(1e4, 1.0, 1e4, 10, strict="no"), "strict"),
    (lambda: paper_checks.Config(quick="no"), "quick"),
    (lambda: paper_checks.run_claims(paper_checks.select("001")[:1], quick="no"), "quick"),
    (lambda: paper_checks.run_claims(paper_checks.select("001")[:1], n_jobs=0), "n_jobs"),
    (lambda: paper_checks.run_claims(paper_checks.select("001")[:1], progress=1), "progress"),
    (lambda: montecarlo.compare("ftfa", gamma=2.0, r=1.0, sigma=0.5, d=60, reps=3,
                                progress="no"), "progress"),
])
def test_a_switch_is_true_or_false(call, name):
    """F2: a switch given as text or a number was read by its truth: rederived="no" gave the
    re-derived constants, strict="no" the strict check, printed=0 the corrected rows,
    run_claims(quick="no") the quick sizes, compare(progress="no") drew the bar (the package's
    ``flag`` was not used there); run_claims(n_jobs=0) was taken."""
    with pytest.raises(ValueError, match=name):
        call()


def test_build_cache_is_a_switch(tmp_path):
    """F2: figures.build(cache="no") cached (in out_dir/.cache)."""
    with pytest.raises(ValueError, match="cache must be True or False"):
        figures.build("p003-thm1-ftfa", tmp_path, quick=True, formats="png", cache="no")
    assert not (tmp_path / ".cache").exists()


@pytest.mark.parametrize("claims", ["001.sec2.summand-lower-bound",
                                    ["001.sec2.summand-lower-bound"], [None]])
def test_run_claims_takes_claims(claims):
    """F2: an id string (or a list of ids) was an AttributeError "'str' object has no attribute
    'id'" from a worker."""
    with pytest.raises(ValueError, match="paper_checks.Claim"):
        paper_checks.run_claims(claims)


FED = dict(gamma=[0.5, 0.8, 0.6], r=[1.0, 0.5, 0.8], sigma=[0.5, 0.5, 0.3])


@pytest.mark.parametrize("call, message", [
    (lambda: advise.from_clients([]), "at least two clients, got 0"),
    (lambda: advise.from_clients([{"n": 50.5, "r": 1, "sigma": 0.5},
                                  {"n": 80, "r": 0.5, "sigma": 0.5}], d=40),
     "client 0 n must be an integer"),
    (lambda: advise.advise(riskcalc.Federation(**FED), methods=["ftfa"], progress=3),
     "progress must be a callable"),
    (lambda: advise.estimate_seconds(riskcalc.Federation(**FED), None, 0), "rounds must be"),
    (lambda: advise.estimate_seconds({}), "riskcalc.advise.Federation"),
])
def test_advise_api_refusals(call, message):
    """F3: from_clients([]) was an IndexError; a client's n = 50.5 was taken (gamma = d / 50.5:
    half a sample; a federation file refuses it); advise(progress=3) a TypeError after the first
    pipeline's work."""
    with pytest.raises(ValueError, match=message):
        call()


def test_estimate_seconds_reads_methods_as_advise_does():
    """F3: estimate_seconds(fed) (methods default: all, as advise's) was a TypeError, "rtfa" a
    KeyError 'r' (its letters taken as pipelines) and "fedprox" a KeyError."""
    fed = riskcalc.Federation(**FED)
    assert set(advise.estimate_seconds(fed)) == set(advise.PIPELINES)
    assert list(advise.estimate_seconds(fed, "rtfa,ftfa")) == ["rtfa", "ftfa"]
    assert list(advise.estimate_seconds(fed, ["fedprox"])) == ["pfedme"]


def test_local_ridge_at_rho_zero_is_not_sent_to_fedavg():
    """F4: optimal_limit("local_ridge", rho=0) advised "use method fedavg": local ridge shrinks
    toward 0, so lam* = inf means the zero vector (risk 0), and FedAvg's risk depends on
    r = ||theta_i - theta_0||, which a local client's problem does not give."""
    with pytest.raises(ValueError) as info:
        riskcalc.optimal_limit("local_ridge", gamma=2.0, rho=0.0, sigma=0.5)
    assert "zero vector" in str(info.value) and "fedavg" not in str(info.value)
    with pytest.raises(ValueError, match="use method fedavg"):
        riskcalc.optimal_limit("rtfa", gamma=2.0, r=0.0, sigma=0.5)


@pytest.mark.parametrize("kw, message", [
    (dict(clients=5, global_model="oracle"), "clients apply with global_model='federated'"),
    (dict(weights="uniform"), "weights apply"),
    (dict(gammas=[1.0, 2.0]), "gammas apply"),
    (dict(df=7), "df applies with features='student-t'"),
    (dict(method="local", r=None, rho=1.0, clients=5), "does not apply to local"),
])
def test_compare_refuses_what_has_no_effect(kw, message):
    """F5: montecarlo.compare took and ignored what the command line refuses (docs/safety.rst:
    --clients and --weights under --global oracle, --global federated for the local baselines,
    --df without Student-t draws): weights="uniform" simulated and predicted the oracle."""
    args = dict(method="ftfa", gamma=2.0, r=1.0, sigma=0.5, d=60, reps=3, progress=False)
    with pytest.raises(ValueError, match=message):
        montecarlo.compare(**{**args, **kw})


@pytest.mark.parametrize("call, message", [
    (lambda tmp: figures.draw("p003-region", quick=True, cache_dir=3), "cache_dir must be a"),
    (lambda tmp: figures.build("p003-region", None, quick=True), "out_dir must be a folder"),
    (lambda tmp: figures.build("p003-region", tmp, quick=True, cache=False, cache_dir=tmp),
     "cache_dir applies with cache=True only"),
])
def test_figure_folders_are_paths(call, message, tmp_path):
    """F6: draw(cache_dir=3) and build(out_dir=None) were TypeErrors from pathlib; build's
    cache_dir beside cache=False was ignored."""
    with pytest.raises(ValueError, match=message):
        call(tmp_path)


def test_clients_limit_weights_none_is_the_default():
    """F7: clients_limit(weights=None) was "weights must be a real number, got None" where
    limit(clients=M, weights=None) and steps_limit take None as the default (samples)."""
    args = dict(gamma=[0.5, 0.8], r=1.0, sigma=0.5, lam=0.5)
    got = riskcalc.clients_limit("rtfa", weights=None, **args)
    assert np.array_equal(got.risk, riskcalc.clients_limit("rtfa", **args).risk)


def test_logistic_clients_frame_of_a_grid_or_a_target():
    """F8: LogisticClientsResult.to_frame() with target=J was "All arrays must be of the same
    length" (all M clients' gamma beside one row), and on a grid (array signal) "Per-column
    arrays must each be 1-dimensional"; it has one row per client computed and grid point."""
    res = riskcalc.logistic_clients_limit(gamma=[0.5, 1.5], r=[1.0, 0.5], signal=[1.0, 2.0],
                                          lam=1.0, global_lam=1.0, target=1)
    frame = res.to_frame()
    assert list(frame["risk"]) == list(np.ravel(res.risk))
    assert list(frame["client"]) == list(np.ravel(np.broadcast_to(res.params["targets"],
                                                                   np.shape(res.risk))))
    assert list(frame["gamma"]) == [[0.5, 1.5][j] for j in frame["client"]]
    assert list(frame["client"]) == [1, 1] and list(frame["signal"]) == [1.0, 2.0]


@pytest.mark.parametrize("kw", [dict(), dict(clients=5, global_lam=1.0)])
def test_logistic_frame_of_a_broadcast_result_has_a_row_per_point(kw):
    """F9: logistic_limit(gamma=[0.5, 1.5], ...).to_frame() was one row whose cells held
    arrays (``LimitResult.to_frame`` has one row per point, in C order)."""
    res = riskcalc.logistic_limit(gamma=[[0.5], [1.5]], signal=[1.0], r=1.0, lam=1.0, **kw)
    frame = res.to_frame()
    assert len(frame) == 2 and list(frame["risk"]) == list(np.ravel(res.risk))
    assert list(frame["gamma"]) == [0.5, 1.5] and list(frame["signal"]) == [1.0, 1.0]


def test_spectrum_and_federation_arrays_are_read_only():
    """F10: Spectrum and Federation are frozen, but their arrays were writeable:
    spectrum.atoms[0] = -3 (unsorted, negative: past every check) made the next limit fail as
    "route kappa: the limit is not a finite number", fed.gamma[0] = -1 went into advise."""
    spec = riskcalc.Spectrum([1.0, 4.0])
    fed = riskcalc.Federation(**FED)
    for arr in (spec.atoms, spec.weights, spec.signal_weights, fed.gamma, fed.r, fed.sigma):
        with pytest.raises(ValueError, match="read-only"):
            arr[0] = -3.0
    mine = np.array([1.0, 4.0])
    riskcalc.Spectrum(mine)
    mine[0] = 2.0                  # the caller's own array stays theirs


@pytest.mark.parametrize("call, message", [
    (lambda: mm.apgd_complexity(np.float32(0.5), 1.0, 0.5, 1e-3),
     "L must be >= mu (smoothness bounds strong convexity), got L=0.5, mu=1"),
    (lambda: mm.lower_bound_aer(10, np.array([5000, 5]), 10, 0.5),
     "m must be <= N, got m=10, N=5 (entry 1 of 2)"),
    (lambda: mm.fedavg_weighted_bounds(1, 1, 1, 1, 0.5, [0.5, 0.6], [10, 10]),
     "p must sum to 1, got sum 1.1"),
])
def test_minimax_messages_show_the_offending_numbers(call, message):
    """F11: the messages printed numpy's reprs (L=np.float32(0.5), N=np.int64(5), sum
    np.float64(1.1)) or the whole arrays instead of the entry that fails."""
    with pytest.raises(ValueError) as info:
        call()
    assert str(info.value) == message


def test_select_reads_claim_ids_once_and_names_bad_arguments():
    """F12: paper_checks.select(None, (id for id in ids)) selected nothing (the generator was
    used up by the check of unknown ids), an array of two ids was "truth value ... ambiguous",
    claim_ids=3 and paper=["003"] were TypeErrors."""
    ids = list(paper_checks.CLAIMS)[:2]
    assert [c.id for c in paper_checks.select(None, (i for i in ids))] == ids
    assert [c.id for c in paper_checks.select(None, np.array(ids))] == ids
    with pytest.raises(ValueError, match="claim_ids must be a claim id or a list"):
        paper_checks.select(None, 3)
    with pytest.raises(ValueError, match="paper must be one of"):
        paper_checks.select(["003"])


@pytest.mark.parametrize("kw, message", [
    (dict(reps=1), "reps must be an integer >= 2"),
    (dict(d=1), "d must be an integer >= 2"),
    (dict(seed=-1), "seed must be an integer >= 0"),
    (dict(tuning=True), "tuning must be a real number"),
    (dict(gamma=[2.0, 3.0]), "gamma must be a number"),
    (dict(k=-1), "k must lie in (0, 100]"),
    (dict(spectrum="identity"), "spectrum must be a non-empty sequence of (label"),
])
def test_check_method_refuses_its_own_bad_arguments(kw, message):
    """F13: montecarlo.check_method's own bad arguments were reported as the METHOD failing
    its checks (AssertionError "check_method('ftfa') failed: simulation bias [identity]: error
    = reps must be ..."); k=-1 failed every simulation row, spectrum="identity" was an
    IndexError. The command line (check-method) checked its options; the Python API did not."""
    with pytest.raises(ValueError) as info:
        montecarlo.check_method("ftfa", **kw)
    assert message in str(info.value)


@pytest.mark.parametrize("out, message", [
    (("0.1", 0.2), "bias '0.1' of dtype <U3"), ((True, 0.2), "bias True of dtype bool"),
    ((0.1 + 1j, 0.2), "bias (0.1+1j) of dtype complex128"),
    (None, "returned NoneType, expected (bias, variance)"),
    ((0.1, 0.2, 0.3), "returned tuple of 3, expected (bias, variance)"),
])
def test_a_registered_limit_returns_real_numbers(out, message):
    """F14: a method registered from Python (riskcalc.register_method, no --plugin boundary)
    whose limit returned the text "0.1" or True had them read as numbers (risk 0.3, 1.2);
    complex values and None were TypeErrors, three values "too many values to unpack"."""
    riskcalc.register_method(riskcalc.Method("fuzz36_api", "t", "r", None, True, "ref",
                                             lambda spec, route: out))
    try:
        with pytest.raises(ValueError, match=re.escape(message)):
            riskcalc.limit("fuzz36_api", gamma=2.0, r=1.0, sigma=0.5)
    finally:
        riskcalc.unregister_method("fuzz36_api")


@pytest.mark.parametrize("name, personalized, message", [
    ("fedprox", True, "the built-in alias of pfedme"),
    ("fuzz36_api", "no", "personalized must be True or False"),
])
def test_register_method_refuses_an_alias_name_and_a_non_boolean(name, personalized, message):
    """F15: register_method took the name "fedprox" (pfedme's alias: limit("fedprox") still
    ran pfedme, the registered method unreachable) and personalized="no" (read as True)."""
    method = riskcalc.Method(name, "t", "r", "lam", personalized, "ref",
                             lambda spec, route: (0.1, 0.2))
    try:
        with pytest.raises(ValueError, match=message):
            riskcalc.register_method(method)
    finally:
        riskcalc.METHODS.pop(name, None)


@pytest.mark.parametrize("field, value, message", [
    ("ridge", "no", "ridge must be True or False"),
    ("global_tuned", 1, "global_tuned must be True or False"),
    ("name", ["fuzz36_api"], "method must be one of"),
])
def test_register_estimator_flags_are_booleans(field, value, message):
    """F16: register_estimator took ridge="no" and global_tuned=1 (read by their truth), and a
    list for the name was a TypeError "unhashable type"."""
    riskcalc.register_method(riskcalc.Method("fuzz36_api", "t", "r", None, True, "ref",
                                             lambda spec, route: (0.1, 0.2)))
    args = dict(name="fuzz36_api", global_weight=lambda mu, t: mu, global_tuned=False,
                personalized=True, ridge=False, centered=True, reference="ref")
    try:
        with pytest.raises(ValueError, match=message):
            montecarlo.register_estimator(montecarlo.Estimator(**{**args, field: value}))
    finally:
        montecarlo.ESTIMATORS.pop("fuzz36_api", None)
        riskcalc.unregister_method("fuzz36_api")


def test_memory_refusal_of_many_clients_names_them():
    """F17: montecarlo.compare(clients=10**9, d=60) was refused as "--d 60 (n = 30 samples per
    client) needs about 4.02e+04 GiB ...; lower --d": the clients' designs are what is large."""
    with pytest.raises(ValueError, match=r"with 1000000000 clients needs .*lower d or clients"):
        montecarlo.compare("ftfa", gamma=2.0, r=1.0, sigma=0.5, d=60, reps=3, clients=10 ** 9)


@pytest.mark.parametrize("args, printed, want", [
    ((1e100, 1, 1, 1e100, 1, 1), False, 3.9389277113386474e+100),
    ((1e100, 1e100, 1e100, 1e-100, 1e100, 1e100), False, 3.508232077228117e+149),
    ((1, 1e-100, 1e100, 1, 1, 1), True, 3.0311288741492749e-100),
])
def test_local_case2_lambda_where_its_terms_overflow(args, printed, want):
    """F18: paper 004's minimal lambda of the local case (eqs. 73/75) summed terms past the
    floats' range: L = R = 1e100 gave NaN (inf / inf) for 3.94e100, u^2 N = inf dropped a term
    of the denominator (4.92e149 for 3.51e149; -1e-100 for 3.03e-100). Reference: mpmath, 50
    digits, the same formula."""
    assert mm.local_case2_lambda(*args, printed=printed) == pytest.approx(want, rel=1e-12)
