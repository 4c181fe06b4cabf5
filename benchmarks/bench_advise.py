"""``riskcalc advise`` at the scale of real federations: process CPU time of the whole command.

Issue 30, item 1. The pinned federations (written as clients files, seeded from one
``numpy.random.SeedSequence``; gamma_j log-uniform on [0.3, 4], r_j uniform on [0.2, 2],
sigma_j uniform on [0.1, 1.5], rho_j = sqrt(1 + r_j^2), every client distinct):

* ``het5``, ``het100``, ``het1000``: Sigma = I, every pipeline (goals: < 1 s, < 5 s, < 30 s);
* ``het10000``: Sigma = I, ``--methods fedavg,ftfa,rtfa`` (goal < 60 s);
* ``shift1000``: covariate shift, 1000 distinct clients cycling through three covariance types
  (two-point:1,4,0.5, the anti-aligned two-point:4,1,0.5, scaled:2; goal < 30 s), every
  pipeline (fine-tuning steps have no finite-M limit under shift and are skipped).

Each case runs ``python -m riskcalc advise --clients-file FILE --json [--methods ...]`` in a
fresh subprocess (imports and set-up included) and reports the child's user + system CPU
seconds (``resource.getrusage(RUSAGE_CHILDREN)``) and wall seconds. With ``--baseline DIR``
(a source tree of the code to compare against, e.g. ``git archive <commit> | tar -x -C DIR``)
every case also runs from DIR, A and B alternating, with the ratio and the largest relative
difference of every candidate's risks (matched by method and weights) and of the mean risk of
the optimal weights (negative: the new weights are better). A baseline run past
``--baseline-timeout`` seconds is stopped and reported as such.

Measured 2026-11-26 on the shared 2-core machine (process CPU of the whole command, against
today's code = commit 39f9df4, A and B in the same run; first figure on a quiet machine, the
range over two earlier runs under load)::

    case       new CPU            today's CPU                   numbers
    het5       1.19 s (1.4-1.8)   5.85 s (4.9x; 5.9-8.3 loaded) risks equal to 2e-15; optimal
                                                                means lower or equal (fedavg
                                                                +5e-15: rounding)
    het100     3.65 s (3.5-5.1)   178.6 s (48.9x; 185.5 loaded) risks equal to 4.5e-14; every
                                                                optimal mean lower (RTFA 1.3e-7)
    het1000    21.7 s (29.3)      not run (hours)               ftfa_steps now a candidate
                                                                (today: skipped, pencils too big)
    het10000   126 s (142)        did not finish in 240 s wall
    shift1000  refused            not run                       estimate 182 days: finite-
                                                                difference optimal weights over
                                                                1000 clients; pFedMe / MAML-FL
                                                                limits of ~230 s / 7 s each

Today's code has no ``--max-minutes``; the new code runs with ``--max-minutes 600`` and a
case it refuses (its estimate beyond 10 hours) is reported with the refusal.

Fourth round (RTFA's target traces in closed form, per-entry RTFA penalty grids, Newton for
g), against commit 6e6b3ce, A and B alternating in one run of this script on the shared
machine under heavy load (load average 5-11: every figure is inflated, the ratios less so)::

    case       new CPU    6e6b3ce CPU             numbers
    het5       1.48 s     1.59 s (1.1x)           risks equal to 2.7e-15; optimal means equal
    het100     3.21 s     4.86 s (1.5x)           risks equal to 1.5e-14; RTFA optimal mean
                                                  +1.3e-13 (rounding), the others equal
    het1000    19.0 s     31.6 s (1.7x)           risks equal to 1.9e-13; RTFA optimal mean
                                                  +4.2e-13 (rounding), the others equal
    het10000   8.15 s     164 s (20x; a separate  risks equal to 2.0e-13; RTFA optimal mean
                          run: 109 s user + 55 s  +2.5e-13 (rounding); same recommendation
                          system, 463 s wall; in
                          this run past 900 s wall)

het5's remaining CPU is mostly imports: ``import riskcalc.cli.advise, riskcalc.advise,
scipy.optimize`` alone took 0.75-0.9 s of CPU in the same conditions (scipy.optimize about
0.3-0.4 s of it), the advice itself 0.59-0.69 s (6e6b3ce: 0.91-0.95 s in-process).

Fifth round (the cost model refitted, ``--max-minutes`` stopping in flight, rounds
candidates; no change to any number), against the round's starting commit ba80b5b, A and B in
one run of this script (load average 10-12 on the 2 cores: CPU inflated ~1.2x)::

    case       new CPU    ba80b5b CPU   estimate   numbers
    het5       1.35 s     1.41 s        1.05 s     bit-identical (every risk, weight, tuning)
    het100     2.95 s     3.03 s        3.58 s     bit-identical
    het1000    19.6 s     22.2 s        23.4 s     bit-identical
    het10000   9.09 s     8.30 s        10.3 s     bit-identical
    shift1000  refused    refused                  estimate 4.16e3 days (FD optimal weights
                                                   over 1000 clients; pFedMe ~230 s and
                                                   MAML-FL ~7 s per evaluation)

het5 stays above 1 s: process start + numpy + riskcalc 0.26 s, scipy.optimize 0.39 s (on this
path only the optimal weights' SLSQP / L-BFGS-B need scipy; the package's import pulls in
scipy.linalg, whose array-API shim imports numpy.f2py and numpy.testing), the advice ~0.5 s
(~1900 Marchenko-Pastur quadratures of ~0.1 ms each, mostly Python overhead at 5 rows, plus
the limits' own bookkeeping). Whole-process CPU, medians of 5 (``farm-bench``): ``python -c
pass`` 0.11 s, ``import numpy`` 0.18 s, ``import riskcalc.cli.advise, riskcalc.advise`` 0.26 s,
with scipy.linalg 0.44 s, with scipy.optimize 0.65 s.

Sixth round (the optimal weights without scipy.optimize up to ``weights.NEWTON_MAX`` = 32
variables: ``riskcalc.advise.simplex_newton``), against main at 6075d52, A and B in one run
of this script (load average 5-8 on the 2 cores)::

    case       new CPU    6075d52 CPU   numbers
    het5       0.82 s     1.10 s        every non-optimal candidate bit-identical; the five
                                        optimal means lower by 5e-15 to 8e-14 relative
                                        (their weights moved by <= 7e-7, per-client risks by
                                        <= 3.6e-7 relative: SLSQP's stopping tolerance)
    het100     2.71 s     2.72 s        bit-identical (more than 32 variables: scipy as before)
    het1000    16.4 s     17.6 s        bit-identical
    het10000   8.13 s     7.47 s        bit-identical
    shift1000  refused    refused       estimate 4.16e3 days, as before

Whole-process CPU of het5 (``python -m riskcalc advise --clients-file het5.json --json``),
medians of 7 runs alternating with main's: 0.94 s against 1.32 s (ratio 0.70; load average
5-6), and 0.84 s against 1.30 s in an earlier run (load average 4). What is left: process
start, numpy and riskcalc's modules ~0.27 s; the advice ~0.55 s, of which the shared-tuning
searches of MAML-FL and pFedMe (grid then golden section, ~29 limits per weighting) and the
optimal weights' ~17 exact gradients per pipeline are most (``riskcalc.linear`` code:
Marchenko-Pastur quadratures and pFedMe's subordination Newton).

Seventh round (pFedMe's client groups batched per covariance type, RTFA's penalty search
fixed: ``benchmarks/bench_advise_limits.py`` times one limit), against 5c8e073, A and B in one
run of this script (load average 4-8)::

    case       new CPU    5c8e073 CPU   numbers
    het5       0.99 s     1.12 s        bit-identical (every risk, optimal mean)
    het100     3.54 s     3.82 s        bit-identical
    het1000    19.0 s     19.2 s        bit-identical
    het10000   9.68 s     9.50 s        bit-identical
    shift1000  refused    refused       estimate 148 days (was 4.16e3): FD optimal weights
                                        over 1000 clients; MAML-FL ~5 s per evaluation
    shift10    67.9 s     80.5 s        (not a pinned case: the same law, 10 clients) risks
                                        equal to 4.4e-15; optimal means equal or lower
                                        (pFedMe -3.6e-12, MAML-FL -1.9e-11); same advice
    shift30    374 s      608 s         (the same law, 30 clients; two processes side by
                                        side, ``/usr/bin/time``) risks equal to 1.4e-13;
                                        optimal means: MAML-FL -1.4e-12, pFedMe +5.7e-13
                                        (finite-difference SLSQP's rounding), the others
                                        equal; same advice (RTFA, optimal weights)

Under shift the finite-difference optimal weights are most of the time (at 10 clients 83% of
a profile: M + 1 evaluations per gradient, RTFA 2M + 1); one pFedMe evaluation at 1000
distinct clients fell from 13 s to 0.08 s, MAML-FL's (~5 s, one block-pencil continuation
per client group) is the slowest left.

Eighth round (covariate shift: RTFA's penalty differences in one evaluation, the shift
route's chains of every covariance type in one batch and its weight-independent parts
remembered, pFedMe's groups in one batch), against 5fcbd35, A and B in one run of this script
(load average 8-13 on the 2 cores)::

    case       new CPU    5fcbd35 CPU   numbers
    shift10    27.8 s     57.9 s        risks equal to 1.2e-16; optimal means equal, RTFA's
               (estimated 53.9 s)       -2.7e-13 (lower); same advice (measured at 3942260,
                                        before pFedMe's own variance was remembered)
    shift1000  refused    refused       estimate 135 days (was 148): MAML-FL's 126 of them

shift30 (``--baseline`` without ``--baseline-max-minutes`` lets 5fcbd35 refuse it by its
default budget in 0.3 s), run as the two commands side by side (``--max-minutes 600``,
``/usr/bin/time``, load 11-13; new at bc1d3ac): 291 s against 420 s of CPU (1.44x); every
candidate's risks bit-identical, optimal means equal but RTFA's, -3.2e-11 (lower); same
advice (RTFA, optimal weights). Per pipeline at 30 clients, new code only: FedAvg 4.6 s,
FTFA 5.1 s, pFedMe 14.9 s; MAML-FL is most of the rest (estimated 380 of 534 s).

Per pipeline at 10 clients (``advise(fed, [method])``, process CPU, load ~9; new / 5fcbd35):
FedAvg 0.65 / 0.82 s, FTFA 1.42 / 2.77, RTFA 10.0 / 28.6 (1145 / 1970 evaluations in the
optimal weights), pFedMe 3.9 / 9.0, MAML-FL 11.6 / 11.8 (unchanged: the slowest now, one
block-pencil continuation per client group). het5 is on another route (Sigma = I) and
unchanged. shift1000 is still refused: every pipeline's optimal weights take M + 1 or M + 2
evaluations per finite-difference gradient.

Ninth round (covariate shift: MAML-FL's companion blocks of every client group in one batched
Newton iteration, ``riskcalc.linear.engine.block_pencil``, each solve started from the last
solution for the same clients; diagonal roots by Newton's iteration from the last ones; the
joint measure remembered; the finite-difference SLSQP with ftol 1e-12 and up to 300
iterations, was 1e-10 and 100), against 11126fb, process CPU of the whole command (load
average 7-20 on the 2 cores: every figure inflated)::

    case       new CPU    11126fb CPU   numbers
    het5       0.942 s    0.954 s       (medians of 5, A/B alternating, ratio 0.99; measured
                                        before the last commit, which the Sigma = I route
                                        does not use) bit-identical
    shift10    15.2 s     29.7 s        (medians of 2, A/B alternating, ratio 0.52;
                                        estimated 33.6 s) risks within 1.5e-13; optimal
                                        means lower (FedAvg -9.8e-12, FTFA -7.6e-12, pFedMe
                                        -5.6e-12, MAML-FL -3.5e-12) but RTFA's, +5.4e-14;
                                        same advice
    shift30    70.3 s     278 s         (one run each, one after the other, ``/usr/bin/time``:
                                        11126fb at load 13-20, new at 7-13; estimated 207 s)
                                        risks within 1.5e-13; optimal means lower: RTFA
                                        -6.8e-9 (229 iterations; 100 stopped it 1.4e-10
                                        above 11126fb's), FedAvg -3.2e-11, pFedMe -3.0e-11,
                                        FTFA -1.2e-11, MAML-FL -2.5e-12; same advice (RTFA,
                                        optimal weights)
    shift60    209 s      not run       (load 3-8; estimated 725 s) 176 s user + 33 s system:
                                        the system time is glibc giving the batched arrays'
                                        memory back and taking it again (MAML-FL at 30
                                        clients: 4.6 s system, 0.04 s with
                                        MALLOC_MMAP_THRESHOLD_ and MALLOC_TRIM_THRESHOLD_ at
                                        1 GiB)

One evaluation of the limits at nearby weights (what the finite differences make), 100 / 1000
clients under shift (load ~15): FedAvg 0.002 / 0.032 s, FTFA 0.004 / 0.03-0.075, RTFA 0.004 /
0.034, pFedMe 0.011 / 0.027, MAML-FL 0.043 / 0.26 (it was ~5-7 s at 1000; 0.006 / 0.014 /
0.087 s at 10 / 30 / 300). shift1000 is still refused: every pipeline's optimal weights take
M + 1 evaluations per finite-difference gradient for up to 300 iterations (estimate 2.9 days,
was 135 with the iteration cap left out of the model; MAML-FL 1.4 of them).

Tenth round, 2026-11-27 (covariate shift: exact gradients of the mean risk in the weights, and
in RTFA's penalties, for FedAvg, FTFA and RTFA, ``riskcalc.linear.finite_clients.shift_gradient``;
MAML-FL and pFedMe still take finite differences), against f330a46, A and B in one run of this
script (AMD EPYC, 2 cores shared, load average 4-10: every figure inflated)::

    case         new CPU    f330a46 CPU   numbers
    shift10      13.0 s     13.0 s        every risk at fixed weights bit-identical; optimal
                 (estimated               means lower: FedAvg -2.0e-14, FTFA -5.5e-14, RTFA
                 22.4 s)                  -9.7e-14 relative (MAML-FL, pFedMe: the same route,
                                          equal); same advice (RTFA, optimal weights)
    shift30      39.6 s     64.1 s        (ratio 1.6x) risks at fixed weights within 3.7e-14
                 (estimated               (RTFA with sample weights: the warm-started roots'
                 77.4 s)                  last bits); optimal means lower: FedAvg -4.0e-14,
                                          FTFA -8.7e-14, RTFA -1.2e-14; same advice
    shift1000    refused    refused       estimate 1.75 days (was 2.9): MAML-FL 1.38 days and
                                          pFedMe 8.8 h of it (finite differences)
    shift1000fr  104 s      not run       FedAvg, FTFA, RTFA only (estimated 220 s; f330a46's
                                          estimate 27.5 h: FedAvg 12.8, FTFA 7.3, RTFA 7.4)

Whole-process CPU (user + system of the finished child), the two commands alternating A B A
B, medians and the ratio taken pair by pair (load ~10): shift10 13.45 s against 14.49 s over 3
pairs, ratio 0.92 (0.72-1.08); shift30 41.7 s against 55.1 s over 2 pairs, ratio 0.76
(0.73-0.78; 4.9 s of system time in each: glibc's memory trimming, see the ninth round).
Per pipeline at 1000 clients in one process (load 3-4): FedAvg 16.5 s, FTFA 21.1 s, RTFA 55.9
s (its penalty searches, 381 evaluations, ~19 s of it); the optimal weights took 108 / 107 /
169 gradient calls of 0.15 / 0.19 / 0.22 s, where one evaluation of the limits takes 0.032-0.034
s and a finite-difference gradient M + 1 = 1001 of them (~33 s). At 10 clients the two routes
cost the same (one O(M^2) pass and 3 T + 2 or 3 O(M) passes against M + 1 = 11 evaluations),
hence shift10 unchanged; from 30 clients on the exact route wins, and the rest of shift30's
time is MAML-FL's and pFedMe's finite differences and RTFA's penalty searches.

Eleventh round, 2026-11-27 (covariate shift: the (targets x clients) sums of FedAvg, FTFA
and RTFA in O(M), ``riskcalc.linear.finite_clients.shift_pairs``; K's tangent chains once per
gradient), against d212693, A and B in one run of this script (load average 9-14 on the 2
cores: every figure inflated)::

    case         new CPU    d212693 CPU   numbers
    shift1000fr  32.5 s     92.2 s        (ratio 2.8x; estimated 86.7 s) risks at fixed
                                          weights within 8.6e-14; optimal means: FedAvg
                                          equal, RTFA +8.8e-14, FTFA +3.5e-13 relative
                                          (L-BFGS-B's ending point, ftol 1e-13); same advice
    shift30      36.3 s     45.0 s        (ratio 1.2x) risks within 3.2e-14; optimal means
                                          equal but RTFA's, +3.5e-15; same advice
    shift10      12.7 s     11.0 s        (ratio 0.9x: MAML-FL and pFedMe, unchanged, are
                                          most of it) risks within 2.4e-16; optimal means
                                          within 2e-16; same advice

Whole-process figures of shift1000fr (user + system of the finished child), the two commands
alternating A B A B, medians over 2 pairs, ratio pair by pair (load 8-12; new at the commit
after this text's first version, the targets' own variances kept for the steps): 28.9 s
against 89.5 s of CPU, ratio 0.323 (0.317-0.328); user 27.5 s against 65.1 s, system 1.4 s
against 24.4 s (glibc giving back and taking again the (targets x clients) arrays); peak
memory 93 MiB against 226 MiB.

In one process (load ~10), new / d212693: one gradient at 1000 clients FedAvg 0.045 / 0.160 s,
FTFA 0.056 / 0.201 s, RTFA 0.073 / 0.288 s; one evaluation of the limits 0.007 / 0.038,
0.009 / 0.042, 0.015 / 0.047 s; per pipeline at 1000 clients FedAvg 6.1 s, FTFA 7.7 s, RTFA
21-26 s (its ~174 gradients ~17 s, its penalty searches, 381 evaluations, ~8 s); at 100
clients 1.7 / 1.8, 2.4 / 2.7, 11.1 / 11.8 s; at 10 clients 0.15 / 0.12, 0.61 / 0.67, 6.0 /
6.5 s. shift1000 is still refused (MAML-FL's and pFedMe's optimal weights take finite
differences: M + 2 evaluations a gradient).

Twelfth round, 2026-11-27 (covariate shift: exact gradients of the mean risk for pFedMe, in
the weights (its lam by central differences), and MAML-FL, in the weights and alpha,
``riskcalc.linear.finite_clients.subordination_gradient``: frozen adjoints of the
subordination fixed point and complex steps through ``resolvent_chain`` and
``block_pencil``; ``simplex_newton`` releases a bound variable before stopping), against
main at b57244d, A and B in one run of this script (2 cores shared, load average 0.7-2.4)::

    case         new CPU    b57244d CPU   numbers
    het5         0.76 s     0.72 s        bit-identical (every risk, optimal mean)
    shift30      16.1 s     36.6 s        (ratio 2.3x) every risk at fixed weights
                                          bit-identical; optimal means equal but pFedMe's
                                          -7.1e-13 and MAML-FL's -6.2e-13 relative (lower);
                                          same advice
    shift1000fr  26.2 s     25.4 s        bit-identical (FedAvg, FTFA, RTFA: unchanged)
    shift1000    97.6 s     refused       (estimated 260 s; b57244d's estimate 1.75 days)
                                          every pipeline; goal 30 s not reached

Per pipeline at 1000 clients (``advise(fed, [method])`` one after the other in one process,
load 2-3): FedAvg 4.4 s, FTFA 5.0 s, RTFA 16.3 s, pFedMe 13.4 s (83 gradient calls of
~0.135 s; one evaluation 0.02 s, a finite-difference gradient 1002 of them), MAML-FL 63.1 s
(67 gradient calls of ~0.7 s, about 47 s, and its alpha searches, ~52 evaluations of ~0.3
s), local ridge 0.01 s. MAML-FL's gradient is one
evaluation (~0.4 s: most of it the Newton iterations of the three coupled 5-8 block target
pencils per client group, ``maml_sigma._target_traces``) and four complex steps (~0.07 s
each: the companion blocks by complex Newton, the coupled pencils by one Newton step with
the real Jacobian). At 10 / 30 / 100 clients (one process): pFedMe 1.65 / 3.6 / 6.5 s
(finite differences 2.8 / 9.7 s / not run), MAML-FL 1.2 / 3.3 / 13.2 s (1.8 / 19.1 s / not
run).

Thirteenth round, 2026-11-27 (MAML-FL under shift: Newton's iteration on the block upper
triangular target pencils solves for T's blocks on and above the diagonal only, 42 x 42
systems for the 8 x 8 pencils instead of 64 x 64, its Jacobian by one matrix product over the
atoms, ``engine.block_pencil``; the cost model's pFedMe / MAML-FL gradient calls refitted;
paths and assembly of block pencils moved to ``engine.pencil_assembly``), against main at
c7c7c3c (ef9a3d5 since, which changes only ``riskcalc.linear.dynamics``, off this path), A and
B in one run of this script (2 cores shared, load average 3-6: wall ~2x CPU, every figure
inflated)::

    case         new CPU    c7c7c3c CPU   numbers
    shift30      16.1 s     17.1 s        (ratio 1.1x; estimated 20 s) risks within 6.1e-16;
                                          optimal means equal but MAML-FL's, +5.5e-15
                                          (rounding; its optimal weights moved on a flat
                                          minimum, per-client risks by up to 1.1e-9); same
                                          advice
    shift1000    86.8 s     113.7 s       (ratio 1.3x; estimated 183 s, was 260 s) risks
                                          within 1.8e-15; optimal means equal but MAML-FL's,
                                          -3.1e-13 (lower); same advice; goal 30 s not reached

Per pipeline at 1000 clients, ``advise(fed, [method])`` in one process (load 2-3): MAML-FL
46.3 s (was 63.1: 64 gradient calls of 0.57 s, was 67 of 0.7 s, and 48 tuning evaluations of
0.18 s), pFedMe 14.3 s (83 calls of 0.149 s); under cProfile MAML-FL 60.6 s before, 40.5 s
after. Of one MAML-FL gradient the coupled target pencils are still most: their real Newton
solves (2-3 iterations each: one per superdiagonal level) and the one-step complex solves of
the four complex steps (each re-solving with the same real Jacobian), then the batched 8 x 8
inverses of ``_state``. The estimate's remaining excess at shift1000 is FedAvg's, FTFA's and
RTFA's fits (~87 s estimated against ~26 s measured), not refitted here.

Run: ``OMP_NUM_THREADS=1 python benchmarks/bench_advise.py [--cases het5,het100]
[--baseline DIR] [--baseline-cases het5,het100] [--baseline-max-minutes] [--baseline-timeout 900]
[--out DIR]``.
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHIFT_TYPES = ("two-point:1,4,0.5", "two-point:4,1,0.5", "scaled:2")
CASES = {
    "het5": (5, None, None),
    "het100": (100, None, None),
    "het1000": (1000, None, None),
    "het10000": (10000, None, "fedavg,ftfa,rtfa"),
    "shift1000": (1000, SHIFT_TYPES, None),
    # Not pinned (no goal): the shift law at sizes both codes finish.
    "shift10": (10, SHIFT_TYPES, None),
    "shift30": (30, SHIFT_TYPES, None),
    "shift60": (60, SHIFT_TYPES, None),
    # shift1000's clients, the pipelines with exact gradients under shift only.
    "shift1000fr": (1000, SHIFT_TYPES, "fedavg,ftfa,rtfa"),
}
GOALS = {"het5": 1.0, "het100": 5.0, "het1000": 30.0, "het10000": 60.0, "shift1000": 30.0}
PINNED = ("het5", "het100", "het1000", "het10000", "shift1000")


def federation(name: str) -> list:
    """The pinned clients of case ``name`` (module docstring)."""
    m, types, _ = CASES[name]
    rng = np.random.default_rng(np.random.SeedSequence([30, m, 0 if types is None else 1]))
    gamma = np.exp(rng.uniform(np.log(0.3), np.log(4.0), m))
    r = rng.uniform(0.2, 2.0, m)
    sigma = rng.uniform(0.1, 1.5, m)
    out = []
    for j in range(m):
        c = {"gamma": float(gamma[j]), "r": float(r[j]), "sigma": float(sigma[j]),
             "rho": float(np.sqrt(1.0 + r[j] ** 2))}
        if types is not None:
            c["spectrum"] = types[j % len(types)]
        out.append(c)
    return out


def goal(name: str) -> str:
    """The case's goal as printed (none for the cases that are not pinned)."""
    return f"goal < {GOALS[name]:g} s cpu" if name in GOALS else "no goal: not pinned"


