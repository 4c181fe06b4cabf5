"""Paper 001, Theorem 3.1 (the communication lower bound): its printed bound, and its corrected
form checked for EVERY span-restricted algorithm on a worst-case instance built here.

File ``001_352374a3e1e3397e.txt``, Assumption 3.1, Thm 3.1, eq. (3). The paper's own worst
case is in its appendix, not in the text; the theorem is existential, so an instance on which
the bound holds for every algorithm meeting Assumption 3.1 verifies it at those (L, mu, lam, k).

Derived here: the split chain. Two clients in R^d, f_i(x) = mu/2 ||x||^2 + (L - mu)/4 x'M_i x -
b_i'x with M_1 = sum over odd j of (e_j - e_{j+1})(e_j - e_{j+1})' (links 1-2, 3-4, ...), M_2
the same over even j (links 2-3, 4-5, ...), b_1 = e_1, b_2 = 0: each f_i is L-smooth and
mu-strongly convex (M_i has eigenvalues 0 and 2). From x^0 = 0, a local oracle call (gradient
or prox of f_i at a point of a coordinate span) stays in the coordinate span closed under M_i's
links and b_i, whatever the number of calls; a communication joins the clients' spans. So,
with R_i(C) the coordinates client i can reach after C communications (a breadth-first closure;
it contains the Krylov space Assumption 3.1 allows, so the bound below is valid for every
algorithm), ||x^k - x*||^2 >= sum_i sum_{l not in R_i(C(k))} (x*_i)_l^2: one more coordinate per
communication along the chain. x* solves problem (2), F(x) = (1/n) sum_i f_i(x_i) + lam/(2n)
sum_i ||x_i - xbar||^2: (A_i + lam) x_i - lam xbar = b_i for every i (one nd x nd system).
"""

from __future__ import annotations

import numpy as np

from montecarlo.experiments.algorithms import apgd2
from montecarlo.experiments.metrics import exact_solution
from montecarlo.experiments.problems import quadratic_instance
from paper_checks.core import claim, judge_erratum, stated
from riskcalc import minimax


def split_chain(d: int, L: float, mu: float):
    """Hessians A (2, d, d) and linear terms b (2, d) of the split chain (module docstring)."""
    A = np.tile(mu * np.eye(d), (2, 1, 1))
    for j in range(d - 1):
        v = np.zeros(d)
        v[j], v[j + 1] = 1.0, -1.0
        A[j % 2] += (L - mu) / 2 * np.outer(v, v)
    b = np.zeros((2, d))
    b[0, 0] = 1.0
    return A, b


def minimizer(A, b, lam):
    """x* of problem (2) for quadratic clients f_i = x'A_i x/2 - b_i'x, shape (n, d)."""
    n, d = b.shape
    K = np.kron(np.eye(n), lam * np.eye(d)) - lam / n * np.kron(np.ones((n, n)), np.eye(d))
    for i in range(n):
        K[i * d:(i + 1) * d, i * d:(i + 1) * d] += A[i]
    return np.linalg.solve(K, b.ravel()).reshape(n, d)


def reachable(A, b, C):
    """R_i(c) for c = 0..C: the coordinate sets of the module docstring, as boolean masks
    (C + 1, n, d)."""
    n, d = b.shape
    links = np.abs(A) > 0

    def close(i, mask):
        while True:
            new = mask | links[i][mask].any(0)
            if np.array_equal(new, mask):
                return mask
            mask = new
    masks = [np.array([close(i, b[i] != 0) for i in range(n)])]
    for _ in range(C):
        joint = masks[-1].any(0)
        masks.append(np.array([close(i, joint | (b[i] != 0)) for i in range(n)]))
    return np.array(masks)


