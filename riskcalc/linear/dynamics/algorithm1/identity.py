"""Paper 004's Algorithm 1 with K local steps at Sigma = I (``004_98172ed3646eef14.txt``,
Appendix B.1, eqs. 10-11) for ``rounds_limit``: its own contours (``algorithm1.curves``), or
where a diverging round map needs more of them than allowed, the pencil route of a shared
spectrum at the identity (``sigma.algorithm1.curves``) (fuzz40 path F7); one client whose
samples do not span (gamma > 1) that route too where this one's edge search, built for two
clients or more, does not reach it (``algorithm1.pooled.check_one_client``; the top on the
client's range in closed form there: ``sigma.algorithm1.pooled``, step 3; fuzz42 path F1).
Where both answer they agree to 1e-10; this one affords more rounds (T = 1000, one client at
gamma 2, K = 2: the pencil route's node pairs are refused there; fuzz42 path F8)."""

from __future__ import annotations

from riskcalc.errors import SolverError
from riskcalc.linear.dynamics.algorithm1.cost import CurvesBudget


def algorithm1_identity(gam, r, sigma, p, signal, lam, eta, K, g, rounds):
    """Algorithm 1's curves with K local steps, Sigma = I (``ROUTES["pfedme_steps"]``); where
    a diverging round map (contraction > 1: global_step lam large) needs more contour work than
    allowed (``algorithm1.cost.CurvesBudget``), the pencil route of a shared spectrum at the
    identity (``sigma.algorithm1.curves``, its own guards), whose contours follow the spectrum:
    gamma (0.5, 2), lam 1, K = 2, step 0.1 at global_step 300 was refused for 5.9 GB here and
    answers there in 0.5 s (the two agree to every digit shown at global_step 3 and 30; the
    simulated server model at d = 400, T = 1 and 3, within 0.4 SE). The original refusal
    stands where that route refuses too. ``personalized_risk`` then reads that route's
    personalization (``sigma.algorithm1.personalize``; it was refused: fuzz41 path F8), within
    1.1 SE of a simulation at d = 300 (FTFA 2 steps and RTFA lam 0.5 after T = 1, 3)."""
    from riskcalc.linear.dynamics import ROUTES
    from riskcalc.linear.dynamics.algorithm1.pooled import check_one_client
    from riskcalc.linear.dynamics.sigma.algorithm1.curves import algorithm1_sigma_k_curves
    from riskcalc.spectrum import Spectrum

    if gam.size == 1 and gam[0] > 1.0:
        try:    # its own route where it covers the case (more rounds: T = 1000 there)
            check_one_client(gam[0], lam, eta, K, g)
        except ValueError:
            return algorithm1_sigma_k_curves(gam, r, sigma, p, signal, lam, eta, K, g, rounds,
                                             Spectrum([1.0], weights=[1.0]))
    try:
        return ROUTES["pfedme_steps"](gam, r, sigma, p, signal, lam, eta, K, g, rounds)
    except CurvesBudget as exc:
        if exc.rho <= 1.0:
            raise
        try:
            return algorithm1_sigma_k_curves(gam, r, sigma, p, signal, lam, eta, K, g, rounds,
                                             Spectrum([1.0], weights=[1.0]))
        except (ValueError, SolverError):
            raise exc from None
