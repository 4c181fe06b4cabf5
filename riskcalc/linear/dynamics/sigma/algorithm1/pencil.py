"""The pencil of paper 004's Algorithm 1 with K warm-started local steps under a shared
covariance spectrum, and the edges of its round map's spectrum (derivation:
``sigma.algorithm1.curves``, steps 2 and 4): ``Alg1Pencil`` (``sigma_pencil``'s deterministic
equivalent and two-point function on a pencil with a state, a copy and a chain of K blocks per
client, z on the server and state blocks), ``spectrum_edges`` (``pencil_edges.edges``' density
scans on the windows of Weyl's bounds, ``_window``).

Edges as folds (``spectrum_edges``; issues 29, 32): where a(s) >= 0 the scans refine each edge
as the fold of the real branch (``pencil_edges``, step 5), on the top window through
``reflected``. Measured (process CPU, OMP_NUM_THREADS=1, the 2-core machine loaded by other
sessions; ef9a3d5 against this, alternated A B A B): an edge within 2e-11 of the bisection's
relative to x (its distance to the window's end; 1e-12 relative to z), the refinement about 4
times cheaper (M = 3, K = 10, the chain: 5.6 s against 1.3 s); ``benchmarks/
bench_rounds_alg1_chain.py`` M = 3, K = 10, T = 20: edges 5.7, 6.1 s -> 1.4, 1.3 s (whole 6.3,
6.7 -> 2.0, 1.9 s), with g lam = 1.2 (two windows) 12.7, 12.8 -> 3.6, 3.4 s; the test files
``test_rounds_sigma_alg1chain`` 17.4, 15.4 -> 7.9, 7.0 s, ``_alg1k`` 24.7, 19.4 -> 16.4 s,
``_alg1_routes`` 15.5, 13.0 -> 12.3, 11.3 s (its second case has a(s) < 0: bisection),
``_alg1_personalize`` 15.0, 10.7 -> 10.7, 9.7 s (within the load's noise). A fold
can miss its confirmation where the edge lies within a few 1e-3 of the window's end (its
prediction agrees with the bisection to ~1e-12 in z, wider than the confirmation's delta of
5e-12 x there): that edge is bisected, about 10% dearer than the bisection alone."""

from __future__ import annotations

import numpy as np

from riskcalc.errors import SolverError
from riskcalc.linear.dynamics.fedavg import AMPLIFICATION
from riskcalc.linear.dynamics.inputs import check_step_scope
from riskcalc.linear.dynamics.sigma.fedavg.one_step import edges as sigma_edges
from riskcalc.linear.dynamics.sigma.pencil_edges import edges
from riskcalc.linear.dynamics.sigma.sigma_pencil import MAX_UNKNOWNS, SigmaPencil