def lower_distances(L, mu, lam, d, C):
    """min over span-restricted algorithms of ||x^k - x*||^2 / ||x^0 - x*||^2 after c = 0..C
    communications, on the split chain in dimension d (x^0 = 0)."""
    A, b = split_chain(d, L, mu)
    xs = minimizer(A, b, lam)
    masks = reachable(A, b, C)
    return np.array([np.sum(xs[~mk] ** 2) for mk in masks]) / np.sum(xs ** 2)


@claim("001.thm31.hypothesis", location="Thm 3.1, eq. 3", kind="inequality",
       statement="For L >= mu and lam >= mu, every span-restricted algorithm has, on the worst "
                 "instance, ||x^k - x*||^2 >= 1/4 (1 - 10 max{sqrt(mu/lam), sqrt(mu/(L - mu))})^"
                 "(C(k)+1) ||x^0 - x*||^2.",
       mutants=("lower",))
def thm31(cfg, seed):
    # Printed: L = 2, mu = lam = 1, one round: the bound is 20.25 ||x^0 - x*||^2, more than the
    # starting distance itself, so the algorithm that never moves violates it on EVERY
    # instance (and APGD2 after one round on several, p001's quadratic instances).
    bound = float(minimax.thm31_distance_lower_bound(2.0, 1.0, 1.0, 1, strict=False))
    ratios = []
    for rep in range(cfg.pick(3, 10)):
        inst = quadratic_instance(m=10, d=10, L=2.0, mu=1.0, seed=seed, rep=rep)
        tr = apgd2(inst, lam=1.0, iterations=1)
        _, W = exact_solution(tr, inst)
        dd = np.sum((tr.local - W) ** 2, axis=(-1, -2))
        ratios.append(float(dd[1] / dd[0]))
    # Corrected (lam > 100 mu, L > 101 mu, where the base q is in (0, 1)): on the split chain,
    # the least distance ANY span-restricted algorithm can reach after C communications, C =
    # 0..40, against the bound, over L/mu and lam/mu from 2e2 to 1e5 (d = 300).
    C = cfg.pick(24, 40)
    rows = []
    for L, lam in ((1e3, 1e3), (1e4, 4e2), (1e3, 1e4), (2e2, 1e5)):
        low = lower_distances(L, 1.0, lam, 300, C)
        q = 1 - 10 * max(np.sqrt(1 / lam), np.sqrt(1 / (L - 1)))
        ratio = low / stated(0.25 * q ** (np.arange(C + 1) + 1), "lower")
        rows.append({"L": L, "lam": lam, "q": q, "min_ratio": float(ratio.min()),
                     "at_C": int(ratio.argmin())})
    corrected_ok = all(x["min_ratio"] >= 1 for x in rows)
    return judge_erratum(bound > 1 and max(ratios) < bound, corrected_ok,
                         f"L=2 mu=lam=1, C(k)=1: printed bound {bound:g} x ||x^0 - x*||^2; staying "
                         f"put gives 1, APGD2 after one round {max(ratios):.3g}. In the regime lam "
                         "> 100 mu, L > 101 mu, split-chain worst case (d = 300), least distance "
                         f"of any span-restricted algorithm / bound over C = 0..{C}: " + "; ".join(
                             f"L/mu={x['L']:g} lam/mu={x['lam']:g} (q = {x['q']:.2f}): at least "
                             f"{x['min_ratio']:.3g} (C = {x['at_C']})" for x in rows),
                         {"printed_bound": bound, "apgd2_ratios": ratios, "chain": rows},
                         "the base q = 1 - 10 max{...} lies in (0, 1) only if lam > 100 mu and "
                         "L > 101 mu; the theorem needs that hypothesis (or a constant smaller "
                         "than 10), and there it holds (the split chain attains it for every "
                         "span-restricted algorithm); the rate sqrt(min{L, lam}/mu) log 1/eps "
                         "drawn from it concerns that regime and stands", level="erratum-harmless",
                         transcription=('independent',
                                        'at the deciding point mu = lam = 1, L = 2 both radicals '
                                        'equal 1 whatever their extent, and the constant 10 is a '
                                        'digit, not a superscript'))
