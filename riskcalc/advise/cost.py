"""What ``riskcalc.advise`` will cost, estimated before it starts (``--max-minutes``).

Per pipeline, CPU seconds fitted to measurements (one BLAS thread, the shared 2-core machine
under moderate load, 2026-11-26; ``benchmarks/bench_advise.py`` prints the estimate beside the
measured time), times ``SAFETY``:

* Sigma = I (exact gradients of the mean risk, ``weights``): the whole pipeline as
  a + b M + c M^2, fitted to the pinned federations of ``benchmarks/bench_advise.py`` (5, 100,
  1000, 10,000 clients; until session 38 plus 7e-4 M s for scipy's SLSQP, which the optimal
  weights no longer use with exact gradients). Measured / estimated: 0.4-0.9 (the
  long side is the small federations, where the fit is mostly a). MAML-FL grows faster than
  M (2026-11-29, one thread, load 7-10, gamma in [0.3, 3], r and sigma in [0.1, 2], after
  the gain stop of ``weights``): 0.72 / 2.2 / 62.5 s at 100 / 1000 / 10,000 clients (the code
  before: 89 s at 10,000, estimated 42 s by a + b M), and alone (no start from FTFA's
  weights) 18.7 s at 3000; its c fitted to that 3000 (estimated / measured 1.0 there, 1.75
  at 10,000). pFedMe there: 1.5 / 6.8 / 83 s at 100 / 1000 / 10,000, estimated 1.9 / 15 /
  150 s. Refitted after the quadrature's nested rules (``engine.mp_quadrature``; 2026-11-29,
  one thread, load ~10, each pipeline's CPU inside one ``advise`` run of every pipeline,
  federations of ``benchmarks/bench_advise_decision.py``'s law): MAML-FL 0.37 / 0.92 / 1.98
  / 7.0 s and pFedMe 0.57 / 1.67 / 4.92 / 14.3 s at 100 / 300 / 1000 / 3000 clients (were
  estimated 0.65 / 1.55 / 5.1 / 18.9 and 1.8 / 4.8 / 15.3 / 45.3 s; now 0.53 / 1.2 / 3.9 /
  15.3 and 0.99 / 2.4 / 7.4 / 22.4 s), MAML-FL's M^2 term kept for 10,000 clients (not
  measured again: the code before took 62.5 and 83 s there; estimated now 98 and 84 s,
  MAML-FL's kept above the 89 s of the code before session 38, as
  ``tests/test_fuzz38_advise.py`` pins). Refitted after the exact gradient's real pass
  (``finite_clients.gradient._own_jet``; 2026-11-30, one thread, load 8-11, each pipeline's
  CPU inside one run, the same law): MAML-FL 0.27 / 0.37 / 0.83 / 2.31 s and pFedMe 0.41 /
  0.93 / 1.90 / 8.04 s at 100 / 300 / 1000 / 3000 clients (were estimated 0.53 / 1.2 / 3.9
  / 15.3 and 0.99 / 2.4 / 7.4 / 22.4 s, up to 6.6x; now 0.33 / 0.47 / 1.5 / 9.1 and 0.65 /
  1.27 / 4.0 / 16.6 s), MAML-FL's M^2 term kept for its 10,000 clients (estimated 89.5 s,
  above the 89 s that test pins, and 0.29 s at 3 clients, below its 0.3 s). The tuning's
  searches (``tune.shared_tuning``: the 9-point grid then Brent's) evaluate 38-40 limits for
  MAML-FL and 34-36 for pFedMe over the two searched weightings at 100-3000 clients, 34-38
  under covariate shift or a spectrum at 10-100 clients (were ~52 before Brent's):
  ``TUNING_EVALS``. Estimated / measured with them (2026-11-30, load ~10): under shift
  MAML-FL 1.09 / 0.74, 2.26 / 1.51, 5.98 / 2.63 s and pFedMe 1.24 / 0.68, 1.92 / 0.97, 4.24 /
  0.96 s at 10 / 30 / 100 clients; with two-point:1,4,0.5 at 10 clients 2.51 / 1.97 and
  7.94 / 0.96 s.
* A covariance spectrum (finite-difference optimal weights; under covariate shift until
  2026-11-27): the number
  of evaluations of the finite-M limits (``clients_limit``) times the seconds of one,
  a + b M + c M^2 per route and method. Evaluations: the tuning's (RTFA's penalty grid of
  81 points and ~46 golden-section points, one evaluation per point under these routes, for
  three weightings; ~26 per weighting for MAML-FL's alpha and pFedMe's lam; 3 for FedAvg and
  FTFA), then the optimal weights, ``iterations`` x (M + 1 + the tuning variables; RTFA's M
  penalties count once: client j's risk depends on its own lam_j only, so one evaluation
  moves them all, ``weights._separable_jacobian``): SLSQP's iterations grew about like M
  (15 at 10 clients, 31 at 30), RTFA's (its M penalties too) like 7 M (measured at 10
  clients under shift: 1970 evaluations with one per penalty, 1145 with one for all, the
  same iterations; 229 at 30 clients, once allowed more than 100), at most
  ``weights.FD_MAXITER``. Seconds per evaluation from 10 and 30 clients (two-point spectrum; a
  50-atom power law costs the same to 1.5x) and, under shift, one evaluation at 1000 clients of
  three types (FedAvg 0.11 s, FTFA/RTFA 0.055 s, MAML-FL 7.2 s). pFedMe (its client groups
  batched per covariance type): 0.06 s at 1000 clients under shift, 0.03 s with a two-point
  spectrum, 0.46 s with a 50-atom power law (the fit; 200 atoms: 10 s, the atoms x atoms
  algebra per group). Measured / estimated: 0.35-0.8. After the shift route's batching
  (2026-11-27, load 9-12) the shift fits were refitted: FedAvg (2.5e-3, 1e-4) (one
  evaluation at 1000 clients 0.04-0.08 s; the pipeline 0.65 s at 10 clients, 4.6 s at 30),
  pFedMe b = 5e-5 (its groups in one batch: 0.03-0.06 s at 1000; it was the spectrum's
  fit). Measured / estimated under shift, 10 clients: FedAvg 0.74, FTFA 0.66, RTFA 0.58,
  pFedMe 0.55, MAML-FL 0.46; 30 clients: FedAvg 0.51, FTFA 0.33, pFedMe 0.39. MAML-FL's
  companion blocks in one batch, each evaluation started from the last one's solution
  (2026-11-27, load ~5): one evaluation at nearby weights 0.006 / 0.014 / 0.040 / 0.087 /
  0.26 s at 10 / 30 / 100 / 300 / 1000 clients under shift (a first one, from alpha = 0,
  0.016-0.49 s), the same with one two-point spectrum (0.005 / 0.035 / 0.26 s at 10 / 100 /
  1000; it was 0.024 / 0.43 s at 10 / 100): refitted as (5e-3, 2.6e-4) for both.
  Recalibrated (2026-11-30, one thread, load 5-10; every pipeline alone on federations of 10
  to 100 clients, two-point / three-point / 50-atom power-law spectra): the iterations grow
  like sqrt(M) (``SPECTRUM_ITERATIONS``), MAML-FL's and pFedMe's evaluations with the atoms
  (``SPECTRUM_ATOMS``); every pipeline's evaluation refitted. Measured / estimated 0.27-0.82,
  median 0.53, on 43 pipelines at 3 to 300 clients (was 0.06-1.8: FTFA at 100 clients 0.11,
  MAML-FL at 10 and 30 clients with the power law 1.8 and 1.4); RTFA at 100 clients took
  SLSQP's ``FD_MAXITER`` iterations (148 s, estimated 316 s); FedAvg at 300 clients 128.6 s
  (``SPECTRUM_ITERATIONS_PAST``).
* Covariate shift, FedAvg, FTFA and RTFA (exact gradients of the mean risk in the weights and
  RTFA's penalties, ``riskcalc.linear.finite_clients.shift.gradient``, 2026-11-27): the tuning's
  evaluations as above, then the optimal weights' gradient calls (``SHIFT_GRADIENT_CALLS``:
  a + b M, at most a cap) times the seconds of one gradient
  (``SHIFT_GRADIENT``, a + b M + c M^2: one O(M^2) pass and 3 T + 2 or 3 of O(M), T = 3
  types). Measured (one thread, load 3-4): gradient calls FedAvg 20 / 45 / 140 / 108, FTFA
  29 / 48 / 96 / 107, RTFA 113 / 210 / 209 / 169 at 10 / 30 / 100 / 1000 clients (then SLSQP or
  ``simplex_newton`` up to 300 variables, L-BFGS-B beyond and for RTFA); seconds per gradient
  FedAvg 0.005 / 0.009 / 0.15, FTFA 0.023 / 0.025 / 0.19, RTFA 0.029 / 0.033 / 0.22 at 10 /
  100 / 1000 clients. Whole pipelines at 1000 clients: FedAvg 16.5 s, FTFA 21.1 s, RTFA
  55.9 s (its penalty searches ~19 s of it); estimated 47 / 58 / 115 s. The (targets x
  clients) sums in O(M) (``finite_clients.shift.pairs``) and K's tangent chains once per
  gradient (2026-11-27, one thread, load average ~14: inflated) made both linear in M, refitted
  as a + b M: seconds per gradient FedAvg 0.006 / 0.008 / 0.020 / 0.045 / 0.118, FTFA 0.016 /
  0.018 / 0.026 / 0.060 / 0.187, RTFA 0.026 / 0.030 / 0.038 / 0.101 / 0.239, and of one
  evaluation FedAvg 0.0013 / 0.0018 / 0.0026 / 0.0073 / 0.022, FTFA 0.0027 / 0.0029 / 0.0051
  / 0.0096 / 0.026, RTFA 0.0048 / 0.0095 / 0.010 / 0.027 / 0.042 at 10 / 100 / 300 / 1000 /
  3000 clients. pFedMe likewise (exact in the weights, then central differences in lam,
  ``finite_clients.subordination_gradient``, 2026-11-27, one thread, load ~4): seconds per
  gradient 0.041 / 0.049 / 0.064 / 0.135 at 10 / 100 / 300 / 1000 clients, gradient calls
  21 / 54 / 81 / 83 at 10 / 30 / 100 / 1000; the pipeline 1.65 / 3.6 / 6.5 / 16.0 s.
  MAML-FL likewise (exact in the weights and alpha, the same module): seconds per gradient
  0.017 / 0.095 / 0.675 at 10 / 100 / 1000 clients, gradient calls 26 / 109 at 10 / 100; the
  pipeline 1.2 / 13.2 s at 10 / 100. Refitted on measured counts (2026-11-27, one thread,
  load 2-3; MAML-FL's target pencils solved on their upper blocks, ``engine.block_pencil``):
  at 10 / 100 / 1000 clients MAML-FL 26 / 109 / 64 gradient calls of 0.015 / 0.065 / 0.57 s
  and 48 tuning evaluations of 0.0064 / 0.024 / 0.18 s (the pipeline 0.74 / 8.7 / 46 s),
  pFedMe 21 / 81 / 83 calls of 0.048 / 0.064 / 0.149 s and 56 evaluations of 0.011 / 0.014
  / 0.032 s (1.6 / 6.0 / 14.3 s). The calls do not grow past ~100 clients (capped: MAML-FL
  70, below its 109 at 100 clients, where the other terms' margin covers it); estimated /
  measured MAML-FL 1.6 / 1.0 / 1.6, pFedMe 1.6 / 1.4 / 1.5 (were 3.1 and 2.1 at 1000).
  pFedMe's lam-gradient exact since (one more complex step instead of two evaluations):
  20 / 71 / 83 calls of 0.042 / 0.055 / 0.147 s at 10 / 100 / 1000 clients (were 0.055 /
  0.091 / 0.159 s, same calls; one thread, load 6-8), the fit kept (estimated / measured
  1.6 / 1.7 / 1.5). FedAvg, FTFA and RTFA refitted on the same run (``bench_advise``'s shift
  federations cut to M clients): gradient calls FedAvg 24 / 136 / 145 / 108, FTFA 23 / 100 /
  100 / 103, RTFA 91 / 314 / 199 / 169 at 10 / 100 / 300 / 1000, of 0.0055 / 0.0093 /
  0.0145 / 0.031 s, 0.013 / 0.019 / 0.025 / 0.047 s and 0.018 / 0.027 / 0.037 / 0.066 s;
  the pipelines 0.15 / 1.6 / 2.6 / 3.5 s, 0.32 / 2.0 / 2.9 / 4.9 s, 4.1 / 12.5 / 12.0 /
  17.5 s. Estimated / measured at 1000 clients now 2.1 / 1.6 / 2.2 (were 3.9 / 4.4 / 3.0;
  RTFA's cap of 250 calls, below its 314 at 100 clients, kept: its tuning evaluations cover
  them there, 1.1).
  MAML-FL refitted after its complex steps became real-arithmetic tangents and its target
  pencils are solved one level at a time (``engine.block_pencil._tangent``,
  ``engine.pencil_assembly._by_levels``): against main in one run (one thread, load 5-8,
  both inflated ~1.2x over the last fit's run, divided out) one evaluation 0.0056 / 0.017 /
  0.127 s (main 0.0082 / 0.034 / 0.217) and one gradient 0.020 / 0.060 / 0.458 s (main 0.031
  / 0.100 / 0.644) at 10 / 100 / 1000 clients.
  pFedMe refitted after its chains were shared (``finite_clients.pfedme_sigma.group_pieces``:
  four chain solves a call, tau(F K Z K) one vector) and MAML-FL's tangents solved by level
  (``engine.block_pencil._by_level``): against main in one run (one thread, load ~6) pFedMe's
  gradient 0.018 / 0.024 / 0.063 s (main 0.037 / 0.048 / 0.112) and evaluation 0.0059 /
  0.0090 / 0.017 s (main 0.0099 / 0.014 / 0.027), MAML-FL's gradient 0.015 / 0.041 / 0.267 s
  (main 0.013 / 0.043 / 0.295) at 10 / 100 / 1000 clients; the fits scaled by those ratios.
* ``--rounds``: FedAvg's exact curves (every K of ``rounds.LOCAL_STEPS``; with a spectrum
  K = 1 and the K >= 2 that ``rounds.spectrum_local_steps`` admits, at
  ``rounds.sigma_k_seconds`` each) per weighting, and pFedMe's exact-prox curves per pFedMe
  candidate
  (``ROUNDS_FEDAVG``, ``ROUNDS_FEDAVG_SPECTRUM``, ``ROUNDS_PFEDME``). Measured / estimated:
  0.45-0.8. Under covariate shift the same K, each curve the edges' scan plus its contour
  (``_shift_curve_seconds``: ``shift.cost`` for K = 1, ``sigma_k_seconds`` for K >= 2),
  capped at ``rounds.SHIFT_ALLOWANCE``.
"""