class Alg1Pencil(SigmaPencil):
    """The pencil of the module docstring (step 2) for clients (gamma_j, p_j), penalty lam,
    local step eta, K steps and global step g; z = ``shift`` + ``sign`` Re x + i Im x for the
    variable x of the solves (``sign`` = -1: the real axis reflected, so that the scans of
    ``pencil_edges.edges`` meet the top edge first); ``transposed``: its transpose for
    ``two_point`` (pass Chat and Ghat transposed)."""

    what = "Algorithm 1 with local steps and a spectrum"

    def __init__(self, atoms, weights, gam, p, lam, eta, K, g, shift=0.0, sign=1.0,
                 transposed=False):
        self.s, self.h = np.asarray(atoms, float), np.asarray(weights, float)
        self.gam, self.p = np.asarray(gam, float), np.asarray(p, float)
        self.eta, self.K, self.M = float(eta), int(K), self.gam.size
        self.shift, self.sign = float(shift), float(sign)
        M, K = self.M, self.K
        if M * K * K > MAX_UNKNOWNS:
            raise ValueError(f"spectrum with local_steps = {K} and {M} clients: Algorithm 1's "
                             f"exact route solves M K^2 = {M * K * K} unknowns per contour node "
                             f"(at most {MAX_UNKNOWNS} here: its cost grows like (M K^2)^3); "
                             "give fewer local_steps or clients")
        self.n = 1 + M * (K + 2)
        self.state = 1 + (K + 2) * np.arange(M)
        self.copy = self.state + 1
        self.chain = self.state[:, None] + 2 + np.arange(K)[None, :]            # r_j
        prev = np.concatenate([self.copy[:, None], self.chain[:, :-1]], axis=1)  # c_j
        # z on the server and state blocks: ``SigmaPencil.solve``'s predictor reads them.
        self.zblocks = np.concatenate([[0], self.state])
        L0 = np.zeros((self.n, self.n))
        L0[0, 0] = g * lam - 1.0
        L0[0, self.chain[:, -1]] = -g * lam * self.p
        L0[self.state, self.chain[:, -1]] = -1.0
        L0[self.copy, self.state] = 1.0
        L0[self.copy, self.copy] = -1.0
        for j in range(M):
            L0[self.chain[j], prev[j]] = 1.0 - eta * lam
            L0[self.chain[j], 0] = eta * lam
            L0[self.chain[j], self.chain[j]] = -1.0
        self.rows, self.cols, self.L0 = ((prev, self.chain, L0.T) if transposed
                                         else (self.chain, prev, L0))

    def ghat(self, z, C):
        """Ghat(s) (N, atoms, n, n) at the nodes x = z (N,): the z of x on the blocks 0, s_j."""
        E = self.chat_blocks(C)
        L = self.L0 + self.s[None, :, None, None] * E[:, None]
        zz = self.shift + self.sign * z.real + 1j * z.imag
        L[:, :, self.zblocks, self.zblocks] += zz[:, None, None]
        return np.linalg.inv(L)

    def column0(self, G):
        """Ghat[:, 0] as ``pencil_edges.edges`` reads it (``reflected``)."""
        return reflected(self, G[..., :, 0])


def reflected(pen, col):
    """Ghat[:, 0] at x for ``pencil_edges.edges``: ``col`` as it is for ``sign`` = 1, and for
    ``sign`` = -1 -conj(col), the resolvent of the reflected map shift - Phi at x (z = shift -
    Re x + i Im x, and G(conj z) = conj G(z) for the real pencil): the same density (-Im), and
    a real part that decreases in x off the spectrum, as the real branch of ``edges``' folds
    assumes (``sigma.algorithm1.curves``, step 4). ``edges`` is its only reader."""
    return -col.conj() if pen.sign < 0.0 else col


def _window(gam, p, lam, eta, K, g, ends, negative):
    """[z_a, z_b] holding the top eigenvalue of the round map (``negative`` False: z > sup a) or
    its negative band (True: z < 0), from Weyl's bounds on Dhat_z = sum_j p_j psi_z(S_j)
    (``sigma.algorithm1.curves``, step 4): zeta(z) lies between sum_j p_j min psi_z and sum_j p_j
    max psi_z over s in ``ends[j]`` (client j's sample spectrum, from 0 when gamma_j >= 1: the
    top eigenvalue can lie below a(0), sup a being a at that bottom), and zeta minus either
    bound increases in z on both sides (psi_z decreases in z there); None when the negative
    band is empty."""
    from scipy.optimize import brentq

    s = ends[:, :1] + np.linspace(0.0, 1.0, 2001)[None, :] * (ends[:, 1:] - ends[:, :1])
    a = (1.0 - eta * (s + lam)) ** K
    lc = lam * (1.0 - a) / (s + lam)
    gl = g * lam

    def f(z, which):
        psi = lc * z / (z - a)
        return (z - 1.0 + gl) / gl - p @ (psi.max(axis=1) if which else psi.min(axis=1))

    if negative:
        lo, hi = 1.0 - gl, -1e-12 * gl
        if f(hi, 0) <= 0.0:    # zeta below every psi_z up to 0: no negative eigenvalue
            return None
    else:
        # Where a < 0 somewhere (odd K above 1 / (L + lam), g lam <= 1) psi_z need not
        # decrease, but f / z does for z > 0 (``algorithm1.rate``: lam c / (z - a) decreases
        # and (1 - (1 - g lam) / z) / (g lam) increases), so f changes sign once above 0 too.
        lo, hi = max(a.max(), 0.0) + 1e-12, max(2.0, 2.0 * gl)
    ends = [lo if f(lo, k) >= 0.0 else (hi if f(hi, k) <= 0.0 else
                                        brentq(f, lo, hi, args=(k,), xtol=1e-14))
            for k in (0, 1)]
    pad = 0.05 * (ends[1] - ends[0]) + 1e-6 * max(1.0, gl)
    return ends[0] - pad, ends[1] + pad


