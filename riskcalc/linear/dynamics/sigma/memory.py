"""Peak memory of the rounds routes under a covariance spectrum: estimates counted from what
each route holds, checked against measured peak resident memory (``budget``'s memory limit
refuses beyond them; before it a fixed 0.4 GB check counted one array of the nodes' factors).

Each count is in complex entries (16 bytes) of the arrays alive at the route's peak (the
double-contour pair solves, measured: the peak sits in their GMRES) plus one chunk of pair
systems; the estimate is the route's margin (``MARGINS``) times the count.

- FedAvg's chain route (``sigma.fedavg.curves`` with ``sigma_chain``): the one-point
  contour's n / 2 upper nodes and the double contour's n2 / 2 (those also at their conjugates,
  and the eigenbasis factors at both: 3 n2 / 2), each node holding Chat and the factors of
  Ghat (atoms + 2) M K^2 + 7 atoms M K, the eigenbasis (2 M K^2 + 3 atoms M K), and the
  coupling rows in the eigenbasis (3 n2 / 2 nodes, couplings x atoms M^2 K: the term that
  grows like M^2).
- Algorithm 1's chain route (``sigma.algorithm1.chain``): n / 2 + 1 nodes each holding the
  factors of ``Alg1Chain.ghat`` (atoms M ((K + 2)^2 + 2 K^2) + 12 atoms M (K + 2)), Chat and
  its fixed point (2 M K^2) and the eigenbasis (2 M K^2 + 3 atoms M K), and the two-point
  output (3 couplings x 2 x (M + 1) x (n / 2 + 1) x (n + 2)).
- FedAvg's own models on the chain route (``sigma.fedavg.own_chain``): the curves' nodes still
  held (n / 2 + n2 / 2, as above without the conjugates), the extended pencil's factors at
  n2 / 2 + 1 nodes (Algorithm 1's count with K + 1 local blocks), its outputs ((3 + 5) x 2
  (M + 1) x n2^2 / 2 for the pairs on the contour and with infinity, and 8 M n2^2 / 2 for the
  assembled blocks).
- The dense pencils (``sigma_pencil``: FedAvg with M K^2 <= 100, the own models' extended
  pencil, Algorithm 1 with M K^2 <= 200, the personalizations' extended pencils, exact prox's
  own models): ``dense_count``, with the couplings of each
  (``own_couplings`` for the extended pencils). Until it counted the couplings' per-atom
  factors, the pair solves' right-hand sides and base values (and ``two_point`` bounded its
  chunks by the atoms too), the own models with many atoms ran far past it:
  FedAvg M = 2, K = 2, T = 10 with 200 atoms 1.34 GB against 0.17 GB counted, M = 2, K = 1,
  T = 3 with 300 atoms 2.63 GB against 0.10 GB (now 0.38 and 0.35 GB).
- A chunk of pair systems (``_chunk``): the pairs the route's own chunk planning puts in one
  chunk (``sigma_chain._CHUNK_BYTES``, 150 MB, by its count per pair), each with its systems
  in the eigenbasis (``_system``) and room to solve them all again in X (the fallback of
  ``chain_basis``, step 4): at most about 0.3 GB, most of the count for small federations.

Measured (``benchmarks/bench_rounds_memory.py``: ``ru_maxrss`` of a fresh process minus its
value after the imports, 82-92 MB; two-point spectrum {0.5, 3}, one BLAS thread; the
reductions of this count in place), nodes (one-point + double contour), measured / counted::

    FedAvg chain  M = 3, K = 20, T = 50 (120 + 120)           86 MB / 232 MB    0.37
                  M = 10, K = 10, T = 100 (216 + 120)        136 MB / 265 MB    0.51
                  M = 20, K = 10, T = 100 (216 + 120)        218 MB / 341 MB    0.64
                  M = 20, K = 20, T = 100 (216 + 120)        404 MB / 520 MB    0.78
                  M = 20, K = 20, T = 200 (416 + 216)        708 MB / 783 MB    0.90
                  M = 10, K = 50, T = 200 (80 + 80)          387 MB / 591 MB    0.65
                  M = 20, K = 30, T = 200 (80 + 80)          393 MB / 559 MB    0.70
    Algorithm 1   M = 10, K = 10, T = 50 (72)                121 MB / 236 MB    0.51
                  M = 20, K = 10, T = 50 (72)                133 MB / 250 MB    0.53
                  M = 20, K = 30, T = 50 (72)                349 MB / 330 MB    1.06
                  M = 10, K = 50, T = 50 (72)                405 MB / 338 MB    1.20
    own models    M = 3, K = 9, T = 20 (160 + 160)           148 MB / 250 MB    0.59
                  M = 10, K = 10, T = 50 (120 + 120)         251 MB / 275 MB    0.91
    dense         FedAvg M = 2, K = 2, T = 3 (248)            74 MB / 133 MB    0.56
                  FedAvg M = 4, K = 5, T = 100 (216)         152 MB / 154 MB    0.99
                  FedAvg M = 4, K = 5, T = 50, own (168)     262 MB / 255 MB    1.03
                  Algorithm 1 M = 3, K = 4, T = 50 (72)      187 MB / 238 MB    0.79
                  Algorithm 1 M = 8, K = 5, T = 100 (120)    359 MB / 427 MB    0.84
      atoms=50    FedAvg M = 2, K = 2, T = 10, own (192)     243 MB / 262 MB    0.93
      atoms=200   FedAvg M = 2, K = 2, T = 10, own (184)     384 MB / 486 MB    0.79
                  Algorithm 1 M = 2, K = 2, T = 10 (40)      129 MB / 147 MB    0.88
      atoms=300   FedAvg M = 2, K = 1, T = 3, own (240)      352 MB / 552 MB    0.64

(atoms=A: the benchmark's A evenly spaced eigenvalues over [0.5, 3]; the own models and
Algorithm 1 at K = 30 measured with the X fallback's factors formed for a whole chunk; since,
at its systems' pairs only). FedAvg M = 10, K = 50 and M = 20, K = 30,
T = 200: the round map contracts so fast that T = 200 is the fixed point to rounding
(``fedavg.round_horizon``), so the contour resolves T <= 10 (80 nodes, set by the spectrum's
gap). Before the reductions, FedAvg M = 20, K = 20, T = 200 peaked at 1.09 GB of resident
memory (conjugate-joined copies of the one-point nodes, the coupling rows in X and in the
basis at every node), 0.79 GB after them; Algorithm 1 M = 10, K = 20, T = 100 at 0.31 GB (the
whole dict of Ghat's factors joined with its conjugates). ``MARGINS``: 1.4 for Algorithm 1's
chain (its largest measured / counted ratio 1.20, at K = 50: what the count misses there is
not identified), 1.2 for the others (largest ratios 0.90, 0.91 and 1.03); the small
federations' ratios are low because the chunk's room for the X fallback is rarely used.
"""

