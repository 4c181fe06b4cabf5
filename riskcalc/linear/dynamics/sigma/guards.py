"""Checks before and after the pencil routes under a covariance spectrum (``sigma.fedavg.curves``:
FedAvg with K >= 2 local steps; ``prox_sigma``: Algorithm 1 with exact prox) and the refusals
of the spectrum routes said in terms of the user's inputs (issue 32, fifth hardening pass).

Derived here: the bottom a_D of the round map D = sum_j p_j q(S_j)'s nonzero spectrum is at most
K eta a_A (FedAvg: q(s) = 1 - (1 - eta s)^K <= K eta s by Bernoulli's inequality for eta s <= 2,
the stable local steps) or a_A / lam (Algorithm 1: q(s) = s / (s + lam) <= s / lam), with a_A the
bottom of A = sum_j p_j S_j's nonzero spectrum (``sigma.fedavg.one_step.edges``, explicit in any range):
q(S_j) <= c S_j in the Loewner order puts the sorted eigenvalues of D below those of c A, and D
and A share their null space (the atom at 0). ``pencil_edges.edges`` scans only from
``PENCIL_REACH`` of its upper bound up, so a round map reaching lower would lose a band of its
spectrum from the contour: refused before solving when the bound is below the scan, and after
the scan when it found D's bottom above the bound.
"""

from __future__ import annotations

from contextlib import contextmanager

import numpy as np

from riskcalc.errors import SolverError
from riskcalc.linear.dynamics.sigma.budget import MORE_MEMORY, MORE_TIME, allowed, allowed_bytes


@contextmanager
def spectrum_cause(gam, eigenvalues, shift=False):
    """A refusal of the spectrum routes that blames pooled N near d (the round map's spectrum
    near 0) where sum_j 1/gamma_j (pooled N / d) is 1e-3 or more off 1: the cause is then the
    covariance's range of ``eigenvalues`` (the shared spectrum's atoms, or with ``shift`` every
    client covariance's eigenvalues on the joint atoms; None: Sigma = I) (measured: atoms
    (0.01, 1), gamma (0.5, 2), K = 3; under shift two-point:1e-8,1e8 at N / d = 2.5), said so."""
    try:
        yield
    except ValueError as exc:
        inv = float(np.sum(1.0 / gam))
        lo, hi = (1.0, 1.0) if eigenvalues is None else (np.min(eigenvalues),
                                                          np.max(eigenvalues))
        if hi < 10.0 * lo or "pooled N" not in str(exc) or abs(inv - 1.0) < 1e-3:
            raise
        whose, give = (("the covariances'", "covariances") if shift else
                       ("the covariance spectrum's", "a spectrum"))
        raise ValueError(f"{exc}; here sum_j 1/gamma_j = N / d = {inv:.4g}, off that threshold: "
                         f"{whose} eigenvalues ({lo:.3g}..{hi:.3g}, ratio {hi / lo:.2g}) bring "
                         f"the round map's spectrum near 0; give {give} of a narrower "
                         "range") from None


#: The pencil routes (FedAvg K >= 2, Algorithm 1 with exact prox, under a spectrum) look for the
#: round map's spectrum from this share of its upper bound up (``pencil_edges.edges``'s scan).
PENCIL_REACH = 1e-4


