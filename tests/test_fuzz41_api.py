"""Issue 32, fuzz41 (api): what this fuzz found, each test failing before."""

import numpy as np
import pytest

import riskcalc
from montecarlo.compare import compare
from montecarlo.linear.instances import Setting
from montecarlo.sweep import sweep
from tests.helpers import run_cli


def test_f1_grid_pooled_refusal_names_the_point():
    """F1: ``limit('ftfa', gamma=[[2], [3]], clients=[3, 10])`` refused pooled N <= d without
    saying at which of the four points (it is gamma 3 with 3 clients)."""
    with pytest.raises(ValueError, match=r"^at gamma = 3, clients = 3: .*pooled N > d"):
        riskcalc.limit("ftfa", gamma=[[2], [3]], r=1, sigma=0.5, clients=[3, 10])


def test_f3_setting_longer_pattern_warns_and_is_cut():
    """F3: ``Setting``'s gammas (rs, sigmas, spectra) longer than the clients use were cut
    silently where the docstring said "cycled": now a warning, and the setting (its task
    description) holds what is used."""
    with pytest.warns(UserWarning, match="gammas lists 4 values where clients = 3 uses 2"):
        setting = Setting(d=20, clients=3, global_model="federated", gammas=[1, 2, 3, 4])
    assert setting.gammas == (1.0, 2.0)
    with pytest.warns(UserWarning, match="spectra lists 3 values where clients = 2 uses 2"):
        setting = Setting(d=20, clients=2, global_model="federated",
                          spectra=["identity", "scaled:2", "scaled:3"])
    assert setting.spectra == ("identity", "scaled:2")


def test_f4_one_measure_keyword_on_compare_and_sweep():
    """F4: ``montecarlo.compare(method, ...)`` took ``measure=`` where ``compare(spec,
    setting)`` and ``sweep`` took ``kind=`` (a TypeError the other way round): ``measure=``
    on all, ``kind=`` a deprecated alias."""
    spec = riskcalc.ClientSpec("rtfa", gamma=2.0, sigma=0.5, r=1.0, lam=0.5)
    with pytest.raises(ValueError, match="measure must be one of"):
        compare(spec, Setting(d=20), measure="exact")
    with pytest.raises(ValueError, match="measure must be one of"):
        sweep("rtfa", gamma=2.0, sigma=0.5, r=1.0, lam=0.5, setting=Setting(d=20),
              measure="exact")
    with pytest.warns(DeprecationWarning, match="kind= is deprecated"):
        with pytest.raises(ValueError, match="measure must be one of"):
            sweep("rtfa", gamma=2.0, sigma=0.5, r=1.0, lam=0.5, setting=Setting(d=20),
                  kind="exact")
    with pytest.raises(ValueError, match="not both"):
        compare(spec, Setting(d=20), measure="empirical", kind="empirical")


def test_f5_spectrum_text_trailing_comma_is_an_empty_field(tmp_path):
    """F5: a spectrum text file "1,2," read [1, 2] while "1,,2" and ",1,2" were refused (and
    the command line's "--gamma 2," is): one rule, a comma stands between two numbers."""
    path = tmp_path / "eig.txt"
    path.write_text("1, 2,\n4\n")
    with pytest.raises(ValueError, match="line 1: an empty field after the last comma"):
        riskcalc.Spectrum.from_file(path)


@pytest.mark.parametrize("argv", [
    ["predict", "rtfa", "--gamma", "1e400", "--r", "1", "--sigma", "0.5", "--lam", "1"],
    ["sweep", "ftfa", "--gamma", "2,1e400", "--r", "1", "--sigma", "0.5", "--d", "20",
     "--out", "never.csv"],
])
def test_f6_number_option_past_the_floats_says_what_was_typed(argv, capsys):
    """F6: ``--gamma 1e400`` said "gamma must be a finite number in [1e-100, 1e+100], got
    inf": what the parser made of it, not what was typed."""
    code, out, err = run_cli(argv, capsys)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert err.startswith("error: --gamma: '1e400' overflows: beyond the largest float"), err


def test_f7_federation_length_mismatch_is_named_before_the_count():
    """F7: ``Federation(gamma=[0.5], r=[1, 0.5], sigma=[1, 1])`` said "a federation needs at
    least two clients, got 1" where the lists' lengths differ."""
    with pytest.raises(ValueError, match="^r lists 2 clients, gamma 1$"):
        riskcalc.Federation(gamma=[0.5], r=[1, 0.5], sigma=[1, 1])
    with pytest.raises(ValueError, match="at least two clients, got 1"):
        riskcalc.Federation(gamma=[0.5], r=[1], sigma=[1])


