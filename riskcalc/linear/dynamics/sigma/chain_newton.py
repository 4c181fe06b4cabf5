"""The Newton paths of ``sigma_chain.ChainPencil`` (its module docstring, steps 2 and 4) and of
``algorithm1.chain.Alg1Chain`` (its hooks: ``_factors``, ``_newton``, ``_dres``): the
fixed point followed along a path of nodes (``solve``) and along an arc of contour nodes
(``solve_arc``), kept apart from the pencil's factors and pair solves (``sigma_chain``) for
the length of the files; ``ChainPencil`` inherits them."""

from __future__ import annotations

import numpy as np

from riskcalc.errors import SolverError
from riskcalc.linear.dynamics.sigma.sigma_pencil import _NEWTON_ITER, _TOL

#: GMRES's tolerance within Newton's steps (inexact Newton: the residual test decides).
_NEWTON_GMRES = 1e-8
#: GMRES's tolerance for the Euler predictor (a starting point for Newton's steps).
_PREDICTOR_GMRES = 1e-3
#: ``solve_arc``: one node in this many followed down from far above, the others along the arc.
_ARC_EVERY = 32


def _keep(kept, idx, n, fac):
    """``kept`` (a dict of arrays over ``n`` nodes, allocated when None) with the factors
    ``fac`` of the nodes ``idx`` written in; an entry ``fac`` lacks (``Alg1Chain``'s
    eigenbasis where it failed) is dropped, stale at ``idx``."""
    if kept is None:
        kept = {k: np.empty((n,) + v.shape[1:], v.dtype) for k, v in fac.items()}
    kept = {k: v for k, v in kept.items() if k in fac}
    for k, v in kept.items():
        v[idx] = fac[k]
    return kept


class ArcSolves:
    """``solve`` and ``solve_arc`` for a chain pencil (``sigma_chain.ChainPencil`` and
    ``algorithm1.chain.Alg1Chain``: their ``residual``, ``_factors``, ``_newton``, ``_dres``,
    ``what`` and atoms; z = ``shift`` + ``sign`` Re x + i Im x for the solves' variable x, and
    ``zcheck``: the branch check on Im z G_00, ``sigma.algorithm1.curves``, step 4)."""

    def solve(self, nodes, path, check=True, tau0=None, tolerant=False, factors=None):
        """``SigmaPencil.solve`` with Newton-Krylov steps (``sigma_chain``, step 2); the third
        output is the dict of factors of ``ghat``. ``factors``: a list [kept, fresh] of the
        eigenbasis factors of the last Newton step at the nodes(path[0]) where ``fresh`` (kept
        a dict of arrays over the nodes, or None), which the first predictor uses, replaced
        by those at nodes(path[-1]) on return (``solve_arc``)."""
        z = nodes(path[0])
        failed = np.zeros(z.size, bool)
        tau = np.zeros((z.size, self.M, self.K, self.K), complex) if tau0 is None else tau0
        for _ in range(60 if tau0 is None else 0):      # far out: a contraction
            res, _, _ = self.residual(z, tau)
            tau = tau - res
            if np.max(np.abs(res)) <= 1e-15 * np.max(np.abs(tau)):
                break           # at the rounding floor (a few ulps of tau)
        hs = self.h * self.s
        C = None                # with G: the pencil at (z, tau) once a stage has solved there
        # The factors of each node's last Newton step at this stage (``fresh``), which serve
        # the next stage's predictor (``sigma_chain``, step 2).
        kept, fresh = (None, np.zeros(z.size, bool)) if factors is None else factors
        fresh = np.array(fresh, bool)
        for t in path:
            zn = nodes(t)
            # The path's first stage (the start itself) has no step: no predictor (it would
            # add exactly 0, after an eigendecomposition per node and client).
            if np.any(zn != z):
                if C is None:
                    _, C, G = self.residual(z, tau)
                if not fresh.all():
                    old = np.flatnonzero(~fresh)
                    kept = _keep(kept, old, z.size, self._factors(C[old], {
                        k: v[old] for k, v in G.items()}) if old.size < z.size else
                        self._factors(C, G))
                tau = tau + self._newton(kept, -self._dres(G) * (zn - z)[:, None, None, None],
                                         _PREDICTOR_GMRES)
                fresh[:] = False
            z = zn
            for it in range(_NEWTON_ITER):
                res, C, G = self.residual(z, tau)
                act = (np.max(np.abs(res), axis=(1, 2, 3)) > _TOL * (
                    1.0 + np.max(np.abs(tau), axis=(1, 2, 3)))) & ~failed
                if not act.any():
                    break
                if tolerant and it == _NEWTON_ITER - 1:
                    failed |= act
                    break
                # Exact Newton steps (chord steps every 2 or 3: more steps, the same time).
                act = np.flatnonzero(act)
                fac = self._factors(C[act], {k: v[act] for k, v in G.items()})
                tau[act] = tau[act] - self._newton(fac, res[act])
                kept = _keep(kept, act, z.size, fac)
                fresh[act] = True
            else:
                raise SolverError(f"{self.what}: Newton's method on the chain pencil did not "
                                  f"converge (t = {t:.3g})")
        if C is None:
            res, C, G = self.residual(z, tau)
        if factors is not None:
            factors[:] = [kept, fresh]
        g00 = np.einsum("a,na->n", hs, 1.0 / G["sigma"])
        zz = self.shift + self.sign * z.real + 1j * z.imag
        if self.zcheck:
            g00 = zz * g00
        if check and np.any(g00.imag * np.sign(zz.imag) > 1e-10 * np.abs(g00)):
            raise SolverError(f"{self.what}: the pencil solve left the physical branch")
        return (tau, C, G, failed) if tolerant else (tau, C, G)

    def solve_arc(self, z, ys, every=_ARC_EVERY):
        """(tau, Chat, Ghat) at the nodes z (N,) of an arc in the upper half plane, ordered
        along it: every ``every``-th node followed down from z + i ys[0] through ys (as
        ``solve``), the others continued from their neighbour on the arc (``sigma_chain``,
        step 4)."""
        N = z.size
        idx = np.arange(0, N, every)
        tau = np.empty((N, self.M, self.K, self.K), complex)
        last = [None, np.zeros(idx.size, bool)]     # the factors at the last nodes solved
        tau[idx] = self.solve(lambda y: z[idx] + 1j * y, list(ys), factors=last)[0]
        for o in range(1, every):
            nxt = idx + o
            nxt = nxt[nxt < N]
            if nxt.size == 0:
                break
            z0, z1 = z[nxt - 1], z[nxt]
            n = nxt.size        # the neighbours nxt - 1 are the first n nodes solved last
            last[:] = [None if last[0] is None else {k: v[:n] for k, v in last[0].items()},
                       last[1][:n]]
            tau[nxt] = self.solve(lambda t: z0 + t * (z1 - z0), [0.0, 1.0],
                                  tau0=tau[nxt - 1], factors=last)[0]
        return self.solve(lambda t: z, [0.0], tau0=tau)
