"""Issue 32, fuzz37 (lead): what this session's lead found, each test failing before."""

import numpy as np
import pytest

from riskcalc._text import Underflow, decimal
from tests.helpers import run_cli


@pytest.mark.parametrize("text", ["1e-400", "-2.5e-330", " 0.0001e-330 "])
def test_a_nonzero_number_below_the_smallest_float_is_refused(text):
    """``decimal("1e-400")`` was 0.0: ``--lam 1e-400`` at gamma = 1 printed the ridgeless
    risk (inf)."""
    with pytest.raises(Underflow, match="below the smallest positive float"):
        decimal(text)


@pytest.mark.parametrize("text", ["0e-400", "0.000e5", "-0", "1e-320"])
def test_zero_and_subnormal_numbers_are_still_read(text):
    assert decimal(text) == float(text)


@pytest.mark.parametrize("argv, where", [
    (["predict", "rtfa", "--gamma", "1", "--lam", "1e-400", "--sigma", "1", "--r", "1"],
     "--lam: '1e-400'"),
    (["sweep", "rtfa", "--gamma", "1", "--lam", "1e-400,1", "--d", "50", "--sigma", "1",
      "--r", "1"], "--lam: '1e-400'"),
    (["predict", "rtfa", "--gamma", "1", "--lam", "1", "--sigma", "1", "--r", "1",
      "--spectrum", "two-point:1,1e-400,0.5"], "spectrum 'two-point:1,1e-400,0.5'"),
])
def test_the_command_line_names_the_option_that_underflows(argv, where, capsys):
    code, _, err = run_cli(argv, capsys)
    assert code == 2
    assert err.startswith(f"error: {where}") and "below the smallest positive float" in err


def test_simulate_rounds_refuses_a_step_size_with_the_exact_local_solve():
    """``simulate_rounds(local_steps=inf, step_size=0.1)`` simulated, dropping the step, where
    ``riskcalc.rounds_limit`` refuses it: the figure p004_fig3_theory passed its finite-K step
    with K = inf."""
    from montecarlo.linear.rounds import simulate_rounds
    with pytest.raises(ValueError, match="step_size = 0.1: local_steps=inf is the exact"):
        simulate_rounds("fedprox", gamma=[0.5, 0.5], r=[1, 1], sigma=[1, 1], signal=1,
                        rounds=[3], local_steps=np.inf, step_size=0.1, lam=1, d=20, reps=2)


def test_diverging_steps_from_a_federation_of_different_clients_overflow_to_inf():
    """``clients_steps_limit`` at a diverging step (FTFA, clients at gamma 2, 3, 0.5, step
    1.5, 200 steps): bias and variance were NaN (inf / inf), printed as the risk by ``predict
    --federation``; ``spec_clients_steps_limit`` already said inf (fuzz37 twins L1)."""
    from riskcalc.linear.steps.finite_clients import clients_steps_limit
    with np.errstate(all="raise"):
        bias, var = clients_steps_limit("ftfa", gamma=[2, 3, 0.5], sigma=[1, 1, 1],
                                        r=[1, 1, 1], steps=[1, 200], step_size=1.5)
    assert np.isfinite(bias[0]) and np.isfinite(var[0])
    assert np.isinf(bias[1]) and np.isinf(var[1])


def test_a_pinned_global_model_near_pooled_n_equal_d_says_so():
    """MAML-FL at N/d - 1 = 2.5e-7 (two clients, gamma 2.001 and 1.999): the pinned-root
    refusal blamed one client's weight dwarfing the others' (the weights are 0.5 and 0.5);
    the cause is pooled N near d (fuzzfed L1, seen with 20 clients at N/d - 1 = 1e-3)."""
    import riskcalc
    with pytest.raises(riskcalc.SolverError, match=r"pooled N is near d \(N/d - 1 = 2.5e-07"):
        riskcalc.clients_limit("maml_fl", gamma=[2.001, 1.999], r=[1, 0.5], sigma=[1, 0.3],
                               alpha=0.3)


def test_write_rows_from_python_is_atomic(tmp_path):
    """``montecarlo.sweep.write_rows`` opened the target and wrote row by row: a failure
    after the first row (here a value JSON cannot write) left the user's file half-written;
    the command line was atomic only through its own temporary file (fuzz37 out2, left)."""
    from montecarlo.sweep import write_rows
    out = tmp_path / "rows.jsonl"
    out.write_text("the previous rows\n")
    with pytest.raises(TypeError):
        write_rows([{"a": 1.0}, {"a": object()}], out)
    assert out.read_text() == "the previous rows\n"
    assert [p.name for p in tmp_path.iterdir()] == ["rows.jsonl"]     # no temporary left
    assert write_rows([{"a": 1.0}, {"a": float("inf")}], out) == "jsonl"
    assert out.read_text() == '{"a": 1.0}\n{"a": null}\n'


@pytest.mark.parametrize("spec, why", [
    ("powerlaw:-1,10", "power-law exponent p must lie in [0, inf), got -1.0"),
    ("two-point:1,-4,0.5", "spectrum eigenvalue must lie in [1e-100, 1e+100], got -4.0"),
    ("scaled:0", "spectrum eigenvalue must lie in [1e-100, 1e+100], got 0.0"),
])
def test_a_bad_spec_number_is_refused_naming_the_spec(spec, why):
    """``Spectrum.parse("powerlaw:-1,10")`` said only "power-law exponent p must lie in
    [0, inf), got -1.0": on the command line (either family) nothing named --spectrum or the
    SPEC (fuzzlogi, left)."""
    from riskcalc.spectrum import Spectrum
    with pytest.raises(ValueError) as exc:
        Spectrum.parse(spec)
    assert str(exc.value) == f"spectrum {spec!r}: {why}" + (
        " (entry 1 of 2)" if spec.startswith("two") else " (entry 0 of 1)" if "scaled" in spec
        else "")
