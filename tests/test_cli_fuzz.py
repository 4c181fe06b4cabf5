"""Bad input across every verb: exit status 2, exactly one ``error:`` line, no traceback.

Each row is a command a user could type; none may start work, print a traceback or a NaN.
They run in-process through ``riskcalc.cli.main`` (fast); ``test_console_script`` runs a few
through the installed ``riskcalc`` command to cover the real entry point. Good input's output
(finite, standard JSON): tests/test_cli_json_standard.py; plugins' failures and check-method:
tests/test_cli_plugins.py.
"""

import shlex
import subprocess
import sys

import pytest

from riskcalc.cli import main


P = "predict rtfa --gamma 2 --r 1 --sigma 0.5"
C = "compare ftfa --gamma 2 --r 1 --sigma 0.5"
S = "sweep rtfa --gamma 2 --r 1 --sigma 0.5 --lam 0.1,1"
BAD = [
    # predict: ranges, types, combinations
    "predict",
    "predict nosuch --gamma 2 --sigma 1",
    "predict rtfa --gamma 2 --r 1 --lam 0.5",
    f"{P}",
    f"{P} --lam -1",
    f"{P} --lam nan",
    f"{P} --lam inf",
    f"{P} --lam 1e101",
    "predict rtfa --gamma 0 --r 1 --sigma 0.5 --lam 0.5",
    "predict rtfa --gamma -2 --r 1 --sigma 0.5 --lam 0.5",
    "predict rtfa --gamma 1e308 --r 1 --sigma 0.5 --lam 0.5",
    "predict rtfa --gamma 2 --r 1 --sigma 1e200 --lam 0.5",
    "predict rtfa --gamma 2 --r -1 --sigma 0.5 --lam 0.5",
    "predict rtfa --gamma two --r 1 --sigma 0.5 --lam 0.5",
    "predict ftfa --gamma 2 --r 1 --sigma 0.5 --lam 0.5",
    "predict local --gamma 2 --r 1 --sigma 0.5",
    "predict maml_fl --gamma 2 --r 1 --sigma 0.5",
    f"{P} --lam 0.5 --spectrum nosuch",
    f"{P} --lam 0.5 --spectrum two-point:1,4",
    f"{P} --lam 0.5 --spectrum two-point:1,4,1.5",
    f"{P} --lam 0.5 --spectrum two-point:-1,4,0.5",
    f"{P} --lam 0.5 --spectrum powerlaw:1",
    f"{P} --lam 0.5 --spectrum file:/no/such/file.npy",
    f"{P} --lam 0.5 --route fast",
    f"{P} --lam 0.5 --spectrum identity --route paper --steps 3",
    f"{P} --lam 0.5 --steps 3",
    f"{P} --lam 0.5 --step-size 0.1",
    f"{P} --lam 0.5 --steps -1 --step-size 0.1",
    f"{P} --lam 0.5 --clients 0",
    f"{P} --lam 0.5 --clients 2.5",
    f"{P} --lam 0.5 --weights samples",
    f"{P} --lam 0.5 --clients-file /no/such.json",
    f"{P} --lam 0.5 --model quadratic",
    "predict rtfa --model logistic --gamma 2 --r 1 --lam 0.5",
    "predict ftfa --model logistic --gamma 2 --signal 1 --r 1",
    "predict rtfa --model logistic --gamma 2 --signal -1 --r 1 --lam 0.5",
    "predict rtfa --model logistic --gamma 2 --signal 1 --r 1 --lam 0.5 --sigma 1",
    f"{P} --lam 0.5 --signal 1",
    # compare
    f"{C}",
    f"{C} --d 0",
    f"{C} --d -5",
    f"{C} --d 2.5",
    f"{C} --d 10000000",
    f"{C} --d 100 --reps 1",
    f"{C} --d 100 --reps 0",
    f"{C} --d 100 --seed -1",
    f"{C} --d 100 --global nowhere",
    f"{C} --d 100 --measure exact",
    f"{C} --d 100 --features cauchy",
    f"{C} --d 100 --noise cauchy",
    f"{C} --d 100 --df 3",
    f"{C} --d 100 --eigvecs skew",
    C.replace("--gamma 2", "--gamma 4") + " --d 1",
    f"{C} --d 100 --steps 3",
    f"{C} --d 100 --jobs 0",
    # sweep
    f"{S}",
    S.replace("0.1,1", "0.1,x") + " --d 40",
    S.replace("0.1,1", "0.1,,1") + " --d 40",
    S.replace("--gamma 2", "--gamma 2,-1") + " --d 40",
    f"{S} --d 40 --clients 2,3.5 --global federated",
    f"{S} --d 40 --format xml",
    f"{S} --d 40 --out /no/such/dir/x.csv",
    f"{S} --d 40 --cache /no/such/dir/c.jsonl",
    # simulate
    "simulate",
    "simulate nosuch --out x.csv",
    "simulate paper000-fig1",
    "simulate paper000-fig1 --set R=-1 --out {tmp}/x.csv",
    "simulate paper000-fig1 --set nokey --out {tmp}/x.csv",
    "simulate paper000-fig1 --set m=0 --out {tmp}/x.csv",
    "simulate paper000-fig1 --set methods=sgd --out {tmp}/x.csv",
    "simulate paper000-fig1 --reps 0 --out {tmp}/x.csv",
    "simulate paper000-fig1 --out /no/such/dir/x.csv",
    # memory needs estimated before allocating (petabytes: beyond any machine)
    "simulate paper000-fig1 --set d=20000000 --out {tmp}/x.csv",
    "simulate paper001-fig2 --set d=3000000 --out {tmp}/x.csv",
    "simulate paper004-synthetic --set d=1000000 --out {tmp}/x.csv",
    # bounds
    "bounds nosuch",
    "bounds lower_bound_aer --d 10 --N 1000",
    "bounds lower_bound_aer --d -10 --N 1000 --m 10 --R 0.5",
    "bounds lower_bound_aer --d 10 --N 1000 --m 10 --R x",
    # check
    "check --paper 999",
    "check --claim no.such.claim",
    "check --jobs 0",
    # figures
    "figures",
    "figures nosuch --out {tmp}/f",
    "figures p003-region",
    "figures --all p003-region --out {tmp}/f",
    "figures p003-region --out {tmp}/file",
    "figures p003-region --out {tmp}/f --jobs 0",
    # top level
    "",
    "nosuchverb",
]