def spectrum_edges(gam, p, lam, eta, K, g, spectrum, pencil=Alg1Pencil, ends=None,
                   pooled_ok=False):
    """(top, bottom, low) of the round map's spectrum seen by the server block (module
    docstring, step 4), bottom None when it has no negative part or, where a(s) < 0 somewhere
    (odd K, eta (L + lam) > 1, g lam <= 1), is not computed; low = min(0, inf a) then (a lower
    bound of the spectrum, ``algorithm1.rate``), else 0; after the checks of its scope: the
    density scans of ``pencil_edges.edges`` on the windows of ``_window``, with ``pencil``'s
    solves (this dense pencil, or ``sigma.algorithm1.chain.Alg1Chain``). Where a(s) >= 0 on
    every client's support (low = 0: even K, or eta (top + lam) <= 1) Phi is similar to a
    symmetric map (``sigma.algorithm1.curves``, step 4), G_00 a compressed resolvent, so m =
    tau(Sigma G_00) is real and monotone off the spectrum (decreasing in x after ``reflected``)
    and a square-root edge is a fold of its real branch: ``edges(fold=True)`` (``pencil_edges``,
    step 5), each prediction confirmed by the density test at e -/+ delta or bisected. Odd K
    with a(s) < 0 keeps the bisection: G_00 has negative residues there, m need not be monotone
    on the way to the edge (and ``circles``' complex case keeps it too). ``ends`` (M, 2): each
    client's sample spectrum [bottom, top] if known (covariate shift: under its own covariance,
    ``shift.algorithm1.pencil.client_ends``), else under ``spectrum``. ``pooled_ok``: pooled
    samples that do not span pass the scope check (``sigma.algorithm1.pooled``, whose top is
    that of the pooled range: the null space's eigenvalue 1 is an atom, invisible to the
    density scan, step 2 there)."""
    if ends is None:    # each client's sample spectrum under H (from 0 when gamma_j >= 1)
        ends = np.array([sigma_edges(spectrum.atoms, spectrum.weights, np.array([gj]),
                                     np.array([1.0]))[:2] for gj in gam])
        ends[gam >= 1.0, 0] = 0.0
    top_j = ends[:, 1]
    L = top_j.max()
    check_step_scope(gam, L, lam, eta, K, g, "the top of the clients' sample spectra",
                     pooled_ok=pooled_ok)
    # x^K over each client's support is extreme at its ends (x = 1 - eta (s + lam) linear).
    low = min(0.0, float(np.min((1.0 - eta * (ends + lam)) ** K)))
    out = []
    for negative in (False, True):
        win = _window(gam, p, lam, eta, K, g, ends, negative) if (
            not negative or g * lam > 1.0) else None
        if win is None:
            out.append(None)
            continue
        # pencil_edges.edges scans (0, 1.01 sum_j p_j qmax_j] and refines its lowest and highest
        # points inside, refusing when the lowest scanned point is inside: here x = z - z_a
        # (negative band) or z_b - z (the top, the spectrum below z_a cut off), z_a, z_b a
        # hundredth of the window beyond its ends.
        width = 1.02 * (win[1] - win[0])
        shift = win[0] - 0.01 * width if negative else win[1] + 0.01 * width
        pen = pencil(spectrum.atoms, spectrum.weights, gam, p, lam, eta, K, g,
                     shift=shift, sign=1.0 if negative else -1.0)
        try:
            # Only a is read: the top edge is not refined (``edges(both=False)``).
            a, _, _ = edges(pen, top_j, qmax=np.full(gam.size, width / (1.01 * np.sum(p))),
                            fold=low == 0.0, both=False)
        except SolverError:
            if not negative:
                raise
            out.append(None)         # the Weyl window held no negative eigenvalue
            continue
        except ValueError as exc:
            _not_pooled_n(exc, gam, lam, eta, g)
            raise
        out.append(shift + pen.sign * a)
    top, bottom = out
    pooled = float(np.sum(np.minimum(1.0, 1.0 / gam)))
    if not top < 1.0 - 1e-9 and abs(pooled - 1.0) >= 1e-3:
        # Pooled N < d with a slow penalty (measured gamma (2, 3), eta 0.05, lam 1e-2: Sigma =
        # I's top is 1 - 6.9e-6; said "pooled N = d exactly: ... = 1"; fuzz40 scale F8).
        raise ValueError(f"lam: the round map's top came out within 1e-9 of 1 with sum_j "
                         f"min(1, 1/gamma_j) = {pooled:.4g}, off the threshold 1: the pooled "
                         "samples leave directions that only the penalty moves (step_size lam "
                         f"= {eta * lam:.3g}, global_step lam = {g * lam:.3g}), too slowly for "
                         "this route's edge scan; give a larger lam, step_size or global_step")
    if not top < 1.0 - 1e-9:
        raise ValueError("the round map's spectrum reaches 1 (pooled N = d exactly: "
                         "sum_j min(1, 1/gamma_j) = 1); move gamma off the threshold")
    return top, (bottom if bottom is not None and bottom < 0.0 else None), low