def run(tree: str, path: str, methods, timeout: float, new: bool = True):
    """(cpu seconds, wall seconds, parsed JSON or the refusal's text, or None past
    ``timeout``) of one advise run from ``tree`` (``new``: with ``--max-minutes 600
    --no-progress``, which today's code does not know)."""
    cmd = [sys.executable, "-m", "riskcalc", "advise", "--clients-file", path, "--json"] + (
        ["--max-minutes", "600", "--no-progress"] if new else [])
    if methods:
        cmd += ["--methods", methods]
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1",
               PYTHONPATH=tree)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    try:
        proc = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, time.monotonic() - start, None
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode == 2 and proc.stderr.startswith("error: advise"):
        return cpu, wall, proc.stderr.strip()
    if proc.returncode != 0:
        raise RuntimeError(f"advise failed from {tree}: {proc.stderr.strip()[-500:]}")
    return cpu, wall, json.loads(proc.stdout)


def estimate(path: str, methods) -> float:
    """The CPU seconds ``riskcalc.advise.cost`` estimates for the case (what ``--max-minutes``
    is checked against), to set beside the measured time."""
    sys.path.insert(0, ROOT)
    from riskcalc.advise import PIPELINES, cost
    from riskcalc.advise.federation import from_clients

    with open(path) as fh:
        fed = from_clients(json.load(fh))
    return sum(cost.estimate_seconds(fed, methods.split(",") if methods else PIPELINES)
               .values())