def _pencil_reach(spectrum, gam, p, qmax, bound):
    """ValueError when the round map's spectrum under ``spectrum`` reaches below what the
    pencil routes' edge scan sees (``PENCIL_REACH`` of sum_j p_j ``qmax``_j): that band would be
    left out of the contour, silently (measured: FedAvg K = 3, eta 0.1, gamma (0.5, 2), atoms
    (1e-4, 1): contraction 0.913 and fixed-point risk 0.079 where d = 400 gives 0.99999 and 0.197).
    ``bound(a)`` is an upper bound on the bottom of D's nonzero spectrum from that of A =
    sum_j p_j S_j (q(s) <= K eta s for stable local steps, s / (s + lam) <= s / lam); A's
    edges by ``sigma.fedavg.one_step.edges`` (explicit, any range). Returns A's bottom edge."""
    from riskcalc.linear.dynamics.sigma.fedavg.one_step import edges

    try:
        a = edges(spectrum.atoms, spectrum.weights, gam, p)[0]
    except SolverError:        # the route itself says why
        return None
    floor = PENCIL_REACH * 1.01 * float(np.sum(p * qmax))
    if a > 0 and bound(a) < floor:
        lo, hi = spectrum.atoms[[0, -1]]
        inv = float(np.sum(1.0 / np.asarray(gam, dtype=float)))
        # As ``spectrum_cause``: a narrow spectrum, or pooled N within 1e-3 of d, puts the
        # cause at the threshold (gamma (2.001, 2.001) under atoms 1, 1.01 said "narrower").
        name, give = (("gamma", f"the pooled N / d = sum_j 1/gamma_j = {inv:.6g} is near 1: "
                                "move gamma off that threshold")
                      if hi < 10.0 * lo or abs(inv - 1.0) < 1e-3 else
                      ("spectrum", "give a spectrum of a narrower range"))
        raise ValueError(f"{name}: the round map's spectrum reaches down to at most "
                         f"{bound(a) / floor * PENCIL_REACH:.2g} of its top (the covariance "
                         f"spectrum's eigenvalues span {lo:.3g}..{hi:.3g}, ratio {hi / lo:.2g}), "
                         f"below the {PENCIL_REACH:g} this route resolves (its contour would "
                         f"leave that part out); {give}")
    return a


def _stable_top(spectrum, gam):
    """Each client's sample spectrum top under ``spectrum`` (one edge solve per distinct
    gamma_j: M = 100 identical clients took 30 s as one per client)."""
    from riskcalc.linear.dynamics.sigma.sigma_pencil import stable_top

    values, where = np.unique(gam, return_inverse=True)
    return stable_top(spectrum.atoms, spectrum.weights, values)[where]


#: Most unknowns M K^2 solved by FedAvg's dense route (``sigma_pencil``); beyond,
#: ``sigma_chain`` (measured, ``benchmarks/bench_rounds_sigma_k_scaling.py --cost``: dense faster
#: at M K^2 = 75, the chain at 192 (50 s against 82 s for a whole curve) and 300). Read by
#: ``sigma.fedavg.curves``; defined here, where the guards read them (curves imports own, which
#: imports these guards: no import circle).
DENSE_UNKNOWNS = 100
#: Most node pairs of FedAvg's double contour (``sigma.fedavg.curves``).
MAX_PAIRS = 2e5
#: Most seconds the pencil routes under a spectrum may be estimated to take (``pencil_work``) by
#: default (``budget``: rounds_limit's max_seconds).
MAX_PENCIL_SECONDS = 120.0