from __future__ import annotations

import numpy as np

from riskcalc.advise.rounds import SHIFT_ALLOWANCE, sigma_k_seconds, spectrum_local_steps
from riskcalc.advise.weights import FD_MAXITER

#: Multiplier of every fit (the machine's load varies; the estimate errs on the long side).
SAFETY = 1.5
#: Sigma = I: seconds of the whole pipeline, (a, b, c) for a + b M + c M^2.
IDENTITY = {"fedavg": (0.02, 1.1e-4, 0.0), "ftfa": (0.02, 1.1e-4, 0.0),
            "rtfa": (0.2, 4.4e-4, 0.0), "maml_fl": (0.19, 2.5e-4, 5.7e-7),
            "pfedme": (0.25, 1.8e-3, 6e-7), "ftfa_steps": (0.02, 1.5e-3, 0.0),
            "local_ridge": (3e-3, 1e-6, 0.0)}
#: Sigma = I near pooled N = d: below N/d - 1 = ``NEAR_POOLED[0]`` (N/d = sum_j 1/gamma_j),
#: MAML-FL's and pFedMe's limits take ``NEAR_POOLED[1]`` seconds per evaluation, for the
#: tuning's evaluations and 10% more for the weights. Measured (one thread, load 5-9,
#: 2026-11-29): 0.1-0.6 s per evaluation at 2 to 200 clients and N/d - 1 = 1e-2 to 1e-4
#: (0.003-0.09 s at 0.1); two clients at N/d - 1 = 5e-7 took 10.7 s (MAML-FL) and 10.4 s
#: (pFedMe), estimated 0.24 and 0.33 s before this term.
NEAR_POOLED = (0.05, 0.6)
#: ... times 1 + ``PINNED_GROWTH`` log10(``NEAR_POOLED[0]`` / (N/d - 1)) where a client alone
#: is near its own N_j = d from above (0 < 1/gamma_j - 1 < ``PINNED_ALONE``): the global
#: model's root then sits next to that client's cap (``finite_clients.own._subordination``'s
#: pinned route), each evaluation a long bracketed solve. Measured (one thread, load ~12,
#: 2026-11-30): gamma [0.999999, 1e6] (N/d - 1 = 2e-6) 4.3-5.6 s per evaluation and gradient
#: for pFedMe; MAML-FL's pipeline 75 s (estimated 40 s before this term, 313 s now), pFedMe's
#: more than 150 s (stopped at 25 min of wall time; estimated 36 s before, 282 s now); the
#: same with [0.9999, 1e6] and [0.99, 1e6] 0.9 s (MAML-FL: not pinned, so ``PINNED_ALONE``
#: lies between 1e-6 and 1e-4). Without such a client the flat
#: term covers the measured federations (MAML-FL at 3 clients, N/d - 1 = 1e-3 and 1e-5:
#: 7.8 and 15.1 s, estimated 40 s).
PINNED_GROWTH, PINNED_ALONE = 1.5, 1e-5
#: ... and times 1 + M / ``NEAR_POOLED_CLIENTS`` (each evaluation's quadratures per client):
#: MAML-FL at 100 clients, N/d - 1 = 1e-4, took 82.6 s (estimated 40 s by the flat term; 120 s
#: now), pFedMe 15.8 s there; at 30 clients 25-30 s and 11-13 s (estimated 64 and 58 s now).
NEAR_POOLED_CLIENTS = 50.0
#: A spectrum or covariate shift: seconds of one evaluation, (a, b, c) for a + b M + c M^2.
EVAL = {
    "spectrum": {"fedavg": (5.5e-4, 2.5e-6, 0.0), "ftfa": (3.6e-3, 2e-5, 0.0),
                 "rtfa": (4.8e-3, 2e-5, 0.0), "maml_fl": (5e-3, 1.5e-4, 0.0),
                 "pfedme": (4.5e-3, 3e-5, 0.0)},
    "shift": {"fedavg": (1.5e-3, 7e-6, 0.0), "ftfa": (2.5e-3, 8e-6, 0.0),
              "rtfa": (5e-3, 2e-5, 0.0), "maml_fl": (4e-3, 1.0e-4, 0.0),
              "pfedme": (6.5e-3, 1.2e-5, 0.0)},
}
#: A spectrum: SLSQP's iterations, (a, b) for a + b sqrt(M) (``iterations``). Measured (one
#: thread, load 5-9, 2026-11-30; ``iterations`` = (evaluations - ``TUNING_EVALS``) / (M + 1
#: + the tuning variables)): FedAvg 15-16 / 29 / 42.5, FTFA 18-21 / 29 / 41-43, MAML-FL 17-22
#: / 31 / 47, pFedMe 17-19 / 29 / 49 at 10 / 30 / 100 clients, RTFA 86-92 / 151-173 at 10 /
#: 30 (were estimated 5 + M and 20 + 7 M: FTFA alone on 100 clients took 20 s, estimated 188
#: s). MAML-FL's evaluation 7.4 / 8.4 / 14.3 ms at 10 / 30 / 100 clients (two-point).
SPECTRUM_ITERATIONS = {"rtfa": (0.0, 33.0), "other": (13.0, 3.2)}
#: ... but at least slope M - offset, standing in for the evaluations' growth past 100
#: clients: FedAvg alone on 300 clients (two-point) took 128.6 s of CPU, 54 iterations of 7.7
#: ms per evaluation (0.76 ms at 100; estimated 40 s by a + b sqrt(M) alone, 176 s now).
SPECTRUM_ITERATIONS_PAST = (1.3, 85.0)
#: ... and MAML-FL's and pFedMe's seconds per evaluation grow with the spectrum's atoms A:
#: (a + b M) (1 + g A) + b M s A^2 for (g, s) here (10 clients: 7.4 / 18.5 ms and 4.4 / 11.4
#: ms per evaluation with two atoms / a 50-atom power law; pFedMe at 1000 clients 0.03 /
#: 0.46 / 10 s with 2 / 50 / 200 atoms, above).
SPECTRUM_ATOMS = {"maml_fl": (1.0 / 30.0, 0.0), "pfedme": (1.0 / 30.0, 0.01)}
#: Covariate shift, exact gradients (module docstring): seconds of one gradient, (a, b, c)
#: for a + b M + c M^2, and the optimizer's gradient calls, (a, b, cap) for min(cap, a + b M).
SHIFT_GRADIENT = {"fedavg": (6e-3, 2.6e-5, 0.0), "ftfa": (0.014, 3.3e-5, 0.0),
                  "rtfa": (0.023, 4.3e-5, 0.0), "pfedme": (0.025, 5e-5, 0.0),
                  "maml_fl": (0.014, 3.5e-4, 0.0)}
