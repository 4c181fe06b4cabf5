"""Issue 32, fuzz39 (logi2): what this fuzz found, each test failing before."""
import pytest


def test_pfedme_at_a_vanishing_lam_says_which_clients_are_separable():
    # F1 (h39logi's leftover a): lam = 1e-300 raised "FedProx fixed point: no convergence at
    # lam = 1e-300 (residual 2.46)" without the cause: every client's data separable, so its
    # own MLE (the lam -> 0 limit) does not exist; now the clients, why, and a lam that answers.
    from riskcalc import logistic_clients_limit

    with pytest.raises(ValueError) as err:
        logistic_clients_limit(gamma=[4, 4, 8], signal=1, r=[1, 1, 1], method="pfedme",
                               lam=1e-300, global_lam=0.1)
    text = str(err.value)
    assert "clients 0 (gamma 4 >= h = 0.399), 1 (gamma 4" in text
    assert "2 (gamma 8 >= h = 0.399): their data are separable" in text
    assert text.endswith("give a larger lam (lam = 1e-08 does)")


def test_the_separability_reason_is_kept_for_small_lam_failures():
    # F1's own follow-up: one client is "its data"; a failure at lam = 0.5 is not blamed on
    # lam -> 0 (the solver's error is kept); no candidate answering is said so.
    import numpy as np

    from riskcalc.errors import SolverError
    from riskcalc.logistic.blocks.fedprox import no_joint_root
    from riskcalc.logistic.blocks.pooled import Federation

    def fail(lam):
        raise SolverError("no")

    fed, one = Federation(np.array([2.0]), np.array([1.0]), np.array([1]), 1.0, "samples"), \
        np.array([0])
    exc = SolverError("no convergence")
    assert no_joint_root(exc, fed, one, 0.5, fail) is exc
    text = str(no_joint_root(exc, fed, one, 1e-5, fail))
    assert "client 0 (gamma 2 >= h = 0.399): its data" in text
    assert text.endswith("give a larger lam (none of lam = 0.0001, 0.01 answers)")


def test_the_logistic_tuning_holds_each_solve_to_what_is_left():
    # F2 (h39logi's leftover c): each solve kept its own 60 s, so the search overran
    # max_seconds by up to one solve: 0.3 s asked, refused after 3.5 s (its first solve under
    # two-point:1,100). Each solve now gets what is left, refused up front by its estimate.
    import time

    import riskcalc

    clock = time.perf_counter()
    with pytest.raises(ValueError, match=r"^optimal_lambda_logistic: still searching at "
                       r"max_seconds = 0\.3 \(.*; the solve at lam = 0\.001 would pass it: "
                       r".* 0 of 3 grid points"):
        riskcalc.optimal_lambda_logistic(gamma=1, signal=1, r=1, grid=3, max_seconds=0.3,
                                         spectrum=riskcalc.Spectrum([1.0, 100.0]))
    assert time.perf_counter() - clock < 1.0


def test_a_complex_lam_at_finite_clients_is_refused_naming_lam():
    # F3: logistic_clients_limit(lam=0.5+0j) (and logistic_limit(..., clients=3)) was numpy's
    # TypeError "float() argument must be a string or a real number, not 'complex'".
    import riskcalc

    with pytest.raises(ValueError, match=r"^lam must be a real number, got \(0\.5\+0j\): "
                       "complex values are refused"):
        riskcalc.logistic_limit(gamma=2, signal=1, r=1, lam=0.5 + 0j, clients=3,
                                global_lam=0.1)


@pytest.mark.parametrize("name", ["gamma", "r"])
def test_ragged_per_client_lists_are_refused_naming_the_parameter(name):
    # F4: a ragged gamma or r was numpy's "setting an array element with a sequence. The
    # requested array has an inhomogeneous shape ...", naming neither.
    import riskcalc

    kw = dict(gamma=[2, 1], r=[1, 1], signal=1, lam=0.5, global_lam=0.1)
    kw[name] = [[2, 1], [1]]
    with pytest.raises(ValueError, match=rf"^{name} must be a real number, got \[\[2, 1\], "
                       r"\[1\]\]: not a number \(or an array of numbers of one shape\)"):
        riskcalc.logistic_clients_limit(**kw)


def test_the_oracle_estimate_at_zero_norms_counts_the_solve():
    # F5 (h39logi's leftover b, its first half): oracle_seconds returned 0 at signal = r = 0,
    # where a solve still runs (0.035-0.07 s measured, lam 0.5 to 0): now the smallest rules'
    # cost, as at any tiny norm (0.118 s at lam 0.5).
    from riskcalc.logistic.work import oracle_seconds

    for lam in (0.5, 1e-8, 0.0):
        assert oracle_seconds(0.0, 0.0, lam) == oracle_seconds(0.0, 1e-300, lam) > 0.05


