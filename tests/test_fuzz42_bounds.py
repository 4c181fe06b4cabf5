"""Issue 32, fuzz42 (bounds): what this fuzz found, each test failing before."""

import pytest

from riskcalc import minimax as mm
from tests.helpers import run_cli

_IER = ["bounds", "fedprox000_ier", "--beta", "1", "--mu", "1", "--loss_sup", "1", "--sigma2",
        "1", "--D", "1", "--R", "0.1"]


@pytest.mark.parametrize("sizes, message", [
    (["--n_i", "4", "--N", "8", "--m", "1"], "N must equal n_i when m = 1"),
    (["--n_i", "4", "--N", "7", "--m", "2"], "N must be >= n_i + (m - 1)*4*beta/mu"),
    (["--n_i", "4", "--N", "4", "--m", "4"], "got n_i=4, N=4, m=4, beta=1, mu=1"),
])
def test_fedprox000_ier_refuses_a_federation_that_cannot_exist(sizes, message, capsys):
    """F1: paper 000's FedProx IER (Thm 12) answered for one client holding n_i = 4 of N = 8
    samples alone (m = 1), and for m = 4 clients sharing N = 4 with n_i = 4: N = n_1 + ... +
    n_m (eq. 2) and every n_j >= 4 beta/mu, so N >= n_i + (m - 1) 4 beta/mu, N = n_i at
    m = 1."""
    code, out, err = run_cli(_IER + sizes, capsys)
    assert code == 2 and out == "" and message in err and len(err.splitlines()) == 1
    code, out, _ = run_cli(_IER + ["--n_i", "4", "--N", "8", "--m", "2"], capsys)
    assert code == 0 and "value=2.04099" in out
    assert mm.fedprox_ier_bound(1, 1, 1, 1, 1, 0.1, 4, 4, 1) == pytest.approx(2.7)
    with pytest.raises(ValueError, match=r"entry 1 of 2"):
        mm.fedprox_ier_bound(1, 1, 1, 1, 1, 0.1, [4, 8], [8, 16], [2, 4])