SHIFT_GRADIENT_CALLS = {"fedavg": (15, 1.3, 150), "ftfa": (15, 1.0, 110),
                        "rtfa": (110, 3.0, 250), "pfedme": (15, 0.8, 85),
                        "maml_fl": (20, 1.0, 70)}
#: ``riskcalc predict``'s budget: seconds of ONE finite-M limit (every client's risk of one
#: method at fixed tuning), (a, b, c) for a + b M + c M^2, M distinct clients; "general":
#: covariate shift, "spectrum": a shared spectrum. Measured (process CPU, one BLAS thread):
#: MAML-FL under a two-point spectrum 8.7 s at 1000 distinct clients and 84 s at 10,000;
#: pFedMe, its groups batched, 0.06 s at 2000 and 0.9 s at 30,000 with two atoms, 0.46 s at
#: 1000 with a 50-atom power law and 10 s with 200 atoms (its b is that last, the most atoms a
#: federation file's spectrum needs here). Sigma = I (2026-11-29, load 8-10; gamma in [0.3,
#: 3], r and sigma in [0.1, 2]): MAML-FL 0.95 / 18 s and pFedMe 1.1 / 17.6 / 79 s at 15,000 /
#: 50,000 / 150,000 distinct clients, faster than linear in M (their c; a + b M alone said 6 s
#: at 150,000).
#: A shared spectrum: FedAvg, FTFA and RTFA build (targets x groups) arrays
#: (``finite_clients.sigma.trace_coefficients``), quadratic in M. Measured (FTFA,
#: two-point:1,4,0.3, one thread, load ~6, fuzz39 adv2): 0.17 / 0.24 / 1.09 / 3.06 / 6.3 / 10.3
#: s at 1000 / 2000 / 4000 / 8000 / 12,000 / 16,000 distinct clients (FedAvg 2.65 s, RTFA
#: 3.11 s at 8000; under covariate shift 0.33 s at 8000); a + b M alone said 2.1 s at 16,000,
#: c = 5e-8 says 14.4 s (510 s at 100,000).
PREDICT_EVAL = {
    "identity": {"fedavg": (1e-3, 3e-6, 0.0), "ftfa": (1e-3, 3e-6, 0.0),
                 "rtfa": (2e-3, 3e-6, 0.0), "maml_fl": (5e-3, 3e-5, 7e-9),
                 "pfedme": (5e-3, 4e-5, 7e-9)},
    "general": {"fedavg": (5e-3, 2e-4, 0.0), "ftfa": (5e-3, 1e-4, 0.0),
                "rtfa": (5e-3, 1e-4, 0.0), "maml_fl": (0.05, 1e-2, 0.0),
                "pfedme": (0.05, 1e-2, 0.0)},
    "spectrum": {"fedavg": (5e-3, 2e-4, 5e-8), "ftfa": (5e-3, 1e-4, 5e-8),
                 "rtfa": (5e-3, 1e-4, 5e-8), "maml_fl": (0.05, 1e-2, 0.0),
                 "pfedme": (0.05, 1e-2, 0.0)},
}
#: Evaluations of the tuning searches (three weightings: two searched, one optimized).
TUNING_EVALS = {"fedavg": 3, "ftfa": 3, "rtfa": 3 * (81 + 46), "maml_fl": 40, "pfedme": 36}
#: Fine-tuning steps with a spectrum: seconds per client, atom and weighting (pencils).
STEPS_GENERAL = 0.05


