"""Issue 32, fuzz42 (sim): what this fuzz found, each test failing before."""

import numpy as np
import pytest

from montecarlo.experiments.algorithms import ALGORITHMS
from montecarlo.experiments.metrics import evaluate
from montecarlo.experiments.problems import paper004_instance, quadratic_instance
from tests.helpers import run_cli


def test_f1_grown_iterates_are_diverged(tmp_path, capsys):
    # F1: simulate paper004-synthetic --set l2=40 printed 3.5e283 for GlobalTrain and
    # LocalTrain (gradient steps lr = 0.1 with lr l2 = 4 > 2 grow 3x a step, finite after 300):
    # an objective past 1e3 times its start is now "diverged" (NaN metrics), every algorithm.
    argv = ["simulate", "paper004-synthetic", "--set", "R=1", "--set", "m=3", "--set", "n=20",
            "--set", "d=5", "--set", "n_test=50", "--set", "l2=40", "--set", "*.rounds=40",
            "--set", "local.epochs=40", "--set", "methods=global,local,fedprox_0.5",
            "--no-progress", "--out", tmp_path / "o.csv"]
    code, out, _ = run_cli(argv, capsys)
    assert code == 0 and out.splitlines()[2].split()[1:3] == ["diverged", "diverged"], out
    assert float(out.splitlines()[2].split()[3]) < 10 and "lr (l2 + lam) > 2" in out
    big = paper004_instance(R=[0.0, 1.0], m=3, n=20, d=5, n_test=20, l2=40.0)
    quad = quadratic_instance(m=3, d=4)
    cases = [("fedavg", big, dict(rounds=30, local_epochs=1, batch_size=None, lr=0.1)),
             ("local", big, dict(epochs=30, batch_size=None, lr=0.1)),
             ("finetune", big, dict(rounds=1, finetune_epochs=30, batch_size=None,
                                    lr=0.01, finetune_lr=0.1)),
             ("fedprox", big, dict(lam=1.0, rounds=10, batch_size=None, lr=0.1)),
             ("fedprox_bilevel", big, dict(lam=1.0, rounds=30, inner_steps=5, lr=0.1)),
             ("apgd2", quad, dict(lam=1.0, iterations=100, L=0.05))]
    for algo, data, hp in cases:
        met = evaluate(ALGORITHMS[algo](data, **hp), data, checkpoints=[0, -1])
        assert not met["diverged"][0].any() and met["diverged"][-1].all(), algo
        assert np.isnan(met["local_stat_err_mean"][-1]).all(), algo
    met = evaluate(ALGORITHMS["fedavg"](big, rounds=30, batch_size=None, lr=1e-3), big)
    assert not met["diverged"].any() and np.isfinite(met["local_stat_err_mean"]).all()


def test_f2_bilevel_rounds_rounding_bound_holds():
    # F2: the rounding bound u (lam + mu) / mu <= sqrt(eps) let through counts that failed:
    # bilevel_rounds([5.687e10], d=1, m=4, seed=2) reported inf rounds (read as Cor. 1 violated)
    # under its 9.01e10, and eps = 1e-30 at lam = 0.01 (floor 46 u at L/mu = 100). The bound
    # u (4 (lam + mu) + L) / mu <= sqrt(eps) (96 measured runs) refuses both; under it counts.
    from montecarlo.experiments.rates_rounds import bilevel_rounds
    with pytest.raises(ValueError, match=r"lam = 5\.687e\+10 .*lam <= 2\.25e\+10 at mu = 0\.01"):
        bilevel_rounds([5.687e10], d=1, m=4, seed=2)
    with pytest.raises(ValueError, match=r"eps = 1e-30 .*u \(4 \+ L/mu\) = 1\.15e-14"):
        bilevel_rounds([0.01], d=1, eps=1e-30)
    assert np.isfinite(bilevel_rounds([2.2e10], d=1, m=4, seed=2)["simulated"]).all()