def _not_pooled_n(exc, gam, lam, eta, g) -> None:
    """Raise the scan's 'pooled N near d' refusal (``pencil_edges``: the spectrum within 1e-4
    of its top to 0) as what it is where sum_j min(1, 1/gamma_j) is off the threshold 1: small
    steps of the penalty and the server (gamma (0.5, 2), N / d = 2.5, two-point:1,2,0.5, K = 2,
    step 0.05, global_step 1: lam 3e-3 and below refused so, lam 1e-2 answers; fuzz42 path
    F10)."""
    pooled = float(np.sum(np.minimum(1.0, 1.0 / gam)))
    if "pooled N near d" in str(exc) and abs(pooled - 1.0) >= 1e-3:
        raise ValueError(f"lam: the round map's spectrum comes within 1e-4 of its top to 0 with "
                         f"sum_j min(1, 1/gamma_j) = {pooled:.4g}, off the threshold 1: "
                         f"Algorithm 1's penalty and server steps are small (step_size lam = "
                         f"{eta * lam:.3g}, global_step lam = {g * lam:.3g}) for this route's "
                         "edge scan; give a larger lam" + (", step_size or global_step" if g *
                                                           lam < 1.0 else " or step_size")
                         ) from None


def _contour_nodes(lo, hi, rho, t_max):
    """Upper-half nodes z, weights w ((1 / 2 pi i) oint f dz = sum Im(f w) for real-symmetric
    f) and the node count n of the ellipse with foci lo, hi (``sigma.algorithm1.curves``'s
    docstring, step 4): the parameter t at most 1, and below the one where abs(z)^(2 t_max)
    exceeds ``AMPLIFICATION`` times max(rho, 1)^(2 t_max) (``fedavg._contour``'s rule); n =
    max(t_max + 16, 40 / t)."""
    c0, h = 0.5 * (lo + hi), max(0.5 * (hi - lo), 1e-3 * max(abs(lo), abs(hi)))
    theta = np.linspace(0.0, np.pi, 257)
    ts = np.geomspace(1.0, 1e-4, 81)
    amp = np.abs(c0 + h * np.cosh(ts)[:, None] * np.cos(theta)
                 + 1j * h * np.sinh(ts)[:, None] * np.sin(theta)).max(axis=1)
    ok = 2 * t_max * np.log(amp / max(rho, 1.0)) <= np.log(AMPLIFICATION)
    t = ts[np.argmax(ok)] if ok.any() else ts[-1]
    n = int(max(t_max + 16, np.ceil(40.0 / t)))
    n += (-n) % 8
    theta = np.pi * (np.arange(n // 2) + 0.5) / (n // 2)
    z = c0 + h * np.cosh(t) * np.cos(theta) + 1j * h * np.sinh(t) * np.sin(theta)
    w = (-h * np.cosh(t) * np.sin(theta) + 1j * h * np.sinh(t) * np.cos(theta)) * (2.0 / n)
    return z, w, n