def test_f8_federation_shares_a_number_as_clients_limit_does():
    """F8: ``Federation(gamma=[0.5, 2], r=[1, 1], sigma=0.5)`` was refused as "sigma lists 1
    clients, gamma 2" (a number is no list) where ``clients_limit`` shares it by the clients;
    gamma=0.5 beside r=[1, 0.5] said "at least two clients, got 1"."""
    fed = riskcalc.Federation(gamma=[0.5, 2.0], r=[1, 1], sigma=0.5, rho=1.5)
    assert fed.sigma.tolist() == [0.5, 0.5] and fed.rho.tolist() == [1.5, 1.5]
    assert riskcalc.Federation(gamma=0.5, r=[1, 0.5], sigma=1).gamma.tolist() == [0.5, 0.5]
    with pytest.raises(ValueError, match="^sigma lists 3 clients, r 2$"):
        riskcalc.Federation(gamma=0.5, r=[1, 0.5], sigma=[1, 1, 1])


@pytest.mark.parametrize("call, message", [
    (lambda spec: compare(spec, {"d": 20}, reps=3), "compare: setting must be a montecarlo"),
    (lambda spec: compare("rtfa", Setting(d=20), reps=3), "compare: spec must be a riskcalc"),
    (lambda spec: sweep("rtfa", gamma=2, sigma=0.5, r=1, lam=0.5, setting=None, reps=2),
     "sweep: setting must be a montecarlo"),
])
def test_f9_compare_and_sweep_name_a_setting_or_spec_of_the_wrong_type(call, message):
    """F9: ``compare(spec, {"d": 20})``, ``compare("rtfa", setting)`` and ``sweep(...,
    setting=None)`` were AttributeErrors ("'dict' object has no attribute 'd'")."""
    spec = riskcalc.ClientSpec("rtfa", gamma=2.0, sigma=0.5, r=1.0, lam=0.5)
    with pytest.raises(ValueError, match=message):
        call(spec)


@pytest.mark.parametrize("spectra, shown", [
    ([1, 2], "int 1"), (["identity", 2], "int 2"), ([None], "NoneType None"),
    ([riskcalc.Spectrum([1.0])], "Spectrum Spectrum(")])
def test_f10_setting_spectra_must_be_spec_strings(spectra, shown):
    """F10: ``Setting(spectra=[1, 2])`` read the numbers as the SPECs '1' and '2' (and None as
    'None', a Spectrum as its repr): refused later as "spectrum '1' is not one of ...", or
    "spectrum 'None' ..." where no such text was given."""
    with pytest.raises(ValueError, match=r"spectra must list SPEC strings .*got " + shown[:8]):
        Setting(d=20, clients=3, global_model="federated", spectra=spectra)


@pytest.mark.parametrize("spec", ["scaled:1e400", "two-point:1,1e999,0.5"])
def test_f11_spec_number_past_the_floats_says_what_was_typed(spec):
    """F11: ``Spectrum.parse("scaled:1e400")`` said "spectrum eigenvalue must be a finite number
    in [1e-100, 1e+100], got inf" (as --gamma 1e400 did, F6): now what was typed overflows."""
    typed = spec.split(",")[1] if "," in spec else spec.split(":")[1]
    with pytest.raises(ValueError, match=f"'{typed}' overflows: beyond the largest float"):
        riskcalc.Spectrum.parse(spec)


def test_f12_federation_simulation_runs_ftfa_steps_as_steps():
    """F12: ``montecarlo.linear.federation.simulate`` ran advise's ``ftfa_steps`` candidates
    (k_j gradient steps from the FedAvg model) as converged FTFA: its simulated risks were
    FTFA's, silently. Now k_j steps of the given size, as plain gradient descent does."""
    from montecarlo.linear.federation import candidate_models, sample_federation
    from riskcalc.advise.result import Candidate

    fed = riskcalc.Federation(gamma=[2.0, 4.0, 1.5], r=[1.0, 0.5, 1.5], sigma=0.5)
    X, _, y, _ = sample_federation(fed, 24, seed=0, rep=0)
    p = np.array([0.2, 0.3, 0.5])
    centre = candidate_models(X, y, Candidate("fedavg", {}, "given", p, np.zeros(3)))[0]
    steps, eta = [3, 0, 7], 0.05
    got = candidate_models(X, y, Candidate("ftfa_steps", {"steps": steps, "step_size": eta},
                                           "given", p, np.zeros(3)))
    for j, k in enumerate(steps):
        w = centre.copy()
        for _ in range(k):
            w -= eta * X[j].T @ (X[j] @ w - y[j]) / len(y[j])
        np.testing.assert_allclose(got[j], w, rtol=1e-9, atol=1e-12)


