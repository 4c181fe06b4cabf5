"""Time estimates of the rounds limits under covariate shift (``shift.one_step``): checked
against ``rounds_limit``'s max_seconds before the work they estimate."""

from __future__ import annotations

#: Most estimated process seconds of the double contour by default (``shift_seconds``;
#: ``rounds_limit``'s max_seconds sets another).
MAX_SECONDS = 600.0


def shift_seconds(M, ntype, atoms, n):
    """Estimated process seconds of the two-point sums on a contour of n nodes, M clients of
    ntype distinct covariances on a joint measure of ``atoms`` atoms: (n / 2) n ntype^2 (1.2e-7
    M + 1.5e-8 atoms) (the batched types x types solves, which run at their overheads up to
    ntype ~ 20, and the moments over the atoms), fitted to process CPU (OMP 1, a loaded 2-core
    machine) of (M, types, atoms, T) = (10, 5, 2, 200): 2.1 s, (10, 10, 2, 100): 2.0 s, (20,
    10, 2, 50): 1.3 s, (20, 20, 2, 200): 42 s, (3, 3, 1000, 50; 584 nodes): 20 s (the estimate
    1.2-2.2 times these; peak memory 110-140 MB)."""
    return (n // 2) * n * ntype ** 2 * (1.2e-7 * M + 1.5e-8 * atoms)


def edge_seconds(ntype, atoms):
    """Estimated process seconds of ``ShiftLaws.edges``: about 3300 Newton residuals on the
    real axis, each O(ntype^2 atoms) (Tbar) and an ntype x ntype solve, fitted to process CPU
    (OMP 1, load 5-6) of ntype distinct two-point covariances on ntype + 1 joint atoms: 0.22 /
    0.19 / 0.20 / 0.58 / 1.6 / 5.5 / 31 s at ntype = 2 / 10 / 30 / 60 / 120 / 240 / 480 (2950-3060
    residuals each; the estimate 1.1-1.8 times these)."""
    return 3300 * (8e-5 + 2.5e-8 * ntype ** 2 + 1e-10 * ntype ** 2 * atoms)
