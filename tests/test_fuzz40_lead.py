"""Issue 32, fuzz40 (lead): what the lead's own reads found, each test failing before."""

import numpy as np
import pytest

import riskcalc
from riskcalc.linear.finite_clients import clients_limit

INFINITE = "the interpolation threshold, where the min-norm variance is infinite"
NO_NOISE = "is 0 with sigma = 0 (no noise)"


@pytest.mark.parametrize("method, extra", [("ftfa", {}), ("rtfa", {"lam": 0.0})])
def test_finite_m_threshold_note_follows_the_variance(method, extra):
    """F1: at gamma = 1 with no ridge penalty and sigma = 0, the finite-M limit answered
    variance 0 (no noise) with the note "the min-norm variance is infinite" (h40api's F1 fixed
    ``riskcalc.limit``'s oracle notes; ``finite_clients.notes`` kept the text)."""
    quiet = riskcalc.limit(method, gamma=1, sigma=0, r=1, clients=3, **extra)
    assert quiet.variance == 0
    assert not any(INFINITE in n for n in quiet.notes)
    assert any(NO_NOISE in n for n in quiet.notes)
    noisy = riskcalc.limit(method, gamma=1, sigma=1, r=1, clients=3, **extra)
    assert np.isinf(noisy.variance) and any(INFINITE in n for n in noisy.notes)


def test_per_client_threshold_notes_name_each_client():
    """F1, per client: client 0 (sigma 0) and client 2 (sigma 1) both at gamma 1: each named
    under what its own variance is."""
    res = clients_limit("ftfa", gamma=[1, 2, 1], sigma=[0, 1, 1], r=[1, 1, 1])
    assert res.variance[0] == 0 and np.isinf(res.variance[2])
    said = " | ".join(res.notes)
    assert "at client 2 (0-based, in the order given): the interpolation threshold, where its " \
           "min-norm variance is infinite" in said
    assert "at client 0 (0-based" in said and NO_NOISE in said


def test_one_local_step_below_the_filters_rounding_names_why(capsys):
    """F2: FedAvg with K = 1 local step under scaled:1e-20 (step_size times the top eigenvalue
    5.8e-21 on the sample spectrum's top, where 1 - (1 - eta s) rounds to 0) raised a
    ZeroDivisionError in the round map's edge scan; K >= 2 was refused by name already (the
    filter lost to rounding). Not refused up front at K = 1: gamma (0.5, 1.5) under
    scaled:1e-100 answers (test_hardening_thirteenth)."""
    from tests.helpers import run_cli

    code, out, err = run_cli(["predict", "fedavg", "--gamma", "2", "--r", "1", "--sigma",
                              "0.5", "--signal", "1", "--clients", "3", "--rounds", "1,2",
                              "--local-steps", "1", "--local-step-size", "0.1",
                              "--spectrum", "scaled:1e-20"], capsys)
    assert code == 0, err           # the server's risk answers; the local risk names why not
    assert "local risk n/a: step_size: step_size times the top eigenvalue (5.83e-21) leaves " \
           "the local filter 1 - (1 - step_size s)^K at 0 in floating point" in out, out
