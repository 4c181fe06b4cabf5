"""Covariate shift along the rounds: each client's covariance for ``simulate_rounds``.

Client j's rows are N(0, Sigma_j), the Sigma_j diagonal in one shared basis (DESIGN.md, third
round, covariate shift): X_j = Z_j diag(sqrt(s_j)) with s_j the d eigenvalues of client j's
SPEC in the order of the shared basis (``riskcalc.spectrum.ordered_eigenvalues``: the step
function of ``ordered_steps`` at (k - 1/2) / d, the convention ``montecarlo.linear.federation``
uses at finite M and the one whose joint measure ``riskcalc.linear.engine.joint_spectrum``
integrates, so ``two-point:1,4,0.5`` against ``two-point:4,1,0.5`` is anti-aligned in both).
Client i's risk is E[(w - theta_i)^T Sigma_i (w - theta_i)]; theta_0 and u_j keep their uniform
directions in the shared basis.

FedAvg's closed form given the designs (``montecarlo.linear.rounds_fedavg``) still applies: the
round map acts on the designs only (S_j = X_j^T X_j / n_j, whatever Sigma_j made them), and
Sigma enters the risks only as the metric, so client i's risks are the same traces with
Sigma_i in place of Sigma (one more W^T Sigma_t W, 2 d^3 flops, per distinct covariance). It is
exact given the designs for any K. Paper 004's Algorithm 1 (``004_98172ed3646eef14.txt``,
eqs. 10-11) likewise: its closed form for K = inf (the same module, local filter mu / (mu +
lam)) and its column propagation for finite K (``montecarlo.linear.rounds_propagate``: every
local step is a polynomial in S_j, the columns' errors measured in client j's Sigma_j) act on
the designs; both measures (conditional, empirical) apply unchanged.

Cost: as a shared non-identity spectrum's, so ``rounds.replicate_seconds`` (which does not tell
covariances apart) is the estimate for ``--max-minutes``. Measured process CPU per replicate,
10 clients, 11 rounds asked, OMP 1, a loaded 2-core machine: at d = 800, 1.59 s (identity),
2.13 s (a shared two-point spectrum), 2.16 s (shift, two anti-aligned types), 2.34 s (shift,
10 types), against the estimate 1.75 s; at d = 400, 0.32 / 0.34 / 0.37 / 0.40 s against 0.23 s.
"""

from __future__ import annotations

import numpy as np

from riskcalc.spectrum import ordered_eigenvalues


def shift_eigenvalues(spectra, spectrum, gamma, d: int) -> np.ndarray:
    """(M, d): row j the eigenvalues of client j's covariance in the shared basis.

    ``spectra`` as ``riskcalc.rounds_limit`` takes it (a SPEC, or one SPEC or eigenvalue list
    per client, or one eigenvalue list shared: ``riskcalc.linear.engine.joint_spectrum.
    spectra_joint``, whose checks it runs). ValueError for ``spectrum`` given too or a
    malformed ``spectra``.
    """
    from riskcalc.linear.engine.joint_spectrum import spectra_joint

    _, _, specs = spectra_joint(spectra, spectrum, gamma, d)
    m = np.size(gamma)
    rows = [ordered_eigenvalues(spec, d) for spec in specs]
    return np.array(rows * m if len(rows) == 1 else rows)
