"""Issue 32, fuzz41 (sim2): what this fuzz found, each test failing before."""

import numpy as np
import pytest

from montecarlo.experiments.objectives import minimize
from montecarlo.experiments.objectives.losses import ClientLosses
from montecarlo.experiments.problems import quadratic_instance


def _logistic_clients(l2):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(4, 30, 3))
    y = np.where(rng.normal(size=(4, 30)) + X[..., 0] > 0, 1.0, -1.0)
    return ClientLosses(X, y, loss="logistic", l2=l2)


def test_f1_logistic_fedprox_global_model_at_small_lam():
    # F1: the logistic FedProx minimizer returned w_g = 0 from lam 1e-12 (its envelope gradient
    # lam (w_g - mean prox) under tol = 1e-10 at the start), and w_g 3.8e-9 from mean(W) at
    # lam 1e-6; both losses' w_g was 0.1-0.5 off at a subnormal lam (5e-324). Minimizing over
    # w_g gives mean(W) at any lam, and as lam -> 0 W tends to the local minimizers.
    for l2 in (0.0, 0.1):
        losses = _logistic_clients(l2)
        w_loc, W_loc = minimize(losses, "local")
        for lam in (1e-6, 1e-12, 1e-300, 5e-324):
            wg, W = minimize(losses, "fedprox", lam)
            assert np.max(abs(wg - W.mean(0))) <= 1e-10, (l2, lam)
            if lam < 1e-10:
                assert np.max(abs(wg - w_loc)) < 1e-8, (l2, lam)
    losses = quadratic_instance(m=3, d=4).train
    w_loc, _ = minimize(losses, "local")
    for lam in (1e-310, 5e-324):
        wg, W = minimize(losses, "fedprox", lam)
        assert np.max(abs(wg - w_loc)) < 1e-12 and np.max(abs(wg - W.mean(0))) < 1e-14, lam


def test_f2_bilevel_rounds_refuses_lam_past_upload_rounding():
    # F2: bilevel_rounds([1e100]) reported inf rounds (the upload lam (w_g - w_i) rounded past
    # the accuracy asked, from ~2e11 at mu = 1e-2, eps = 1e-6): refused past lam u / mu_g =
    # sqrt(eps), naming lam and the bound; a lam under it still counts.
    from montecarlo.experiments.rates_rounds import bilevel_rounds
    for lams in ([1e100], [1.0, 3e11]):
        with pytest.raises(ValueError, match=r"lams: lam = (1e\+100|3e\+11) .*lam <= 2\.25e\+10"):
            bilevel_rounds(lams, d=3)
    with pytest.raises(ValueError, match=r"eps = 1e-33 .*eps > 1\.33e-28"):
        bilevel_rounds([1.0], d=3, eps=1e-33)
    assert np.isfinite(bilevel_rounds([1e10], d=3)["simulated"]).all()


def test_f3_overflowed_model_has_no_accuracy(tmp_path, capsys):
    # F3: simulate paper000-fig1 at l2=1e100 (every model NaN) printed accuracy 0.50069 for
    # every method: NaN > 0 is False, so each test point counted as 1 - p. Now "diverged".
    from tests.helpers import run_cli
    argv = ["simulate", "paper000-fig1", "--set", "R=1", "--set", "m=3", "--set", "n=20",
            "--set", "d=5", "--set", "n_test=200", "--set", "methods=fedavg,local",
            "--set", "*.rounds=3", "--set", "local.epochs=3", "--set", "l2=1e100",
            "--no-progress", "--out", tmp_path / "o.csv"]
    code, out, _ = run_cli(argv, capsys)
    assert code == 0 and "0.5" not in out
    assert out.splitlines()[2].split()[1:] == ["diverged", "diverged"], out


def test_f4_minimizer_lam_and_tol_checked():
    # F4: minimize(losses, "fedprox", [1e-12]) was float()'s TypeError, and tol=0 Newton's
    # failure blaming 'l2 = 0 separable data' at l2 = 0.1: each is now refused by name.
    from montecarlo.experiments.objectives.minimizers import prox
    losses = _logistic_clients(0.1)
    with pytest.raises(ValueError, match="lam must be a number"):
        minimize(losses, "fedprox", [1e-12])
    with pytest.raises(ValueError, match="lam must be a number"):
        prox(losses, np.zeros((4, 3)), [1.0])
    with pytest.raises(ValueError, match=r"tol must lie in \(0, inf\), got 0"):
        minimize(losses, "fedprox", 1e-3, tol=0.0)
    with pytest.raises(ValueError, match=r"tol must lie in \(0, inf\), got 0"):
        prox(losses, np.zeros((4, 3)), 1.0, tol=0.0)


def test_f5_bilevel_fedprox_default_step_overflow_refused():
    # F5: fedprox_bilevel at lam = 5e-324 (simulate paper004-synthetic --set
    # fedprox_0.5.lam=5e-324) took global_lr = 0.5/L_g = inf, and its NaN iterates were printed
    # "diverged: ... a step size too large" for a step the user never set: refused naming lam.
    from montecarlo.experiments.algorithms import ALGORITHMS
    from montecarlo.experiments.rates_rounds import aligned_quadratic
    losses = aligned_quadratic(d=3)
    with pytest.raises(ValueError, match=r"lam = 4\.94066e-324 .*at least about 2\.78e-309"):
        ALGORITHMS["fedprox_bilevel"](losses, lam=5e-324, rounds=2)
    traj = ALGORITHMS["fedprox_bilevel"](losses, lam=3e-309, rounds=2)
    assert np.isfinite(traj.local).all()


def test_f6_bilevel_fedprox_lam_past_upload_rounding_refused():
    # F6: bilevel FedProx's upload lam (w_g - w_i), rounded at lam u, swamped the envelope
    # gradient (at most L): the run stalled from lam ~ 1e16, grew to 1e34 at 1e50 and was
    # printed "diverged" at 1e100 (paper004-synthetic --set fedprox_0.5.lam=1e100): refused
    # past L/u (9.01e15 at L = 1), naming lam; lam 1e12 still runs.
    from montecarlo.experiments.algorithms import ALGORITHMS
    from montecarlo.experiments.rates_rounds import aligned_quadratic
    losses = aligned_quadratic(d=3)
    for lam in (1e16, 1e50, 1e100):
        with pytest.raises(ValueError, match=r"lam = 1e\+\d+ .*at most L/u = 9\.01e\+15"):
            ALGORITHMS["fedprox_bilevel"](losses, lam=lam, rounds=2)
    assert np.isfinite(ALGORITHMS["fedprox_bilevel"](losses, lam=1e12, rounds=2).local).all()
