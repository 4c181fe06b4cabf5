"""The contour machinery of paper 004's Algorithm 1 with K local steps under a shared covariance
spectrum (derivation: ``sigma.algorithm1.curves``, steps 2-4), shared by its curves and by the
personalization from the round-T server model (``personalize``): the edges and the contour
(``contour``), the dense pencil's solve at the contour's nodes and z = 1 (``dense_solve``), the row
combinations of the sources (``dense_vectors``) and the quadrature over the rounds
(``quadrature``)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from riskcalc.errors import SolverError
from riskcalc.linear.dynamics.fedavg import round_horizon
from riskcalc.linear.dynamics.sigma.algorithm1 import circles
from riskcalc.linear.dynamics.sigma.algorithm1.pencil import _contour_nodes, spectrum_edges


#: Largest contraction of the round map (about global_step * lam) these curves answer: the
#: integrands grow as its square and the curves lose about 1e-17 contraction^2 of their value
#: to rounding (measured, two-point:1,4,0.5, gamma 0.5 and 0.7, K = 2: the own models at T = 1,
#: which do not depend on global_step, off by 3.5e-12 at contraction 921, 4.6e-10 at 9.2e3,
#: 1e-7 at 9.2e4, 1e-5 at 9.2e5 and 1e-3 at 9.2e6, silently; covariate shift, identity and
#: two-point:1,4,0.5: 1.4e-12 at 914, 8e-8 at 9.2e4, 3e-4 at 9.2e6).
CONTRACTION_MAX = 1e4


def check_contraction(rho, g, lam) -> None:
    """ValueError naming global_step where the contraction ``rho`` exceeds ``CONTRACTION_MAX``
    (this contour's and covariate shift's, ``shift.algorithm1.curves``)."""
    if rho > CONTRACTION_MAX:
        raise ValueError(f"global_step: Algorithm 1's round map diverges with contraction "
                         f"{rho:.3g} (global_step * lam = {g * lam:.3g}): beyond "
                         f"{CONTRACTION_MAX:g} its curves under a spectrum or covariate shift "
                         "lose about 1e-17 contraction^2 of their value to rounding; give a "
                         "smaller global_step (the paper's 1 / lam averages the clients' models)")


def edges_within_reach(find, g, lam):
    """``find()`` (the edge scan), its SolverError named as ``check_contraction``'s refusal
    where global_step * lam exceeds ``CONTRACTION_MAX``: the contraction is of that order
    (between g lam (1 - c^K) - 1 and 2 g lam + 1, c < 1 the local steps' contraction), and
    beyond about 1e8 the scan fails first ("the spectrum of the round map was not found on
    the scan", naming no parameter, at global_step 1e8, lam 1)."""
    try:
        return find()
    except SolverError as exc:
        if g * lam > CONTRACTION_MAX:
            raise ValueError(f"global_step: global_step * lam = {g * lam:.3g}: Algorithm 1's "
                             "round map diverges with a contraction of that order, beyond "
                             f"{CONTRACTION_MAX:g}, where its curves under a spectrum or "
                             f"covariate shift lose their digits ({exc}); give a smaller "
                             "global_step (the paper's 1 / lam averages the clients' models)"
                             ) from None
        raise


def contour(gam, p, lam, eta, K, g, rounds, spectrum, pencil):
    """The edges of the round map's spectrum (``sigma.algorithm1.pencil.spectrum_edges`` with the
    pencil class ``pencil``; where it leaves the real axis, ``circles.plan``), its contour
    (``sigma.algorithm1.curves``, step 4, or ``circles``' circle) and the rounds' horizon
    (``fedavg.round_horizon``): a dict of z, w, n (the upper nodes, weights, node count), lo,
    top, low, rho (the contraction or its bound), over, finite, t_max, ``pencil`` (the class to
    solve with: ``pencil``, or ``circles``' unchecked one on a circle), ``circle`` and ``bound``
    (the contraction is only a bound)."""
    plan = circles.plan(gam, p, lam, eta, K, g, spectrum, rounds, pencil)
    top, bottom, low = (edges_within_reach(lambda: spectrum_edges(
        gam, p, lam, eta, K, g, spectrum, pencil=pencil), g, lam)
        if plan is None else plan["edges"])
    # low < 0: a(s) < 0 somewhere, the bottom not computed; rho the bound max(top, -low).
    lo = min(0.0, low, bottom if bottom is not None else 0.0)
    rho = max(top, -lo) if plan is None else plan["contraction"]
    check_contraction(rho, g, lam)
    _, over, finite, t_max = round_horizon(rho, rounds)
    z, w, n = _contour_nodes(lo, top, rho, t_max) if plan is None else plan["nodes"](t_max)
    return {"z": z, "w": w, "n": n, "lo": lo, "top": top, "low": low, "rho": rho,
            "over": over, "finite": finite, "t_max": t_max,
            "pencil": pencil if plan is None else plan["pencil"], "circle": plan is not None,
            "bound": bool(low < 0.0 and top < -low) if plan is None else not plan["exact"]}


def dense_solve(pen, c):
    """(Chat, Ghat) of the dense pencil ``pen`` at the upper nodes of the contour ``c`` and at
    z = 1 (the fixed point: G(1) = (1 - Phi)^-1 there), or instead of z = 1 at the upper nodes
    ``c["around"]`` of the circle around it where the pooled samples do not span
    (``sigma.algorithm1.pooled``), each followed down from far above it, with the branch check
    of ``sigma.algorithm1.curves`` (step 4; none on ``circles``' circle)."""
    z, lo, low = c["z"], c["lo"], c["low"]
    zz = np.concatenate([z, c.get("around", [1.0])])
    far = 4.0 * max(1.0, -lo)
    path = list(far * np.geomspace(1.0, 1e-3 * np.min(z.imag) / far, 24)) + [0.0]
    if low < 0.0 and not c["circle"]:
        # G_00 has negative residues at negative eigenvalues there, z G_00 none (step 4):
        # the branch check on Im tau(Sigma z G_00) instead of SigmaPencil's on G_00.
        _, C, G = pen.solve(lambda y: zz + 1j * y, path, check=False)
        zg = zz * np.einsum("a,na->n", pen.h * pen.s, G[:, :, 0, 0])
        if np.any(zg.imag * np.sign(zz.imag) > 1e-10 * np.abs(zg)):
            raise SolverError(f"{pen.what}: the pencil solve left the physical branch")
        return C, G
    _, C, G = pen.solve(lambda y: zz + 1j * y, path)
    return C, G



def dense_vectors(pen, eta, lam):
    """The row combinations c_th (n,), cf_j and au_j (M, n) of ``sigma.algorithm1.curves``
    (steps 2-3) on the blocks of the dense pencil ``pen``."""
    e = np.eye(pen.n)
    c_th = -(e[0] + e[pen.state].sum(axis=0))
    cf, au = np.zeros((pen.M, pen.n)), np.zeros((pen.M, pen.n))
    for j in range(pen.M):
        cf[j, pen.chain[j]] = -eta
        au[j, pen.copy[j]] = 1.0
        au[j, pen.chain[j, :-1]] = eta * lam
        au[j, pen.chain[j, -1]] = -(1.0 - eta * lam)
    return c_th, cf, au



def quadrature(z, w, rounds, finite):
    """The contour quadrature of ``sigma.algorithm1.curves`` (step 3) on the upper nodes z (N,) with
    weights w, for every T of ``rounds`` (``finite``: T finite and not settled): a namespace of
    pw1, P1 (z^T and P_T(z) at z; T = inf and settled: 0), pw2, P2 (at z and its conjugates),
    inf and fin (T = inf or settled, and its complement, as floats), ``double(F1, c1, F2, c2,
    f)`` = (oint F1 Y1 dz1 + c1 Y(1)) against (oint F2 Y2 dz2 + c2 Y(1)) from f (N + 1, 2 N + 1)
    on (upper nodes and 1) x (upper nodes, conjugates and 1), and ``single(F, c, f)`` = oint F
    f dz + c f(1) from f (N + 1, ...) on the upper nodes and 1 (f(conj z) = conj f(z))."""
    N = z.size
    zf = np.concatenate([z, z.conj()])
    Wf = np.concatenate([w / 2j, (w / 2j).conj()])
    Tcol = np.where(finite, rounds, 0.0)[:, None]
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        def weights(x):
            power = np.where(finite[:, None], x ** Tcol, 0.0)
            return power, np.where(finite[:, None], (power - 1.0) / (x - 1.0), 0.0)

        pw1, P1 = weights(z)
        pw2, P2 = weights(zf)

    def double(F1, c1, F2, c2, f):
        two = 2.0 * np.sum(((F1 * (w / 2j)) @ f[:N, :-1]) * (F2 * Wf), axis=1).real
        mix1 = ((F1 * w) @ f[:N, -1]).imag * c2
        mix2 = ((F2 * Wf) @ f[-1, :-1]).real * c1
        return two + mix1 + mix2 + c1 * c2 * f[-1, -1].real

    def single(F, c, f):
        return ((F * w) @ f[:N]).imag + np.multiply.outer(c, f[N].real)

    return SimpleNamespace(pw1=pw1, P1=P1, pw2=pw2, P2=P2, fin=finite.astype(float),
                           inf=(~finite).astype(float), double=double, single=single)