from __future__ import annotations

#: Bytes per complex entry.
_B = 16.0
#: The pair chunks' byte target (``sigma_chain._CHUNK_BYTES``, ``algorithm1.chain``'s).
_CHUNK = 1.5e8
#: GMRES's Krylov dimension (``chain_basis._KRYLOV``) in the chunks' count.
_KRYLOV = 40


def _chunk(pairs, code_bytes, per_pair):
    """Bytes of one chunk of pair systems: as many pairs as the route's own count
    ``code_bytes`` per pair fits in ``_CHUNK`` (at least one, no more than there are), each
    holding ``per_pair`` entries in the eigenbasis, and room for the same pairs' systems
    solved again in X (the code's count: GMRES's Krylov basis of M K^2 unknowns per system),
    which the systems that miss the basis's residual bound take (``chain_basis``, step 4;
    measured up to a few percent of them, but a chunk can hold many)."""
    P = min(pairs, max(1, int(_CHUNK / code_bytes)))
    return P * (_B * per_pair + code_bytes)


def _system(M, K, a):
    """Entries of one pair system in the eigenbasis (``chain_basis``): GMRES's Krylov basis of
    the reduced system (``_KRYLOV`` + 1 vectors of 2 atoms M K), about twelve M K^2 arrays (the
    right-hand side in X and in the basis, W, its residual, Dg and 1 / Dg, the two bases P at
    the pair, the output) and ten atoms M K vectors of the factors."""
    return (_KRYLOV + 1) * 2 * a * M * K + 12 * M * K * K + 10 * a * M * K


def fedavg_chain_count(M, K, atoms, n, n2, nf=2):
    """(held, chunk) bytes of FedAvg's chain route with n one-point and n2 double-contour
    nodes and ``nf`` couplings (module docstring)."""
    a, N1, N2 = max(atoms, 1), n // 2, n2 // 2
    node = M * K * K * (a + 2) + 7 * a * M * K
    held = (N1 + 3 * N2) * node + 3 * N2 * (2 * M * K * K + 3 * a * M * K + nf * a * M * M * K)
    code = _B * a * M * K * K * (2 + 2 * nf) + _B * nf * M * K * K * (_KRYLOV + 8) \
        + _B * nf * (_KRYLOV + 1) * 2 * a * M * K
    # Per pair: nf systems and the coupling rows at both nodes (``sigma_chain.two_point``).
    per_pair = nf * (_system(M, K, a) + 2 * a * M * M * K)
    return _B * held, _chunk(N2 * (N2 + 1), code, per_pair)