def test_f13_federation_simulation_refuses_a_method_it_does_not_simulate():
    """F13: ``candidate_models`` simulated any method it did not know (``local``, a plugin's)
    as FTFA from the FedAvg model, silently."""
    from montecarlo.linear.federation import candidate_models, sample_federation
    from riskcalc.advise.result import Candidate

    fed = riskcalc.Federation(gamma=[2.0, 1.5], r=1.0, sigma=0.5)
    X, _, y, _ = sample_federation(fed, 10, seed=0, rep=0)
    with pytest.raises(ValueError, match="candidate method 'local' has no simulation here"):
        candidate_models(X, y, Candidate("local", {}, "none", None, np.zeros(2)))


def test_f14_federation_simulation_checks_designs_and_counts():
    """F14: ``simulate(..., designs=...)`` without ``test`` returned NaN risks (numpy's
    warning aside), two designs of different widths or a wrong count were numpy errors, and
    reps=0 an empty array (NaN means)."""
    from montecarlo.linear.federation import simulate
    from riskcalc.advise.result import Candidate

    fed = riskcalc.Federation(gamma=[2.0, 1.5], r=1.0, sigma=0.5)
    cand = [Candidate("fedavg", {}, "samples", np.array([0.4, 0.6]), np.zeros(2))]
    rng = np.random.default_rng(0)
    designs = [rng.standard_normal((10, 5)), rng.standard_normal((8, 5))]
    with pytest.raises(ValueError, match="designs need test, .*5 x 5 or 2 of them, got none"):
        simulate(fed, cand, d=20, reps=2, designs=designs)
    with pytest.raises(ValueError, match=r"designs must be 2 finite matrices"):
        simulate(fed, cand, d=20, reps=2, designs=designs[:1], test=np.eye(5))
    with pytest.raises(ValueError, match="reps must be an integer >= 1"):
        simulate(fed, cand, d=20, reps=0)
    assert np.isfinite(simulate(fed, cand, d=20, reps=2, designs=designs, test=np.eye(5))).all()


def test_f15_sweep_grid_refusal_names_the_point():
    """F15: a sweep over gamma 2 and 5 with 3 federated clients refused pooled N <= d without
    saying at which gamma (as limit's grids, F1)."""
    setting = Setting(d=40, clients=3, global_model="federated")
    with pytest.raises(ValueError, match=r"^at gamma = 5, r = 1, sigma = 0.5, clients = 3: "):
        sweep("ftfa", gamma=[2.0, 5.0], sigma=0.5, r=1.0, setting=setting, reps=2)


def test_f16_simulations_size_powerlaw_by_their_d():
    """F16: ``montecarlo.compare(..., d=20, spectrum="powerlaw:1")`` and ``sweep`` were refused
    ("powerlaw needs the number of eigenvalues ... or give d where the call takes one"): both
    take d, and ``riskcalc compare --spectrum powerlaw:1 --d 20`` answers; now they do too,
    as powerlaw:1,20."""
    import montecarlo

    kw = dict(gamma=2.0, r=1.0, sigma=0.5, lam=0.5)
    got = montecarlo.compare("rtfa", d=20, reps=2, spectrum="powerlaw:1", **kw).limit.risk
    assert got == montecarlo.compare("rtfa", d=20, reps=2, spectrum="powerlaw:1,20",
                                     **kw).limit.risk
    row = sweep("rtfa", spectrum="powerlaw:1", setting=Setting(d=20), reps=2, progress=False,
                **kw)[0]
    assert row["predicted_risk"] == got


@pytest.mark.parametrize("options", [dict(gammas=[1.0, 2.0]), dict(weights="uniform")])
def test_f17_compare_and_sweep_refuse_a_federation_under_the_oracle(options):
    """F17: ``compare(spec, Setting(d=20, gammas=[1, 2]))`` (or weights="uniform", or a sweep
    with such a setting) ignored the other clients under the oracle global model, which
    ``montecarlo.compare(method, ..., gammas=...)`` and the command line refuse."""
    spec = riskcalc.ClientSpec("rtfa", gamma=2.0, sigma=0.5, r=1.0, lam=0.5)
    setting = Setting(d=20, **options)
    with pytest.raises(ValueError, match="apply with global_model='federated' only"):
        compare(spec, setting, reps=2)
    with pytest.raises(ValueError, match="apply with global_model='federated' only"):
        sweep("rtfa", gamma=2.0, sigma=0.5, r=1.0, lam=0.5, setting=setting, reps=2)


