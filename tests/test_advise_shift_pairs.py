"""The (targets x clients) sums of the covariate-shift limits in O(M)
(``riskcalc.linear.finite_clients.shift.pairs``) against the literal O(M^2) sums written here,
their partial derivatives against complex steps of those literal sums."""

import numpy as np
import pytest

from riskcalc.linear.finite_clients.shift import pairs as shift_pairs

T = 3


def _case(seed, m=40, targets=25, heavy=False):
    rng = np.random.default_rng(np.random.SeedSequence([30, 2, seed]))
    typ = np.arange(m) % T
    count = rng.integers(1, 4, m).astype(float)
    alpha, beta_b, beta_v = (rng.uniform(0.1, 2.0, m) for _ in range(3))
    delta = rng.uniform(0.0, 0.02, m)
    if heavy:                    # clients with large weights: terms past the series' range
        delta[:4] = [0.5, 2.0, 9.0, 0.3]
    x = tuple(rng.uniform(0.2, 3.0, (targets, T)) for _ in range(4))
    tgt = rng.choice(m, targets, replace=False)
    return count, x, (alpha, beta_b, beta_v, delta), typ, tgt


def _literal(count, x, cols, typ, tgt):
    """sum_j others_tj (alpha_j psi2 + beta_b,j psi1), sum_j others_tj beta_v,j psi1, with
    others_tj = count_j - [j = tgt_t] (``finite_clients.shift``'s docstring)."""
    a, b, c, e = (v[:, typ] for v in x)
    alpha, beta_b, beta_v, delta = cols
    others = count - (np.arange(typ.size) == tgt[:, None])
    psi1 = a / (1 + delta * b)
    psi2 = c - delta * e * psi1
    return (np.sum(others * (alpha * psi2 + beta_b * psi1), axis=1),
            np.sum(others * beta_v * psi1, axis=1))


@pytest.mark.parametrize("heavy", [False, True])
def test_sums_equal_the_literal_sums(heavy):
    case = _case(1, heavy=heavy)
    new, old = shift_pairs.terms(*case), _literal(*case)
    for n, o in zip(new, old):
        assert np.max(np.abs(n - o) / np.abs(o)) < 1e-14


@pytest.mark.parametrize("power", [1, 2])
def test_cauchy_sums(power):
    rng = np.random.default_rng(np.random.SeedSequence([30, 3, power]))
    w = rng.normal(size=(2, 50)) + 1j * rng.normal(size=(2, 50))
    x = rng.uniform(0, 0.1, 50)
    x[:3] = [4.0, 0.9, 30.0]               # some terms summed literally
    y = rng.uniform(0.0, 2.0, 30) + 1e-30j
    want = np.sum(w[:, :, None] / (1 + x[:, None] * y) ** power, axis=1)
    for split in (True, False):
        got = shift_pairs.cauchy(w, x, y, power, split_sum=split)
        assert np.max(np.abs(got - want)) < 1e-14 * np.max(np.abs(want))
    # The imaginary part of the points: the complex step of the literal sum.
    assert np.max(np.abs(got.imag - want.imag)) < 1e-14 * np.max(np.abs(want.imag))


@pytest.mark.parametrize("heavy", [False, True])
def test_partials_are_the_derivatives_of_the_literal_sums(heavy):
    count, x, (alpha, beta_b, beta_v, delta), typ, tgt = _case(4, m=30, targets=12,
                                                              heavy=heavy)
    rng = np.random.default_rng(5)
    u = rng.uniform(0.1, 1.0, tgt.size)
    beta = beta_b + beta_v
    out = {"targets": np.zeros((4, tgt.size, T)), "columns": np.zeros((3, typ.size))}
    # Two blocks of targets, as ``shift.evaluate`` passes them.
    for k in (np.arange(5), np.arange(5, tgt.size)):
        shift_pairs.partials(out, k, u[k], tuple(v[k] for v in x), (alpha, beta, delta),
                             count, typ, tgt[k])
    h = 1e-30

    def total(xs, cols):
        # beta carried by the bias part: sum_j others (alpha psi2 + beta psi1).
        return _literal(count, xs, (cols[0], cols[1], 0 * cols[1], cols[2]), typ, tgt)[0]

    for q in range(4):
        for t in range(T):
            xs = list(x)
            xs[q] = xs[q].astype(complex)
            xs[q][:, t] += 1j * h
            want = total(tuple(xs), (alpha, beta, delta)).imag / h
            got = out["targets"][q, :, t]
            assert np.allclose(got, want, rtol=1e-13, atol=1e-15 * np.max(np.abs(want)))
    cols = [alpha, beta, delta]
    for q in range(3):
        want = np.empty(typ.size)
        for j in range(typ.size):
            moved = [c.astype(complex) for c in cols]
            moved[q][j] += 1j * h
            want[j] = u @ total(x, moved).imag / h
        assert np.allclose(out["columns"][q], want, rtol=1e-13,
                           atol=1e-14 * np.max(np.abs(want)))