def test_f3_quadratic_minimizer_tolerance_relative(tmp_path, capsys):
    # F3: the exact minimizers of the quadratic clients stopped at an absolute gradient 1e-10
    # (1e-11 at lam 0.1), under the rounding of X'y/n ~ R: paper001-fig2 was refused from
    # R ~ 1e7. The tolerance is now relative to X'y/n; the counts do not depend on R there.
    from tests.test_fuzz41_sim import _stable_fedprox
    from montecarlo.experiments.objectives import minimize
    counts = []
    for R in ("1e7", "1e50"):
        code, out, err = run_cli(["simulate", "paper001-fig2", "--set", "m=3", "--set", "d=4",
                                  "--set", f"R={R}", "--set", "lam=0.1,10", "--set",
                                  "*.iterations=300", "--no-progress", "--out",
                                  tmp_path / "q.csv"], capsys)
        assert code == 0, err
        counts.append(out.splitlines()[2:])
    assert counts[0] == counts[1]
    losses = quadratic_instance(m=3, d=4, R=1e50).train
    for lam in (1e-6, 0.1, 1e6):
        wg, W = minimize(losses, "fedprox", lam)
        ref_g, ref_W = _stable_fedprox(losses, lam)
        assert np.max(abs(W - ref_W)) < 1e-13 * np.max(abs(ref_W)), lam


def test_f4_measure_step_size_without_steps_refused():
    # F4: measure(inst, "ftfa", [0.0], step_size=0.1) measured the converged closed form,
    # the step size ignored silently (compare refuses it): now refused naming both.
    from montecarlo.linear.instances import Instance
    from montecarlo.linear.measure import measure, measure_many
    X = np.random.default_rng(0).standard_normal((40, 20))
    inst = Instance(s=np.ones(20), X=[X], r=np.ones(1), sigma=np.full(1, 0.5), a=np.ones(1) / 40,
                    u=np.zeros((1, 20)), c=np.full(20, 0.05), xi=[np.zeros(40)],
                    federated=False)
    with pytest.raises(ValueError, match=r"step_size = 0\.1 is only used with steps"):
        measure(inst, "ftfa", [0.0], step_size=0.1)
    with pytest.raises(ValueError, match="only used with steps"):
        measure_many(inst, [("ftfa", [0.0])], step_size=np.float64(0.1))
    assert np.isfinite(measure(inst, "ftfa", [0.0], steps=3, step_size=0.1)["risk"]).all()


def test_f5_quadratic_instance_condition_bounded(tmp_path, capsys):
    # F5: simulate paper001-fig2 --set mu=1e-100 (or L=1e100) was refused with "mu must be >
    # 0 ... (set l2 > 0 or pass mu)": the Hessians X'X/d lose mu to rounding from L/mu ~ 1e16,
    # and the preset has no l2. Now refused naming mu and L; mu = 1e-12 L is resolved.
    code, _, err = run_cli(["simulate", "paper001-fig2", "--set", "mu=1e-100", "--out",
                            tmp_path / "o.csv"], capsys)
    assert code == 2 and "mu must be at least 1e-12 L" in err and "l2" not in err, err
    q = quadratic_instance(m=2, d=4, mu=1e-12).train
    assert abs(q.strong_convexity().min() / 1e-12 - 1) < 1e-3


def test_f6_record_every_refused_with_a_target_count(tmp_path, capsys):
    # F6: paper001-fig2 --set apgd1.record_every=1e9 reported rounds_to_target 200 (the last
    # iterate, the only one recorded) for APGD1's 19: refused while the count is asked.
    argv = ["simulate", "paper001-fig2", "--set", "m=3", "--set", "d=4", "--set", "lam=0.1",
            "--set", "*.iterations=200", "--no-progress", "--out", tmp_path / "o.csv"]
    code, _, err = run_cli(argv + ["--set", "apgd1.record_every=1e9"], capsys)
    assert code == 2 and "apgd1.record_every = 1e+09" in err and "target=null" in err, err
    code, out, _ = run_cli(argv + ["--set", "apgd1.record_every=1"], capsys)
    assert code == 0 and out.splitlines()[2].split()[1] == "19", out


