"""Peak memory of the rounds routes under a covariance spectrum: estimates fitted to measured
peak resident memory (``budget``'s memory limit refuses beyond it).

Each estimate counts what the route holds at its peak, in complex entries (16 bytes), then
scales the count by constants fitted to measured peaks:

- FedAvg's chain route (``sigma.fedavg.curves`` with ``sigma_chain``), at its double-contour
  pair solves: the one-point contour's n / 2 upper nodes and the double contour's n2 / 2 (those
  also at their conjugates, and the eigenbasis factors at both: 3 n2 / 2), each node holding
  Chat and the factors of Ghat (atoms + 2) M K^2 + 7 atoms M K, the eigenbasis (2 M K^2 + 3
  atoms M K), the coupling rows in the eigenbasis (3 n2 / 2 nodes, couplings x atoms M^2 K: the
  term that grows with M^2), and one chunk of pair systems (``sigma_chain._CHUNK_BYTES`` at
  most).
- Algorithm 1's chain route (``sigma.algorithm1.chain``), at its pair solves: n / 2 + 1 nodes
  each holding the factors of ``Alg1Chain.ghat`` (atoms M ((K + 2)^2 + 2 K^2) + 12 atoms M
  (K + 2)), Chat and its fixed point (2 M K^2) and the eigenbasis (2 M K^2 + 3 atoms M K),
  the two-point output (3 couplings x 2 x (M + 1) x (n / 2 + 1) x (n + 2)) and a chunk.
- FedAvg's own models on the chain route (``sigma.fedavg.own_chain``): the curves' nodes still
  held (n / 2 + n2 / 2, as above without the conjugates), the extended pencil's factors at
  n2 / 2 + 1 nodes (Algorithm 1's count with K + 1 local blocks), its outputs ((3 + 5) x 2
  (M + 1) x n2^2 / 2 for the pairs on the contour and with infinity, and 8 M n2^2 / 2 for the
  assembled blocks) and a chunk.

Fitted (peak resident memory ``ru_maxrss`` of a fresh process minus its value after the
imports, ~85 MB; two-point spectrum, one BLAS thread): see ``FITS``.
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
    holding ``per_pair`` entries."""
    return _B * per_pair * min(pairs, max(1, int(_CHUNK / code_bytes)))


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
    code = _B * a * M * K * K * (2 + 2 * nf) + _B * nf * M * K * K * (_KRYLOV + 8)
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
    code = _B * M * K * K * (8 * a + 46 * nf)
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


def dense_count(size, blocks, atoms, n):
    """(held, chunk) bytes of a dense pencil's curves (``sigma_pencil``, ``pencil_curves``)
    with ``blocks`` blocks, ``size`` = M K^2 unknowns and n contour nodes: Ghat at the n / 2
    upper nodes and at all n (the conjugates joined for the pair solves), the blocks the
    Jacobians read at both (as many again), and a chunk of about 4e6 Jacobian entries (three
    arrays of it: the Jacobians, I - J and the solve's copy)."""
    held = 6 * (n // 2) * max(atoms, 1) * blocks * blocks
    pairs = (n // 2) * n
    return _B * held, min(3 * _B * 4e6, 3 * _B * pairs * size * size)


#: Fitted scales (held, chunk) of each count: the estimate is MARGIN (h held + c chunk).
FITS = {"fedavg_chain": (1.0, 1.0), "alg1_chain": (1.0, 1.0), "own_chain": (1.0, 1.0),
        "dense": (1.0, 1.0)}
#: The estimates' margin over the fits: the largest measured / fitted ratio.
MARGIN = 1.0


_COUNTS = {"fedavg_chain": fedavg_chain_count, "alg1_chain": alg1_chain_count,
           "own_chain": own_chain_count, "dense": dense_count}


def estimate(route, *args, **kw):
    """Estimated peak bytes of ``route`` (a key of ``FITS``) with the count's arguments."""
    held, chunk = _COUNTS[route](*args, **kw)
    h, c = FITS[route]
    return MARGIN * (h * held + c * chunk)
