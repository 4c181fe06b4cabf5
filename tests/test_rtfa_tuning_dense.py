"""RTFA's per-client penalties (riskcalc.advise.tune.rtfa_lams) against a dense grid search,
and a failing client kept from spoiling the others' searches.

The federation below is the worst of 270 random (federation, weighting) pairs of a dense-grid
re-check: client 1 (r = sigma = 0, gamma < 1) made every penalty row below lam ~ 1e-7 raise
(its bias, the other clients' share through the global model, came out -8e-16 and was checked
against a scale without that share), so the rows were infinite for every client and client
3's golden-section search ended 2.5e-7 above its minimum. In the second (``TOP``), client 9's
risk decreases towards FedAvg's as lam -> infinity: the search stopped at the grid's top
(lam = 1e8), 7.4e-8 above the infimum; it now goes on to the top of LAM_RANGE."""

import numpy as np
import pytest

from riskcalc.advise import tune
from riskcalc.advise.federation import Federation
from riskcalc.errors import SolverError
from riskcalc.linear.finite_clients import clients_limit
from riskcalc.linear.finite_clients.identity import rtfa_risks

GAMMA = [0.27506760753072595, 0.08168674567058745, 18.986572819628023, 14.072628433262663]
R = [1.6833305491026231, 0.0, 1.342273110594786, 0.00940007196495187]
SIGMA = [0.0, 0.0, 0.0046540918968102, 0.13344896738997647]
WEIGHTS = [0.01442310031086997, 0.33595349249566797, 0.5671473487185311, 0.08247605847493099]
TOP = ([0.9867445238358042, 13.218946971192002, 0.34895343468234485, 0.11898858002218239,
        0.217433651293236, 2.3675587445749766, 11.725912559776228, 0.08856257740873527,
        0.07709815638188938, 0.06850491490250409, 0.050730262306419485, 0.06314178423409834],
       [1.1500475447098166, 4.906246391860968, 0.0, 0.20640717537672168, 0.0,
        2.202556764827958, 0.0, 0.0, 0.010134947065029863, 0.11667293125497845,
        0.0028940788637876955, 0.020012428247160072],
       [0.036724187296248045, 0.0, 0.008249890490228055, 0.006561032967449153,
        0.0237791129363526, 0.20694719183225457, 0.15957666611494228, 0.0,
        0.02616344116000185, 4.436560013042522, 0.24732122542203913, 0.0], "samples")


def test_tiny_penalty_is_ftfa():
    """RTFA at lam = 1e-12 against FTFA's limit (lam = 0: the ridgeless projection, another
    closed form): it raised before."""
    kw = dict(gamma=GAMMA, r=R, sigma=SIGMA, weights=WEIGHTS)
    rtfa = clients_limit("rtfa", lam=1e-12, **kw).risk
    np.testing.assert_allclose(rtfa, clients_limit("ftfa", **kw).risk, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("gamma,r,sigma,weights", [(GAMMA, R, SIGMA, WEIGHTS), TOP])
def test_tuned_penalties_beat_a_dense_grid(gamma, r, sigma, weights):
    """Each client's tuned risk against the best of 3001 penalties on [1e-6, 1e18] and FTFA
    (lam = 0), each evaluated on its own."""
    gamma, r, sigma = (np.array(v) for v in (gamma, r, sigma))
    lam, risk = tune.rtfa_lams(Federation(gamma=gamma, r=r, sigma=sigma), weights)
    p = weights if isinstance(weights, str) else np.array(weights) / np.sum(weights)
    grid = np.logspace(-6, 18, 3001)
    dense = rtfa_risks(gamma, r, sigma, p, np.tile(grid[:, None], (1, gamma.size))).min(axis=0)
    ftfa = clients_limit("ftfa", gamma=gamma, r=r, sigma=sigma, weights=weights).risk
    assert np.all(risk <= np.minimum(dense, ftfa) * (1 + 1e-12))


def test_a_failing_client_is_confined_to_itself():
    """``_entrywise``: a row that raises is split until the failing clients are alone; the
    others get their own risks, in about 2 log2(M) solves per failing client."""
    calls = []

    def rows_risks(rows):
        calls.append(1)
        if np.any(rows[:, [3, 40]] < 1e-3):
            raise SolverError("clients 3 and 40 fail below 1e-3")
        return (np.log(rows) - 1.0) ** 2

    row = np.exp(np.linspace(-2.0, 3.0, 64))
    row[[3, 40]] = 1e-4
    out = tune._entrywise(rows_risks, row, np.ones(64))
    good = np.setdiff1d(np.arange(64), [3, 40])
    assert np.all(np.isinf(out[[3, 40]]))
    np.testing.assert_allclose(out[good], (np.log(row[good]) - 1.0) ** 2, rtol=1e-15)
    assert len(calls) <= 2 + 2 * 2 * 6
    # Where the fallback penalties fail too, every client is infinite (as a failed row was).
    assert np.all(np.isinf(tune._entrywise(rows_risks, row, np.full(64, 1e-4))))