def test_f7_diverged_count_is_not_not_reached(tmp_path, capsys):
    # F7: paper001-fig2 --set apgd2.L=0.5 (steps 1/L past the true L = 1) grew to 1e59 and was
    # printed "not reached ... allow more iterations": now "diverged".
    argv = ["simulate", "paper001-fig2", "--set", "m=3", "--set", "d=4", "--set", "lam=0.1",
            "--set", "*.iterations=200", "--set", "apgd2.L=0.5", "--no-progress", "--out",
            tmp_path / "o.csv"]
    code, out, _ = run_cli(argv, capsys)
    assert code == 0 and out.splitlines()[2].split()[1:] == ["19", "diverged"], out
    assert "not reached" not in out


def test_f8_steps_refused_without_personalization(capsys):
    # F8: compare fedavg --steps 3 --step-size 0.1 answered with the note "the prediction is
    # the converged limit": the steps changed nothing (every client keeps the global model).
    # Refused now by compare and sweep (measure's batches keep sharing steps).
    from montecarlo.compare_checks import check_run
    argv = ["compare", "fedavg", "--gamma", "2", "--r", "1", "--sigma", "0.5", "--d", "20",
            "--reps", "2", "--steps", "3", "--step-size", "0.1", "--no-progress"]
    code, _, err = run_cli(argv, capsys)
    assert code == 2 and "fedavg has no personalization" in err, err
    with pytest.raises(ValueError, match="fedavg has no personalization"):
        check_run(2, "conditional", 3, 0.1, "fedavg")
    assert check_run(2, "conditional", 3, 0.1, "ftfa") == (2, 3, 0.1)


def test_f9_measure_checks_its_instance_and_requests():
    # F9: measure(None, "rtfa", [0.5]) was an AttributeError ('NoneType' object has no
    # attribute 'federated'), measure_many(inst, [("rtfa",)]) "not enough values to unpack".
    from montecarlo.linear.instances import Instance
    from montecarlo.linear.measure import measure, measure_many
    with pytest.raises(ValueError, match="inst must be a montecarlo.linear.instances.Instance"):
        measure(None, "rtfa", [0.5])
    X = np.random.default_rng(0).standard_normal((40, 20))
    inst = Instance(s=np.ones(20), X=[X], r=np.ones(1), sigma=np.full(1, 0.5), a=np.ones(1) / 40,
                    u=np.zeros((1, 20)), c=np.full(20, 0.05), xi=[np.zeros(40)],
                    federated=False)
    for bad in ([("rtfa",)], None, [("rtfa", [0.5], 1)]):
        with pytest.raises(ValueError, match=r"requests must be a sequence of \(method, "):
            measure_many(inst, bad)
    assert len(measure_many(inst, [("rtfa", [0.5]), ["ftfa", [0.0]]])) == 2


def test_f10_theorem2_inner_steps_without_overflow(tmp_path, capsys):
    # F10: simulate paper004-synthetic --set fedprox_0.5.inner_steps=null --set l2=1e-300 was
    # a traceback (OverflowError: cannot convert float infinity to integer): Thm 2's factor
    # 64 (lam/mu)^2 overflowed. In logs K = 3422 there; where it was finite K is unchanged.
    from montecarlo.experiments.algorithms.fedprox import theorem2_inner_steps
    L_g = np.array(0.5 / 1.5)
    for mu, K in ((1e-2, 36), (1e-150, 1718), (1e-300, 3422)):
        c = dict(mu=np.array(mu), mu_l=np.array(mu + 0.5), L_g=L_g)
        assert theorem2_inner_steps(c, 0.5, np.array(1 / 1.5), 0.5 / L_g) == K, mu
    argv = ["simulate", "paper004-synthetic", "--set", "R=1", "--set", "m=2", "--set", "n=10",
            "--set", "d=3", "--set", "n_test=10", "--set", "l2=1e-300", "--set", "exact=false",
            "--set", "methods=fedprox_0.5", "--set", "fedprox_0.5.inner_steps=null",
            "--set", "*.rounds=1", "--no-progress", "--out", tmp_path / "o.csv"]
    code, out, err = run_cli(argv, capsys)
    assert code == 0 and "diverged" not in out, err


