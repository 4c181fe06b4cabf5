"""The traces of finite personalization steps as linear pencils (paper 003,
``003_4b976ddf5225c17e.txt``, Sec. 7, Algs. 5-6; the risk they enter:
``riskcalc.linear.steps.finite_clients``, whose module docstring defines R_k, g_k, K, Y and
the traces t1..t4 and own).

Each trace is an entry T_ab = tau(Sigma (P^-1)_ab) of an upper triangular linear pencil in
S (``riskcalc.linear.engine.resolvent_pencil``, exact in the limit). R_k is the Horner
recursion as a path sum: nodes 0..K joined by -q on the superdiagonal and -c from every node to
the last one make (P^-1)_(a, K) = R_(K - a) for ALL a at once; the mirror piece (-c from the first
node to every node) has (P^-1)_(0, b) = R_b. Gluing [R piece, K, (middle), K, mirror piece]
with the middles of t1..t3 (cyclic forms tau(Sigma R K Sigma Y K R), tau(Sigma R K Sigma
K R), tau(Sigma R K R), tau(Sigma K R)) gives every k <= K from one pencil each: the
entry (K - k, first + k). Likewise g_k with -eta jumps and no pure q^k path, and the middle
S (an off-diagonal E entry).

Cost: one pencil of 2 K + 4 blocks holds (2 K + 4)^2 x atoms entries and takes O(K^3 atoms)
operations (two atoms on a busy 2-core machine: K = 50 in 0.2 s, K = 200 in 6 s;
benchmarks/bench_finite_clients_steps.py).
"""

from __future__ import annotations

import numpy as np

from riskcalc.linear.engine.resolvent_pencil import MAX_ENTRIES, pencil_traces

#: Seconds per point, atom and (2 K + 4)^3 of ``step_traces`` (its four pencils; process time
#: with one thread, 4.6-5.2e-9 from K = 100 to 300 at two atoms; 700 steps: ~30 s).
SECONDS_PER_CUBE = 5e-9


def seconds(K: int, atoms: int, points: int = 1) -> float:
    """Estimated seconds of ``step_traces`` up to K steps (``SECONDS_PER_CUBE``)."""
    return SECONDS_PER_CUBE * points * atoms * (2.0 * K + 4.0) ** 3


def step_traces(gamma, lam, eta, p, omega, spectrum, K):
    """t1, t2, t3, tau(Sigma K R_k) and own_k (module docstring) for k = 0..K, arrays
    (points, K + 1); per point gamma, lam, p and omega (K = (p S + omega Sigma)^-1)."""
    s, h = spectrum.atoms, spectrum.weights
    size = 4 * gamma.size * (2 * K + 4) ** 2 * s.size
    if size > MAX_ENTRIES:
        most = int(np.sqrt(MAX_ENTRIES / (4 * gamma.size * s.size)) / 2) - 2
        # Beyond the atoms no step count fits ("at most -2 steps" was printed): name the atoms.
        fits = (f"at most {most} steps here" if most >= 1 else
                f"no number of steps fits {s.size} atoms here: give at most "
                f"{MAX_ENTRIES // (4 * gamma.size * (2 * K + 4) ** 2)} atoms (a histogram of "
                "the eigenvalues)")
        raise ValueError(f"steps: {K} steps with {s.size} spectrum atoms need {size:.3g} "
                         f"entries in memory (limit {MAX_ENTRIES}); {fits}")
    phi = np.divide(spectrum.signal_weights, h, out=np.zeros_like(h), where=h > 0)
    y = s * s * phi
    one = np.ones_like(s)
    ks = np.arange(K + 1)
    kblock = ("K", p, omega)
    rk = [("R_last", lam, eta), kblock, kblock, ("R_first", lam, eta)]
    # The four pencils as one batch of points (the shorter ones padded with free identity
    # nodes, which change no entry): t1, t2 (and tau(Sigma K R_k)), t3, own.
    T = _solve(gamma, s, h, [
        (rk, [one, y, one]), (rk, [one, s, one]),
        ([("R_last", lam, eta), kblock, ("R_first", lam, eta)], [one, one]),
        ([("G_last", lam, eta), ("G_first", lam, eta)], ["S"])], K)
    n = gamma.size
    t1 = T[:n, K - ks, K + 3 + ks]
    t2 = T[n:2 * n, K - ks, K + 3 + ks]
    tk = T[n:2 * n, K + 2, K + 3 + ks]
    t3 = T[2 * n:3 * n, K - ks, K + 2 + ks]
    own = gamma[:, None] * T[3 * n:, K - ks, K + 1 + ks]
    own[:, 0] = 0.0                 # g_0 = 0 (the pencil's diagonal there is the identity)
    return t1, t2, t3, tk, own


def _solve(gamma, s, h, pencils, K):
    """T of a batch of pencils, each gluing its pieces (module docstring, step 2) with
    couplings between the last node of one piece and the first of the next: a middle M(s)
    (array over atoms), or "S"; every pencil at every point of ``gamma``."""
    n = 2 * K + 4
    npt = gamma.size
    E = np.zeros((len(pencils), npt, n, n))
    L = np.zeros((len(pencils), npt, n, n, s.size))
    L[..., np.arange(n), np.arange(n), :] = 1.0
    for e, l, (pieces, couplings) in zip(E, L, pencils):
        sizes = [1 if kind == "K" else K + 1 for kind, *_ in pieces]
        off = 0
        for (kind, *par), size in zip(pieces, sizes):
            _piece(e, l, off, kind, par, s, K)
            off += size
        ends = np.cumsum(sizes)
        for end, mid in zip(ends[:-1], couplings):
            if isinstance(mid, str):
                e[:, end - 1, end] = -1.0
            else:
                l[:, end - 1, end] = -mid
    return pencil_traces(np.tile(gamma, len(pencils)), s, h, E.reshape(-1, n, n),
                         L.reshape(-1, n, n, s.size))


def _piece(E, L, off, kind, par, s, K):
    """Write one piece's entries into the pencil (P = -N off the diagonal, N the path
    weight): K-block (p S + omega Sigma); Horner pieces with N = q = (1 - eta lam) - eta S on
    the superdiagonal and jumps N = c (R pieces) or eta (G pieces) to the last node
    (``_last``) or from the first (``_first``)."""
    if kind == "K":
        p, omega = par
        E[:, off, off] = p
        L[:, off, off] = omega[:, None] * s
        return
    lam, eta = par
    nodes = off + np.arange(K + 1)
    L[:, nodes, nodes] = 1.0
    jump = (eta * lam if kind.startswith("R") else np.full(lam.shape, eta))[:, None]
    # Superdiagonal q, except next to the jump end of a G piece (g_k has no pure q^k path).
    first = 1 if kind == "G_first" else 0
    last = K - 1 if kind == "G_last" else K
    sup = off + np.arange(first, last)
    E[:, sup, sup + 1] = eta
    L[:, sup, sup + 1] = -(1.0 - eta * lam)[:, None, None]
    if kind.endswith("last"):
        L[:, nodes[:-1], off + K] -= jump[..., None]
    else:
        L[:, off, nodes[1:]] -= jump[..., None]