def dense_k_seconds(M: int, K: int, atoms: int, nodes: int) -> float:
    """Estimated process seconds of FedAvg's dense pencil with K local steps
    (``sigma_pencil``, n = 1 + M K blocks, u = M K^2 unknowns) on an N-node contour: the upper
    half's nodes and about 400 solves of the edges (10 points per bracket) at 4e-3 + a (7.2e-6
    n^2 + 5.3e-8 n^3) + 3.4e-8 u^3 s each (a path of 25 stages), and N / 2 x N pairs at 1e-5 +
    7.6e-8 a n^2 + 2.1e-10 u^3 s each; each part fitted to samples (M, K, atoms) = (3, 2, 2) ..
    (20, 2, 5), (10, 2, 50) (``benchmarks/bench_rounds_sigma_k_scaling.py --cost``, process CPU,
    OMP 1, a loaded machine) and raised by the largest ratio measured / fitted (1.19 and 2.6:
    not optimistic on any sample)."""
    n, u = 1.0 + M * K, float(M * K * K)
    per_node = 1.19 * (3.9e-3 + atoms * (7.2e-6 * n ** 2 + 5.3e-8 * n ** 3) + 3.4e-8 * u ** 3)
    per_pair = 2.6 * (1.0e-5 + 7.6e-8 * atoms * n ** 2 + 2.1e-10 * u ** 3)
    return per_node * (nodes // 2 + 400) + per_pair * (nodes // 2) * nodes


def own_work(M: int, K: int, atoms: int, nodes: int) -> None:
    """ValueError before FedAvg's own models under a spectrum (``sigma.fedavg.own``) when their
    work is estimated beyond the limit: the extended pencil is FedAvg's with K + 1 blocks per
    client, on the curves' contour of ``nodes`` nodes, so 0.3 ``dense_k_seconds(M, K + 1,
    atoms, nodes)`` (measured 0.10-0.29 x that: M = 1-3, K = 2-5, T = 10-50, powerlaw:1 at
    d = 30 and two-point spectra, 120-464 nodes; process CPU, OMP 1, a loaded machine). They
    were not estimated: as long again as the curves, after them, with no word before."""
    seconds = 0.3 * dense_k_seconds(M, K + 1, atoms, nodes)
    limit = allowed(MAX_PENCIL_SECONDS)
    if seconds > limit:
        raise ValueError(f"spectrum: the clients' own models ({atoms} atoms x {nodes} contour "
                         f"nodes, {M} client(s), K = {K}) would take {seconds / 60:.2g} min "
                         f"(estimated; at most {limit / 60:.3g} min here); give fewer atoms, "
                         f"clients, local_steps or rounds, {MORE_TIME}")


def pencil_work(spectrum, blocks: int, rounds, unknowns: int = 0, clients: int = 0) -> None:
    """ValueError before a pencil route whose work is estimated beyond ``MAX_PENCIL_SECONDS``,
    with 2 max(T) + 16 contour nodes, the fewest ``fedavg._contour`` takes (more near
    contraction 1). FedAvg's K local steps (``unknowns`` = M K^2 > 0, ``clients`` = M):
    ``dense_k_seconds``, which counts the edges and the node pairs (the earlier estimate,
    atoms x nodes x (3e-5 n^2 + 3e-6 n^3 + 3e-8 u^3), counted neither: measured M = 4, K = 5,
    rounds up to 100: 26 s against 31 s, but rounds up to 200 beyond it). Otherwise (Algorithm
    1's exact prox, a pencil of n blocks): atoms x nodes x (3e-5 n^2 + 3e-6 n^3) s, fitted to
    process CPU times, OMP 1, M = 2, 5, 10, 30 and 2..200 atoms (1000 atoms took 41 s; 10^5 ran
    past minutes unrefused)."""
    top = rounds[np.isfinite(rounds)].max(initial=0.0)
    nodes = 2.0 * min(top, 1e6) + 16.0
    if unknowns > 0:
        # The route never solves more than MAX_PAIRS pairs (refused beyond; overflowing rounds
        # cap the horizon): its node count stays below sqrt(2 MAX_PAIRS).
        seconds = dense_k_seconds(clients, (blocks - 1) // clients, spectrum.atoms.size,
                                  int(min(nodes, np.sqrt(2.0 * MAX_PAIRS))))
    else:
        seconds = spectrum.atoms.size * nodes * (3e-5 * blocks ** 2 + 3e-6 * blocks ** 3)
    limit = allowed(MAX_PENCIL_SECONDS)
    if seconds > limit:
        raise ValueError(f"spectrum: {spectrum.atoms.size} atoms x at least {nodes:.0f} contour "
                         f"nodes x a pencil of {blocks} blocks would take {seconds / 60:.2g} min "
                         f"or more (estimated; at most {limit / 60:.3g} min here); give fewer "
                         f"atoms (a histogram of the eigenvalues), clients or rounds, {MORE_TIME}")


def one_step_work(spectrum, rounds) -> None:
    """ValueError before FedAvg's one-local-step route under a spectrum (``sigma.fedavg.
    one_step`` and the own models' pencil) when its time or peak memory, both linear in the
    atoms, is estimated beyond ``MAX_PENCIL_SECONDS`` or ``budget.allowed_bytes``: per atom
    1.5e-4 + 1e-6 N seconds and 7e3 + 16 N bytes on N = 2 max(T) + 16 contour nodes, fitted to
    process CPU and peak resident memory at M = 2, 3e3..1e5 atoms, T = 5 and 200 (OMP 1, a
    loaded machine). It was not estimated: 1e5 atoms took 27 s of CPU at T = 50 and 1e6 asked
    24 GiB at once (a MemoryError traceback, --max-memory unheeded)."""
    top = rounds[np.isfinite(rounds)].max(initial=0.0)
    nodes = 2.0 * min(top, 1e6) + 16.0
    atoms = spectrum.atoms.size
    per_second, per_byte = 1.5e-4 + 1e-6 * nodes, 7e3 + 16.0 * nodes
    limit, room = allowed(MAX_PENCIL_SECONDS), allowed_bytes()
    if atoms * per_second > limit or atoms * per_byte > room:
        fit = int(min(limit / per_second, room / per_byte))
        # (was "give at most 0 atoms" where not one fits: max_gigabytes=1e-9; fuzz42 path F7)
        least = min(limit / (1.5e-4 + 16e-6), room / (7e3 + 256.0)) >= 1.0    # one atom, T = 0
        fix = (f"give at most {fit} atoms (a histogram of the eigenvalues) or fewer rounds, "
               if fit >= 1 else "give fewer rounds, " if least else
               "not one atom fits at any T: " + MORE_TIME[3:] + ", ")
        raise ValueError(f"spectrum: {atoms} atoms with one local step up to T = {top:.0f} would "
                         f"take about {atoms * per_second / 60:.2g} min and "
                         f"{atoms * per_byte / 1e9:.3g} GB (estimated; at most {limit / 60:.3g} "
                         f"min and {room / 1e9:.3g} GB here); {fix}"
                         + ("" if fit < 1 and not least else MORE_TIME + ", ") + MORE_MEMORY)


def pencil_guard(spectrum, gam, p, rounds, eta=None, K=None, lam=None):
    """(a, bound) for ``found_reach`` after ``_pencil_reach``'s check before the pencil
    routes: FedAvg's K local steps of size eta (q(s) <= K eta s), Algorithm 1's exact prox
    (``lam``: q(s) = s / (s + lam) <= s / lam); (None, None) where the route refuses at once
    (unstable local steps). Refuses the work ``pencil_work`` bounds."""
    if lam is not None:
        pencil_work(spectrum, 1 + gam.size, rounds)
        top = _stable_top(spectrum, gam)
        qmax, bound = top / (top + lam), (lambda a: a / lam)
    else:
        # The dense pencil's work; the chain route (M K^2 above DENSE_UNKNOWNS) estimates its
        # own (``chain_cost.chain_seconds``) but shares the edge scan, so the reach check
        # below holds for both.
        if gam.size * K * K <= DENSE_UNKNOWNS:
            pencil_work(spectrum, 1 + gam.size * K, rounds, gam.size * K * K, gam.size)
        top = _stable_top(spectrum, gam)
        if np.any(eta * top > 2.0):
            return None, None
        grid = np.linspace(0.0, 1.0, 2001)[None, :] * top[:, None]   # pencil_edges.edges's
        qmax, bound = np.max(1.0 - (1.0 - eta * grid) ** K, axis=1), (lambda a: K * eta * a)
    return _pencil_reach(spectrum, gam, p, qmax, bound), bound


#: lam over the spectrum's mean eigenvalue that Algorithm 1's pencil route resolves (measured,
#: gamma (0.5, 2), atoms (1, 3) and (100, 300): 1e-2..1e3 agree with ``clients_limit`` at T =
#: inf to 1e-12; 1e4 and above Newton's method fails; below 1e-2 the scan missed the bands
#: next to the lam -> 0 atoms until it tried points there (``prox_sigma.band_points``): now
#: the gap to FedAvg's exact local solves over lam is constant from 1e-3 down to 1e-8, 0.128
#: and 0.0534 on the two spectra, as O(lam) convergence to the limit has it).
PROX_LAM_SCALE = (1e-8, 1e3)


def prox_scale(exc, lam, spectrum):
    """Re-raise a refusal of Algorithm 1's pencil route (a SolverError, or its ValueError that
    blames pooled N near d), naming lam when lam is outside ``PROX_LAM_SCALE`` times the
    spectrum's mean eigenvalue (the solver's message alone named neither)."""
    ratio = lam / spectrum.mean
    if PROX_LAM_SCALE[0] <= ratio <= PROX_LAM_SCALE[1]:
        raise exc
    raise type(exc)(f"{exc}: lam = {lam:g} is {ratio:.2g} times the spectrum's mean "
                      f"eigenvalue {spectrum.mean:.3g}, where this route resolves "
                      f"{PROX_LAM_SCALE[0]:g}..{PROX_LAM_SCALE[1]:g} times it (measured); give "
                      "lam in that range") from None


def found_reach(out, a, bound):
    """SolverError when the pencil's edge scan found the bottom of D's nonzero spectrum above
    ``bound(a)`` (A's bottom edge ``a``, ``_pencil_reach``): a band of D was missed."""
    found = out["edges"][0]
    if a is not None and a > 0 and found > bound(a) * (1.0 + 1e-6):
        raise SolverError(f"rounds limit with a spectrum: the edge scan found the round map's "
                          f"spectrum from {found:.4g} up, but it must reach {bound(a):.4g} or "
                          "lower (the scan missed a band: a covariance spectrum of a wide range "
                          "or the narrow bands of a client with gamma_j near 0 are beyond this "
                          "route)")


def unit_top(spectrum, r, signal, eta, lam=None, g=None):
    """A pencil route's inputs (``spectrum``, ``r``, ``signal``, ``eta``; Algorithm 1 also
    ``lam``, ``g``; and the scale ``c``) rescaled to the spectrum's top atom c = 1, and a
    function mapping its output back (derived here): Sigma = c Sigma0 with step eta is exactly
    Sigma0 with step c eta, the models times sqrt(c) (theta's too), Algorithm 1's prox penalty
    lam / c and global step g c (g lam kept); the risks and the round map D are unchanged, the
    distance to the fixed point is c times, personalization's FTFA step (``eta2``) c times and
    RTFA's lam2 / c. The pencils form L0 + s E with L0 of order 1, so they lost precision as c
    shrank (scaled:1e-11 under two atoms: Algorithm 1 K = 2 off by 2e-3, FedAvg K = 2 refused
    as 'pooled N near d'; fuzz40 scale F2; ``personalize_sigma`` at 1e-10: F4; covariate
    shift's joint spectrum, by its largest eigenvalue: F5)."""
    from riskcalc.linear.engine.joint_spectrum import JointSpectrum
    from riskcalc.spectrum import Spectrum

    if isinstance(spectrum, JointSpectrum):    # covariate shift's: its largest eigenvalue
        c = float(np.max(spectrum.values))
        unit = JointSpectrum(spectrum.weights, spectrum.values / c, spectrum.types)
    else:
        c = float(np.max(spectrum.atoms))
        unit = Spectrum(spectrum.atoms / c, spectrum.weights)
    kw = dict(spectrum=unit, r=r * np.sqrt(c),
              signal=signal * np.sqrt(c), eta=None if eta is None else eta * c, c=c)
    if lam is not None:
        kw.update(lam=lam / c, g=g * c)

    def back(out):
        out["distance"] = out["distance"] / c
        personal = out.get("personalize")
        if personal is not None:
            def personalize(kind, k=None, eta2=None, lam2=None):
                return personal(kind=kind, k=k, eta2=None if eta2 is None else eta2 * c,
                                lam2=None if lam2 is None else lam2 / c)
            if hasattr(personal, "tops"):      # covariate shift's sample spectrum tops
                personalize.tops = personal.tops * c
            out["personalize"] = personalize
        return out
    return kw, back