#: ``--rounds``: FedAvg's curves for every K of ``rounds.LOCAL_STEPS``, per weighting, (a, b, c)
#: for a + b M + c M^2 seconds (measured: 0.78 s at 5 clients, 11 s at 100, past 300 s at
#: 1000; nearly independent of T); pFedMe's exact-prox curve, T (a + b M) seconds (0.12 s at
#: 5 clients and T = 100, 0.33 s at T = 400; 0.67 s and 2.0 s at 100 clients), per weighting.
ROUNDS_FEDAVG = (0.4, 0.08, 3e-4)
#: With a covariance spectrum, K = 1 only (0.29 s per weighting at 10 clients, 0.34 s at 30).
ROUNDS_FEDAVG_SPECTRUM = (0.25, 3e-3, 3e-6)
ROUNDS_PFEDME = (8e-4, 5e-5)
#: With a covariance spectrum (``prox_sigma``), per weighting: (a + b M) + T (c + e M) seconds
#: (measured, one thread, loaded machine: 2.4 s at 3 clients and 7.5 s at 10, T = 200; the
#: fixed point alone 0.9 s and 2.0 s).
ROUNDS_PFEDME_SPECTRUM = (0.5, 0.1, 4e-3, 2.5e-3)


def iterations(method: str, m: int) -> float:
    """Iterations of the finite-difference optimal weights under a covariance spectrum,
    a + b sqrt(M) (``SPECTRUM_ITERATIONS``), beyond 100 clients rising to
    ``weights.FD_MAXITER`` at 300 (``SPECTRUM_ITERATIONS_PAST``), at most that."""
    a, b = SPECTRUM_ITERATIONS.get(method, SPECTRUM_ITERATIONS["other"])
    slope, offset = SPECTRUM_ITERATIONS_PAST
    return min(FD_MAXITER, max(a + b * m ** 0.5, slope * m - offset))