def test_f11_expanding_local_steps_diverge_in_short_runs(tmp_path, capsys):
    # F11: simulate paper004-synthetic --set local.lr=5 --set l2=0.5 (lr l2 = 2.5 > 2: each
    # step expands every direction by 1.5 at least) printed 2305.9 after 5 epochs, under the
    # growth test's 1e3; so did fine-tuning and FedProx's Stage II. Now "diverged"; a step
    # just under the edge (lr l2 = 1.95) still answers.
    argv = ["simulate", "paper000-fig1", "--set", "R=1", "--set", "m=3", "--set", "n=20",
            "--set", "d=5", "--set", "n_test=50", "--set", "l2=0.5", "--set", "*.rounds=2",
            "--set", "local.epochs=2", "--set", "*.batch_size=null", "--set", "local.lr=3.9",
            "--set", "finetune.finetune_lr=5", "--set", "fedprox_4.lr=0.45", "--no-progress",
            "--out", tmp_path / "o.csv"]
    code, out, _ = run_cli(argv, capsys)
    cells = out.splitlines()[2].split()[1:]
    assert code == 0 and cells[2] == cells[5] == "diverged", out
    assert "diverged" not in cells[:2] + cells[3:5], out


def test_f12_instance_l2_checked():
    # F12: run_preset(..., {"l2": 0.1 + 0j}) and paper000_instance(l2=[0.1]) were float()'s
    # TypeError: l2 is now checked by name (one real number >= 0).
    from montecarlo.experiments.presets import resolve
    from montecarlo.experiments.problems import paper000_instance
    with pytest.raises(ValueError, match="l2 must be a real number, got .*complex"):
        resolve("paper004-synthetic", {"l2": 0.1 + 0j})
    with pytest.raises(ValueError, match="l2 must be"):
        paper000_instance(R=[0.0], m=2, n=4, d=2, n_test=2, l2=[0.1])
    assert paper004_instance(R=[0.0], m=2, n=4, d=2, n_test=2, l2=np.float32(0.5)).train.l2 == 0.5


def test_f13_compare_prints_a_huge_relative_difference_in_digits(capsys):
    # F13: compare rtfa --spectrum two-point:1e-100,1e100,0.5 --d 40 (n = 20 samples for its 20
    # large directions, a critical finite-size case) printed the bias's rel.diff as
    # +17583031645349874555397291335133167616.000%: now +1.76e+37%.
    argv = ["compare", "rtfa", "--gamma", "2", "--r", "1", "--sigma", "0.5", "--lam", "0.5",
            "--d", "40", "--reps", "3", "--spectrum", "two-point:1e-100,1e100,0.5",
            "--no-progress"]
    code, out, _ = run_cli(argv, capsys)
    bias = next(line for line in out.splitlines() if line.split()[:1] == ["bias"])
    assert code == 0 and "+1.76e+37%" in bias and len(bias) < 90, out


def test_f14_bilevel_rounds_bounds_its_work(monkeypatch):
    # F14: bilevel_rounds([0.1], d=3, L=1e10) ran for hours unannounced (Thm 2's K = 1.05e12
    # inner steps a round; killed after 120 s). Refused before any run, naming K and L/mu;
    # the algorithm is replaced here so that a run fails at once instead of taking hours.
    from montecarlo.experiments import rates_rounds

    def no_run(*args, **kwargs):
        raise AssertionError("bilevel FedProx ran before the work was checked")

    monkeypatch.setitem(rates_rounds.ALGORITHMS, "fedprox_bilevel", no_run)
    with pytest.raises(ValueError, match=r"lam = 0\.1 takes Thm 2's K = 1\.05e\+12 inner "
                                         r"steps .*lower L/mu or raise lam"):
        rates_rounds.bilevel_rounds([0.1], d=3, L=1e10)


def test_f15_evaluate_checks_its_checkpoints():
    # F15: evaluate(trajectory, instance, checkpoints=[99]) of a 6-checkpoint run was numpy's
    # IndexError; a fractional index 1.5 too. Refused naming the range; -1 stays the last.
    q = quadratic_instance(m=2, d=3)
    traj = ALGORITHMS["apgd1"](q, lam=1.0, iterations=5)
    for bad in ([99], [1.5], [-7]):
        with pytest.raises(ValueError, match=r"checkpoints must be integers in \[-6, 6\)"):
            evaluate(traj, q, checkpoints=bad)
    assert evaluate(traj, q, checkpoints=[-1])["rounds"].tolist() == [5]