def test_f18_optimal_limit_names_the_entry_with_no_signal():
    """F18: ``optimal_limit("rtfa", gamma=2, r=[1, 0], ...)`` refused the whole grid as "lam* is
    infinite (signal norm 0)" without saying which entry has r = 0."""
    with pytest.raises(ValueError, match=r"signal norm 0 at entry 1 of 2\): .*use method fedavg"):
        riskcalc.optimal_limit("rtfa", gamma=2.0, r=[1.0, 0.0], sigma=0.5)


@pytest.mark.parametrize("options, message", [
    (dict(gammas=[1e-300]), r"gammas must lie in \[1e-100, 1e\+100\], got 1e-300"),
    (dict(rs=[1e200]), r"rs must lie in \[0, 1e\+100\], got 1e\+200")])
def test_f19_setting_other_clients_have_the_one_range(options, message):
    """F19: ``Setting(gammas=[1e-300])`` was taken (then refused for memory, advising "lower
    --d") and rs=[1e200] taken until the simulation's prediction refused "r" for entry 1,
    where ``clients_limit`` and ``Federation`` refuse them by their one range."""
    with pytest.raises(ValueError, match=message):
        Setting(d=20, clients=3, global_model="federated", **options)


def test_f20_memory_refusal_names_the_client_that_needs_it():
    """F20: another client's gamma 1e-12 (2e13 samples at d = 20) was refused as "--d 20 (n =
    10 samples per client) with 3 clients needs ...; lower --d or --clients": neither the
    client nor its gamma named, nor raising it advised."""
    from montecarlo.linear.instances import check_memory

    setting = Setting(d=20, clients=3, global_model="federated", gammas=[1e-12])
    with pytest.raises(ValueError, match=r"\(n = 10 samples, 20000000000000 for a client of "
                                         r"gamma 1e-12\).*raise the other clients' gamma"):
        check_memory(setting, 2.0)


def test_f21_spectrum_text_triangle_is_no_list(tmp_path):
    """F21: a spectrum text file holding a covariance's lower triangle ("1 / 0.5 1 / 0.2 0.3 1")
    was read as six eigenvalues (rows of unequal length are a list), silently; a full matrix
    is refused. Wrapped lists (rows of 4, 4, 1) and two rows stay lists."""
    path = tmp_path / "eig.txt"
    path.write_text("1\n0.5 1\n0.2 0.3 1\n")
    with pytest.raises(ValueError, match="rows of 1, 2, 3 numbers: a triangular matrix"):
        riskcalc.Spectrum.from_file(path)
    path.write_text("1 2 3 4\n5 6 7 8\n9\n")
    assert riskcalc.Spectrum.from_file(path).atoms.size == 9


@pytest.mark.parametrize("lam", [-1.0, float("nan"), [0.5, -2.0]])
def test_f22_a_negative_lam_is_told_the_one_range(lam):
    """F22: ``limit("rtfa", ..., lam=-1)`` said "lam must lie in [0, inf)", a range that holds
    1e-200 and 1e200, which the next check refuses: lam's one range is 0 or [1e-100, 1e100]."""
    with pytest.raises(ValueError, match=r"^lam must be 0 or lie in \[1e-100, 1e\+100\], got"):
        riskcalc.limit("rtfa", gamma=2.0, r=1.0, sigma=0.5, lam=lam)


def test_f23_federation_counts_its_spectra_too():
    """F23: with every number shared (F8), ``Federation(gamma=0.5, r=1, sigma=1,
    spectra=["identity", "scaled:2"])`` said "at least two clients, got 1" beside two
    clients' covariances: the spectra's length counts the clients as a list's does."""
    fed = riskcalc.Federation(gamma=0.5, r=1.0, sigma=1.0, spectra=["identity", "scaled:2"])
    assert fed.m == 2 and fed.gamma.tolist() == [0.5, 0.5]


@pytest.mark.parametrize("settings", [[], Setting(d=20), None])
def test_f24_sweep_settings_needs_a_list_of_settings(settings):
    """F24: ``sweep_settings(method, [])`` returned no rows, silently, and one Setting (not in a
    list) or None was "'Setting' object is not iterable"."""
    from montecarlo.sweep import sweep_settings

    with pytest.raises(ValueError, match="settings must be a non-empty list of Setting"):
        sweep_settings("rtfa", settings, gamma=2.0, sigma=0.5, r=1.0, lam=0.5, reps=2)


def test_f25_federation_simulation_names_a_fed_of_the_wrong_type():
    """F25: ``simulate({"gamma": [1, 2]}, ...)`` was "'dict' object has no attribute 'm'"."""
    from montecarlo.linear.federation import simulate

    with pytest.raises(ValueError, match="fed must be a riskcalc.Federation"):
        simulate({"gamma": [0.5, 2.0]}, [], d=20, reps=2)