def estimate_seconds(fed, methods, rounds=None) -> dict:
    """Estimated CPU seconds of each pipeline of ``riskcalc.advise.advise(fed, methods,
    rounds=rounds)`` (module docstring).

    Returns
    -------
    dict
        pipeline -> seconds, and "rounds" -> the seconds of the candidates along the rounds
        (``rounds`` given).
    """
    m = fed.m
    route = "shift" if fed.shift else ("spectrum" if fed.spectrum is not None else "identity")
    out = {}
    for method in methods:
        if method == "ftfa_steps" and route != "identity":
            # No finite-M steps limit under shift (skipped); pencils for a spectrum.
            out[method] = (0.0 if route == "shift" else
                           2 * STEPS_GENERAL * m * fed.spectrum.atoms.size)
        elif route == "identity" or method == "local_ridge":
            a, b, c = IDENTITY[method]
            out[method] = a + b * m + c * m * m
            near = float(sum(1.0 / fed.gamma)) - 1.0
            if method in ("maml_fl", "pfedme") and near < NEAR_POOLED[0]:
                alone = 1.0 / fed.gamma - 1.0
                grow = (1.0 + PINNED_GROWTH * float(np.log10(NEAR_POOLED[0] / max(near, 1e-300)))
                        if np.any((alone > 0) & (alone < PINNED_ALONE)) else 1.0)
                out[method] += (1.1 * TUNING_EVALS[method] * NEAR_POOLED[1] * grow
                                * (1.0 + m / NEAR_POOLED_CLIENTS))
        elif route == "shift" and method in SHIFT_GRADIENT:
            a, b, c = EVAL[route][method]
            seconds = TUNING_EVALS[method] * (a + b * m + c * m * m)
            a, b, cap = SHIFT_GRADIENT_CALLS[method]
            calls = min(cap, a + b * m)
            a, b, c = SHIFT_GRADIENT[method]
            out[method] = seconds + calls * (a + b * m + c * m * m)
        else:
            a, b, c = EVAL[route][method]
            extra = {"maml_fl": 1, "pfedme": 1, "rtfa": 1}.get(method, 0)
            evals = TUNING_EVALS[method] + iterations(method, m) * (m + 1 + extra)
            atoms = fed.spectrum.atoms.size
            grow, square = SPECTRUM_ATOMS.get(method, (0.0, 0.0))
            out[method] = evals * ((a + b * m + c * m * m) * (1.0 + grow * atoms)
                                   + b * m * square * atoms * atoms)
        out[method] *= SAFETY
    if rounds is not None and fed.shift:
        out["rounds"] = SAFETY * 2 * sum(_shift_curve_seconds(fed, K, rounds)
                                         for K in spectrum_local_steps(m, rounds, True)[0])
    elif rounds is not None:
        a, b, c = ROUNDS_FEDAVG if fed.spectrum is None else ROUNDS_FEDAVG_SPECTRUM
        seconds = 2 * (a + b * m + c * m * m)
        if fed.spectrum is not None:
            seconds += 2 * sum(sigma_k_seconds(m, K, rounds)
                               for K in spectrum_local_steps(m, rounds)[0] if K > 1)
        if "pfedme" in methods and fed.spectrum is None:
            seconds += 3 * (rounds + 1) * (ROUNDS_PFEDME[0] + ROUNDS_PFEDME[1] * m)
        elif "pfedme" in methods:
            a, b, c, e = ROUNDS_PFEDME_SPECTRUM
            seconds += 3 * (a + b * m + (rounds + 1) * (c + e * m))
        out["rounds"] = SAFETY * seconds
    return out