def alg1_chain_count(M, K, atoms, n, nf=3, nb=None, outputs=True):
    """(held, chunk) bytes of Algorithm 1's chain route with n contour nodes (module
    docstring); ``nb`` local blocks per client (K + 2; FedAvg's own models K + 1)."""
    a, N = max(atoms, 1), n // 2 + 1
    nb = K + 2 if nb is None else nb
    node = a * M * (nb * nb + 2 * K * K) + 12 * a * M * nb + 4 * M * K * K + 3 * a * M * K
    held = N * node + (2 * nf * 2 * (M + 1) * N * 2 * N if outputs else 0)
    code = _B * M * K * K * (8 * a + 46 * nf) + _B * nf * (_KRYLOV + 1) * 2 * a * M * K
    # Per pair: nf systems, both nodes' eigenbases (P, P^-1) and the vectors of ``_terms``.
    per_pair = nf * _system(M, K, a) + 4 * M * K * K + 16 * a * M * K
    return _B * held, _chunk(N * (N + 1), code, per_pair)


def own_chain_count(M, K, atoms, n, n2):
    """(held, chunk) bytes of FedAvg's own models on the chain route (module docstring)."""
    a, N2 = max(atoms, 1), n2 // 2
    curves = (n // 2 + N2) * (M * K * K * (a + 2) + 7 * a * M * K)
    held, chunk = alg1_chain_count(M, K, atoms, n2, nb=K + 1, outputs=False)
    out = (16 * (M + 1) + 8 * M) * N2 * 2 * N2
    return held + _B * (curves + out), chunk


def dense_pair_rows(size, nf, atoms, n2):
    """(rows_u, rows_z): the rows u (each with all n2 nodes v) of one chunk of
    ``SigmaPencil.two_point``'s pair solves, and of one product factor Z of its corrections:
    about 4e6 complex entries per array, per pair size max(size, nf) in the Jacobians and the
    right-hand sides, nf atoms in the couplings' base values, and per row of Z n2 atoms
    max(size, nf) (at least one row). ``dense_count`` counts the same chunks."""
    rows_u = max(1, int(4e6 / (size * max(size, nf) + nf * atoms)) // n2)
    rows_z = max(1, int(4e6 / (atoms * max(size, nf))) // n2)
    return rows_u, min(rows_u, rows_z)


def dense_count(size, blocks, atoms, n, M=1, nf=2, rank=1):
    """(held, chunk) bytes of a dense pencil's curves (``sigma_pencil``, ``pencil_curves``)
    with ``blocks`` blocks, ``size`` = M K^2 unknowns, M clients and n contour nodes, whose
    pair solves (``SigmaPencil.two_point``) take ``nf`` couplings of ``rank`` rows each: Ghat
    at the n / 2 upper nodes and at all n (the conjugates joined for the pair solves), the
    blocks the Jacobians read at both (as many again); the Jacobians' per-atom factors at both
    (n / 2 + 1 and n nodes, M size atoms each) and the couplings' factors (nf rank atoms per
    node and block); one chunk of ``dense_pair_rows`` (three arrays of the Jacobians: their
    product, I - J and the solve's copy; three of the right-hand sides: theirs, the solve's
    copy and Y; the couplings' base values; the corrections' factor Z and product), or, if
    larger, the one-point solve's Jacobians at the n nodes (``SigmaPencil.solve``: J, I - J,
    its inverse and LAPACK's copy), which are freed before the pair solves start."""
    a = max(atoms, 1)
    N1, N2 = n // 2 + 1, max(n, 1)
    K = max(1.0, (size / M) ** 0.5)
    held = (6 * (n // 2) * a * blocks * blocks + (N1 + N2) * a * M * (size + 2 * K)
            + nf * rank * a * (N1 + N2) * (blocks + 1))
    rows_u, rows_z = dense_pair_rows(size, nf, a, N2)
    pairs = min(N1, rows_u) * N2
    chunk = max(pairs * (3 * size * size + 3 * nf * size + nf * a)
                + min(N1, rows_z) * N2 * a * (size + nf), 4 * N2 * size * size)
    return _B * held, _B * chunk


def own_couplings(M):
    """``dense_count``'s couplings of the own models' extended pencils (``OwnPencil``, its
    covariate-shift form and FedAvg's exact local solves): 8 M couplings of up to max(M, 2)
    rows, as the personalizations' (``PersonalPencil``: ``personalize_sigma.personal_bytes``)
    and the own models of exact prox (``ProxPencil``: ``prox_sigma``)."""
    return {"M": M, "nf": 8 * M, "rank": max(M, 2)}


#: Each route's margin over its count: above its largest measured / counted ratio (module
#: docstring).
MARGINS = {"fedavg_chain": 1.2, "alg1_chain": 1.4, "own_chain": 1.2, "dense": 1.2}


_COUNTS = {"fedavg_chain": fedavg_chain_count, "alg1_chain": alg1_chain_count,
           "own_chain": own_chain_count, "dense": dense_count}


def estimate(route, *args, **kw):
    """Estimated peak bytes that ``route`` ("fedavg_chain", "alg1_chain", "own_chain",
    "dense") adds to the process: its count (held and chunk, with the count's arguments)
    times its margin (``MARGINS``)."""
    held, chunk = _COUNTS[route](*args, **kw)
    return MARGINS[route] * (held + chunk)