def compare(new: dict, old: dict) -> dict:
    """Largest relative difference of the candidates' risks and the optimal weights' gain."""
    def key(c):
        return c["method"], c["weights"]["name"]

    olds = {key(c): c for c in old["candidates"]}
    worst, gain = 0.0, {}
    for c in new["candidates"]:
        o = olds.get(key(c))
        if o is None:
            continue
        a = np.array([np.inf if v is None else v for v in c["risks"]], float)
        b = np.array([np.inf if v is None else v for v in o["risks"]], float)
        if c["weights"]["name"] == "optimal":
            gain[c["method"]] = (c["mean_risk"] - o["mean_risk"]) / o["mean_risk"]
            continue
        fin = np.isfinite(a) & np.isfinite(b)
        if np.any(np.isfinite(a) != np.isfinite(b)):
            worst = np.inf
        if fin.any():
            worst = max(worst, float(np.max(np.abs(a[fin] - b[fin]) / np.abs(b[fin]))))
    return {"max_rel_diff": worst, "optimal_mean_change": gain,
            "same_recommendation": key(new["recommended"]) == key(old["recommended"])}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default=",".join(PINNED))
    ap.add_argument("--baseline", metavar="DIR")
    ap.add_argument("--baseline-timeout", type=float, default=900.0)
    ap.add_argument("--baseline-cases", default=",".join(CASES),
                    help="the cases also run from --baseline")
    ap.add_argument("--baseline-max-minutes", action="store_true",
                    help="the baseline knows --max-minutes and --no-progress (5fcbd35 does): "
                         "give them to it too (else it refuses what its default budget "
                         "exceeds, e.g. shift30)")
    ap.add_argument("--timeout", type=float, default=900.0)
    ap.add_argument("--out", metavar="DIR", help="keep the clients files and JSON outputs here")
    args = ap.parse_args(argv)
    out = args.out or tempfile.mkdtemp(prefix="bench_advise_")
    os.makedirs(out, exist_ok=True)
    for name in args.cases.split(","):
        path = os.path.join(out, f"{name}.json")
        with open(path, "w") as fh:
            json.dump(federation(name), fh)
        methods = CASES[name][2]
        cpu, wall, res = run(ROOT, path, methods, args.timeout)
        line = (f"{name:<10} new: cpu {'>' + str(args.timeout) if cpu is None else f'{cpu:8.2f}'}"
                f" s, wall {wall:8.2f} s ({goal(name)}; estimated "
                f"{estimate(path, methods):.3g} s)")
        if isinstance(res, str):
            line += f" REFUSED: {res}"
            res = None
        if res is not None:
            with open(os.path.join(out, f"{name}.new.out.json"), "w") as fh:
                json.dump(res, fh)
        if args.baseline and name in args.baseline_cases.split(","):
            bcpu, bwall, bres = run(args.baseline, path, methods, args.baseline_timeout,
                                    new=args.baseline_max_minutes)
            if bcpu is None:
                line += f" | baseline: did not finish in {args.baseline_timeout:g} s wall"
            elif isinstance(bres, str):
                line += f" | baseline: cpu {bcpu:8.2f} s, REFUSED: {bres}"
            else:
                line += f" | baseline: cpu {bcpu:8.2f} s, wall {bwall:8.2f} s"
                if cpu is not None:
                    line += f", ratio {bcpu / cpu:7.1f}x"
                if res is not None:
                    line += f", {json.dumps(compare(res, bres))}"
                with open(os.path.join(out, f"{name}.base.out.json"), "w") as fh:
                    json.dump(bres, fh)
        print(line, flush=True)


if __name__ == "__main__":
    main()