def _shift_curve_seconds(fed, K: int, rounds: int) -> float:
    """One FedAvg curve under covariate shift: the edges' scan and the contour (K = 1:
    ``shift.cost``, on the fewest nodes 2 T + 16; K >= 2: ``rounds.sigma_k_seconds``, the
    shared spectrum's pencils), capped at ``rounds.SHIFT_ALLOWANCE`` beyond which the route
    refuses (the edges' scan still run)."""
    from riskcalc.linear.dynamics.shift.cost import edge_seconds, shift_seconds
    from riskcalc.linear.engine.joint_spectrum import joint_spectrum

    joint = joint_spectrum(list(fed.spectra), fed.d)
    ntype, atoms = len(joint.values), joint.weights.size
    work = (shift_seconds(fed.m, ntype, atoms, 2 * rounds + 16) if K == 1
            else sigma_k_seconds(fed.m, K, rounds))
    return edge_seconds(ntype, atoms) + min(SHIFT_ALLOWANCE, work)


def advice(estimates: dict, limit: float, clients: int | None = None) -> str:
    """What brings the estimate under ``limit`` seconds: the pipelines to keep (leaving out
    the slowest first), or fewer clients (not at two ``clients``, the fewest a federation has:
    it was advised at 2). A pipeline estimated at 0 s (skipped: fine-tuning steps under
    covariate shift) is not suggested."""
    kept = {k: v for k, v in estimates.items() if v > 0}
    while kept and sum(kept.values()) > limit:
        kept.pop(max(kept, key=kept.get))
    slow = ", ".join(f"{'--' * (k == 'rounds')}{k} ~{_duration(v)}" for k, v in sorted(
        estimates.items(), key=lambda kv: -kv[1]) if k not in kept and v > 0)
    rounds = "rounds" in estimates and "rounds" not in kept
    kept.pop("rounds", None)
    if kept:
        return (f"the slowest pipelines are {slow}: --methods {','.join(kept)}"
                f"{' without --rounds' if rounds else ''} would take about "
                f"{_duration(sum(kept.values()))}")
    if clients is not None and clients <= 2:
        return f"every pipeline alone exceeds it ({slow}) at two clients, the fewest there are"
    return f"every pipeline alone exceeds it ({slow}): use fewer clients"


def _duration(seconds: float) -> str:
    for unit, size in (("days", 86400.0), ("h", 3600.0), ("min", 60.0)):
        if seconds >= size:
            return f"{seconds / size:.3g} {unit}"
    return f"{seconds:.3g} s"