# Issue 22. Files of every wrong shape and content ({tmp}/NAME are written by ``_files``).
FILES = ("cov.npy", "matrix.txt", "table.txt", "empty.txt", "binary.bin", "binary.npy",
         "complex.npy", "huge.txt", "zero.txt", "nan.txt", "npz.npy")
BAD += [f"{P} --lam 0.5 --spectrum file:{{tmp}}/{name}" for name in FILES]
BAD += [f"{P} --lam 0.5 --spectrum file:{{tmp}}", f"{P} --lam 0.5 --spectrum file:",
        f"{P} --lam 0.5 --spectrum two-point:1e300,1e-300,0.5",
        f"{C} --d 50 --spectrum file:{{tmp}}/cov.npy",
        # in range, but the paper route loses every digit there (it returned NaN)
        "predict rtfa --gamma 1e100 --r 1 --sigma 0 --lam 1e-100 --route paper --spectrum "
        "two-point:1e-100,1e100,0.5"]
# bounds: every parameter finite and of magnitude in [1e-100, 1e100]; outputs finite; grids
# bounded.
LOCAL_IER = "bounds local_ier --beta 1 --mu 1 --loss_sup 1 --n_i 10"
BAD += [LOCAL_IER.replace("--beta 1", f"--beta {v}") for v in ("nan", "inf", "-inf", "1e300",
                                                                "1e-300")]
BAD += ["bounds fedavg_aer --beta 1e100 --mu 1e-100 --loss_sup 1e100 --R 1e100 --N 1",
        "bounds table1_regime --R " + ",".join(map(str, range(1, 400))) + " --n "
        + ",".join(map(str, range(1, 400))) + " --m 1,2"]


# Bounded work: tasks x replicate cost estimated before any simulation (--max-minutes).
BAD += [f"{C} --d 100 --reps 1000000000", f"{C} --d 100 --reps 100000",
        f"{C} --d 100 --global federated --clients 100000",
        f"{C} --d 3000 --global federated --clients 1000", f"{C} --d 20000",
        f"{S} --d 100 --reps 100000", f"{S} --d 100 --reps 2 --max-minutes 0",
        f"{C} --d 100 --max-minutes nan", f"{C} --d 100 --max-minutes -1",
        f"{C} --d 100 --max-minutes inf", f"{C} --d 100 --jobs -3"]
# Options that do not apply to the chosen mode; empty output names.
BAD += [S.replace("--gamma 2", "--gamma 0") + " --d 40", f"{S} --d 40 --clients inf --global federated",
        f"{S} --d 40 --clients nan --global federated"]
LC = "compare rtfa --model logistic --gamma 2 --signal 1 --r 1 --lam 0.5"
BAD += [f"{LC} --d 50 --reps 1000000000", f"{LC} --d 100000 --reps 2",
        f"{LC} --d 50 --weights uniform", f"{LC} --d 50 --df 7"]
BAD += [f"{P} --lam 0.5 --d 100", f"{P} --lam 0.5 --d 100 --spectrum powerlaw:1,50"]
BAD += [f"{C} --d 100 --clients 5", f"{C} --d 100 --weights uniform",
        f"{C} --d 100 --clients-file {{tmp}}/file", f"{C} --d 100 --df 7",
        "compare local --gamma 2 --rho 1 --sigma 0.5 --d 100 --global federated",
        f"{S} --d 40 --clients 2,3", f"{S} --d 40 --out ''", f"{S} --d 40 --cache ''",
        f"{S} --d 40 --out {{tmp}}/x.csv --cache {{tmp}}/x.csv",
        "simulate paper000-fig1 --out ''", "figures p003-region --out ''"]
# Caches: a file that is not a fedrisk cache is refused, never appended to.
BAD += [f"{S} --d 40 --reps 2 --cache {{tmp}}/{name}" for name in
        ("results.csv", "binary.bin", "matrix.txt")]