def test_the_replicate_task_refuses_a_federation_beyond_memory():
    # F6: pipeline.simulate_replicate(gammas=[1e-9, 2], d=4) (4e9 samples) was numpy's
    # MemoryError "Unable to allocate 119. GiB"; simulate_pipeline refused it, the task did not.
    from montecarlo.logistic import pipeline

    with pytest.raises(ValueError, match=r"^the federated logistic pipeline \(4000000002 pooled "
                       r"samples at d = 4\) needs about .* GiB per replicate"):
        pipeline.simulate_replicate(gammas=[1e-9, 2.0], rs=[0.5, 0.5], signal=0.5, lams=[2.0],
                                    global_lam=0.1, d=4, seed=0, rep=0)


@pytest.mark.parametrize("extra, why", [
    (dict(gamma=1e-9), r"^the logistic simulation at d = 6 \(n = d / gamma = 6e\+09 samples\) "
     r"needs about"),
    (dict(n_test=10**12), r"^the logistic simulation at d = 6 \(n = d / gamma = 6 samples, "
     r"1000000000000 test points\) needs about .* or lower n_test$"),
])
def test_the_ridge_task_refuses_a_replicate_beyond_memory(extra, why):
    # F7: ridge.simulate_replicate at gamma = 1e-9 (or n_test = 1e12), d = 6 was numpy's
    # MemoryError "Unable to allocate 268. GiB" (43.7 TiB); ridge.simulate refused it, the
    # task did not.
    from montecarlo.logistic import ridge

    with pytest.raises(ValueError, match=why):
        ridge.simulate_replicate(**{**dict(gamma=1.0, signal=1.0, r=0.5, lams=[1.0], d=6,
                                           seed=0, rep=0), **extra})


@pytest.mark.parametrize("task", ["ridge", "pipeline"])
def test_the_tasks_refuse_a_matrix_of_eigenvalues(task):
    # F8: eigenvalues=[[1, 2, 3], [1, 2, 3]] beside d = 6 was flattened into six eigenvalues
    # and simulated (a matrix read as a spectrum); now refused naming eigenvalues.
    from montecarlo.logistic import pipeline, ridge

    kw = dict(signal=0.5, lams=[1.0], d=6, seed=0, rep=0, eigenvalues=[[1, 2, 3], [1, 2, 3]])
    with pytest.raises(ValueError, match=r"^eigenvalues must be a 1-d list of numbers, got an "
                       r"array of shape \(2, 3\)"):
        if task == "ridge":
            ridge.simulate_replicate(gamma=1.0, r=0.5, **kw)
        else:
            pipeline.simulate_replicate(gammas=[2.0, 2.0], rs=[0.5, 0.5], global_lam=0.1, **kw)


def test_the_logistic_sweep_notes_the_simulated_ratio(capsys):
    # F9: at d = 41 the sweep simulated n = 20 and predicted at 41 / 20 = 2.05, its row still
    # reading gamma 2.0 with nothing said (the linear sweep and compare note it).
    from tests.helpers import run_cli

    code, _, err = run_cli(["sweep", "rtfa", "--model", "logistic", "--lam", "0.5", "--gamma",
                            "2", "--r", "1", "--signal", "1", "--d", "41", "--reps", "2",
                            "--no-progress"], capsys)
    assert code == 0 and err == ("note: predicted at the simulated ratio gamma = d / n = 41 / "
                                 "20 = 2.05 (gamma = 2 asked; n = max(1, round(d / gamma))); a "
                                 "d with d / gamma an integer simulates gamma itself\n")


def test_sweep_at_lam_zero_sends_to_predict_only_where_it_answers(capsys):
    # F10: sweep local_ridge --lam 0,0.5 at gamma 2 said "predict gives the lam = 0 limit",
    # which predict refuses there (gamma 2 >= h = 0.399: no MLE); now the condition is said.
    from tests.helpers import run_cli

    code, _, err = run_cli(["sweep", "local_ridge", "--model", "logistic", "--lam", "0,0.5",
                            "--gamma", "2", "--r", "1", "--signal", "1", "--d", "20", "--reps",
                            "2", "--no-progress"], capsys)
    assert code == 2 and "predict gives the lam = 0 limit where the MLE exists (gamma below " \
        "the Candes-Sur threshold h(||w_i||)" in err
    code, _, err = run_cli(["predict", "local_ridge", "--model", "logistic", "--lam", "0",
                            "--gamma", "2", "--r", "1", "--signal", "1"], capsys)
    assert code == 2 and "the MLE does not exist" in err
