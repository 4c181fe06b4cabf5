"""Issue 32, fuzz42 (maml): what this fuzz found, each test failing before."""

import re

import numpy as np
import pytest

from riskcalc import limit
from riskcalc.errors import IllConditioned, SolverError
from riskcalc.linear.finite_clients import clients_limit, pfedme_sigma
from riskcalc.linear.finite_clients.maml_sigma import maml_sigma_group_limits
from riskcalc.spectrum import Spectrum
from tests.helpers import run_cli


def test_maml_fl_near_identity_spectrum_answers_as_sigma_c_identity():
    """F2: MAML-FL at gamma [1.5, 2.7] (pooled N/d - 1 = 0.037), alpha 0.5 on
    two-point:1,1.000001,0.5 refused ("the risk's coupled pencils are ill-conditioned") where
    Sigma = I answers: the companion pencils stall at rounding near pooled N = d on Sigma = I
    itself. Eigenvalues within a relative 1e-5 are now Sigma = c I at their mean, a
    second-order change: at alpha 0.05, where the pencils answer, within 1e-11 of them."""
    fed = dict(gamma=[1.5, 2.7], r=1.0, sigma=0.5)
    res = clients_limit("maml_fl", **fed, alpha=0.5, spectrum="two-point:1,1.000001,0.5")
    same = clients_limit("maml_fl", **fed, alpha=0.5, spectrum="scaled:1.0000005")
    np.testing.assert_array_equal(res.risk, same.risk)
    assert "taken as Sigma = 1.0000005 I" in res.notes[0]
    assert res.risk == pytest.approx([35.74771135, 36.64449397], rel=1e-6)    # Sigma = I
    near = Spectrum([1.0, 1.000001], weights=[0.5, 0.5])
    merged = clients_limit("maml_fl", **fed, alpha=0.05, spectrum=near)
    b, v = maml_sigma_group_limits(np.array([1.5, 2.7]), np.ones(2), np.full(2, 0.5),
                                   np.ones(2), 0.05, "samples", near)
    np.testing.assert_allclose(merged.risk, b + v, rtol=1e-11)


def test_pfedme_digits_checked_by_a_second_rescaling():
    """F3: pFedMe at gamma 2 (10 clients), r = 0, lam 7.4944e-6 on
    two-point:0.5,1.4097e7,0.5 answered 2.5624852981 where the same formulas at 60 digits
    (mpmath) give 2.5624856352: 1.3e-7 off (the variance, own + cross + noise, cancels 500
    times; the noise chain carries 5e-10), while Sigma -> 3 Sigma moved it by 4e-9 only.
    Sigma / 3 (5.4e-8) now checks it too. The federation of the issue (lam 1e-3 on
    two-point:1,1e7,0.5) still answers: 3.2e-9 from mpmath's 2.56245945598."""
    kw = dict(gamma=2.0, r=0.0, sigma=0.5, clients=10)
    with pytest.raises(IllConditioned, match=r"pfedme under a spectrum: .*Sigma -> Sigma / 3 "
                                             r"moves them by 5.4e-08"):
        limit("pfedme", **kw, lam=7.4944201405175155e-06,
              spectrum="two-point:0.5,14097055.88523455,0.5")
    res = limit("pfedme", **kw, lam=1e-3, spectrum="two-point:1,1e7,0.5")
    assert res.risk == pytest.approx(2.5624594559821402563, rel=1e-8)


def test_pfedme_continuation_failure_names_the_span(capsys, monkeypatch):
    """F4: pFedMe at gamma 1.9487 (2 clients), lam 0.01 on two-point:0.5,S,0.5 for S from
    1e5 to 1e7 (span 2e5 to 2e7) printed only "the subordination fixed point did not converge"
    after 1-4 s (its continuation in the span failed at 1e5; S = 1e4 is refused as losing its
    digits, 1e3 answers). The refusal now names the span and what to do; the shifts' solves
    are forced to fail here (the real ones take seconds)."""
    def fails(*args, **kwargs):
        raise SolverError("pFedMe finite-clients limit: the subordination fixed point did not "
                          "converge")

    monkeypatch.setattr(pfedme_sigma, "solve_shifts", fails)
    code, out, err = run_cli(["predict", "pfedme", "--gamma", 1.9487, "--r", 1, "--sigma", 0.5,
                              "--lam", 0.01, "--clients", 2, "--spectrum",
                              "two-point:0.5,1e5,0.5"], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert re.fullmatch(r"error: pFedMe .*did not converge across the spectra's eigenvalue "
                        r"span of 2e\+05 \(continued in the span from 10000, it failed at "
                        r"1e\+04\): narrow the span\n", err)