BAD += [f"simulate paper000-fig1 --out {{tmp}}/x.csv --cache {{tmp}}/{name}" for name in
        ("results.csv", "binary.bin")]

# simulate: empty or overflowing grids, reduction factors, unbounded work.
SIM = "simulate paper000-fig1 --out {tmp}/x.csv"
BAD += [f"{SIM} --set {v}" for v in (
    "R=0:20:0", "R=0:20:-1", "R=[]", "R=[1e308]", "R=1e101", "R=inf", "target=-1",
    "target=0.5", "target=nan", "m=1e12", "fedavg.rounds=1e9", "fedavg.rounds=100000",
    "fedavg.lr=1e300", "=3")] + [f"{SIM} --reps {v}" for v in ("1000", "1000000000", "-1")]
BAD += [f"{SIM} --max-minutes 0", f"{SIM} --jobs 0"]

# check-method: validated tolerances, sizes and model options.
CM = "check-method ftfa"
BAD += [f"{CM} --rtol {v}" for v in ("-1", "0", "nan", "inf", "2")]
BAD += [f"{CM} --k {v}" for v in ("0", "-3", "nan", "inf")]
BAD += [f"{CM} {o}" for o in ("--reps 1", "--reps 0", "--d 0", "--d 1", "--seed -1",
                              "--lam 0.5", "--rho 1", "--gamma -1", "--gamma nan",
                              "--sigma inf", "--spectrum nosuch", "--max-minutes 0",
                              "--spectrum file:{tmp}/cov.npy", "--reps 100000000",
                              "--d 20000", "--r 1e300")]
BAD += ["check-method nosuch", "check-method local --r 1", "check-method rtfa --alpha 1"]


def _files(tmp):
    """The files of ``FILES`` (and ``file``, an empty one) in ``tmp``."""
    import numpy as np

    (tmp / "file").write_text("")
    (tmp / "results.csv").write_text("method,gamma,risk\nftfa,2,0.75\n")
    cov = 0.5 ** np.abs(np.subtract.outer(np.arange(20), np.arange(20)))
    np.save(tmp / "cov.npy", cov)
    (tmp / "matrix.txt").write_text("1 0.5\n0.5 1\n")
    (tmp / "table.txt").write_text("1,2,3\n4,5,6\n")
    (tmp / "empty.txt").write_text("")
    (tmp / "binary.bin").write_bytes(bytes(range(256)) * 4)
    (tmp / "binary.npy").write_bytes(bytes(range(256)) * 4)
    np.save(tmp / "complex.npy", np.array([1 + 1j, 2.0]))
    (tmp / "huge.txt").write_text("1e300 1e-300\n")
    (tmp / "zero.txt").write_text("0 1\n")
    (tmp / "nan.txt").write_text("nan 1\n")
    np.savez(tmp / "z.npz", a=np.ones(3))
    (tmp / "z.npz").rename(tmp / "npz.npy")


@pytest.mark.parametrize("command", BAD)
def test_bad_input_is_one_error_line(command, tmp_path, capsys):
    _files(tmp_path)
    argv = shlex.split(command.format(tmp=tmp_path))
    try:
        code = main(argv)
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    assert code == 2, (command, out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), (command, err)
    assert "Traceback" not in err and "nan" not in out.lower()


def test_table_is_large_and_covers_every_verb():
    verbs = {c.split()[0] for c in BAD if c}
    assert len(BAD) >= 60
    assert verbs >= {"predict", "compare", "sweep", "simulate", "bounds", "check", "figures"}


@pytest.mark.parametrize("command", [
    "predict rtfa --gamma 1e308 --r 1 --sigma 0.5 --lam 0.5",
    "compare ftfa --gamma 2 --r 1 --sigma 0.5 --d 10000000",
    "nosuchverb",
])
def test_console_script(command):
    proc = subprocess.run([sys.executable, "-m", "riskcalc", *command.split()],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: ") and proc.stderr.count("\n") == 1


@pytest.mark.parametrize("command", [
    "predict rtfa --model logistic --gamma 2 --signal 1e100 --r 1 --lam 0.5",
])
def test_no_warning_ahead_of_the_error_line(command):
    # numpy's RuntimeWarnings printed 8-10 lines before the error (issue 22).
    proc = subprocess.run([sys.executable, "-m", "riskcalc", *command.split()],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: ") and proc.stderr.count("\n") == 1, proc.stderr


def test_a_foreign_cache_is_left_untouched(tmp_path, capsys):
    csv_file = tmp_path / "results.csv"
    csv_file.write_text("method,gamma,risk\nftfa,2,0.75\n")
    assert main(f"{S} --d 40 --reps 2 --no-progress --cache {csv_file}".split()) == 2
    assert csv_file.read_text() == "method,gamma,risk\nftfa,2,0.75\n"


def test_jobs_beyond_the_cores_are_capped_with_a_note(capsys):
    assert main(f"{C} --d 40 --reps 2 --no-progress --jobs 100000 --json".split()) == 0
    err = capsys.readouterr().err
    assert err.startswith("note: --jobs 100000 capped at the") and err.count("\n") == 1
