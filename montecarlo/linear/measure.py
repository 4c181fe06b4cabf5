"""The target client's bias, variance and risk on a sampled instance, measured two ways.

Paper 003 (``003_4b976ddf5225c17e.txt``), eq. (3): L_i = B_i + V_i with
B_i = ||E[theta_hat_i | X, theta] - theta_i||_Sigma^2 and V_i = tr(Cov(theta_hat_i | X) Sigma).

* ``conditional``: the exact expectation of B_i and V_i given the designs X, over the noise and
  the uniform directions u_j of every theta_j - theta_0 (E[u u^T] = I/d). Low variance: the
  default.
* ``empirical``: ||e_b||_Sigma^2, ||e_v||_Sigma^2 and ||e_b + e_v||_Sigma^2 for the sampled
  directions and noise, where e_b and e_v are the noise-free and noise parts of the error (every
  estimator is linear in y); the risk is the exact expected test loss of the fitted model.

Speed (the linear algebra is the whole cost): each client is decomposed once,
X X^T / n = U diag(mu) U^T (an n x n eigendecomposition), and every estimator acts on its data
through omega(mu) and f(mu) (``montecarlo.linear.estimators``), so a whole lam grid costs O(n) (oracle)
or O(n^2) (federated) per value after that decomposition: with W = X^T U diag(n mu)^(-1/2), the
personalization's residual operator is I - W diag(f) W^T, and the traces below reduce to n x n
matrices (the Woodbury/push-through form; no d x d inverse per lam). A client with more
samples than dimensions (n > d) is decomposed through X^T X instead, which has the same positive
eigenvalues (a d x d problem, not n x n). The federated global model is one d x d system
accumulated from stacked blocks of U^T X_j by symmetric rank-k updates, never one d x d matrix
per client. Small decompositions run with one BLAS thread (``montecarlo.linear.decomposition``).
``measure_many`` measures several methods on one instance from one decomposition of each client.
"""

from __future__ import annotations

from contextlib import nullcontext

import numpy as np
import scipy.linalg as sla

from montecarlo.linear import decomposition
from montecarlo.linear.estimators import get_estimator
from montecarlo.linear.instances import Instance
from montecarlo.runner.threads import small_blas
from riskcalc._validate import as_array, one_of, positive, positive_int

KINDS = ("conditional", "empirical")

# Rows of U_j^T X_j stacked per GEMM when accumulating the global system: large enough for BLAS
# efficiency, small enough to keep the stacked block in cache-friendly memory.
_CHUNK_ROWS = 4096

def measure(inst: Instance, method: str, tunings, *, kind: str = "conditional",
            steps: int | None = None, step_size: float | None = None) -> dict:
    """Bias, variance and risk of the target client (client 0) for each tuning value.

    Paper 003 (``003_4b976ddf5225c17e.txt``), eq. (3), for the estimators of eqs. (6)-(14)
    (see ``montecarlo.linear.estimators``); with ``steps``, the personalization is that many full-batch
    gradient steps instead (Algs. 5-6 of Sec. 7; the risk after finite personalization of
    Figs. 5-6). One method's ``measure_many``.

    Parameters
    ----------
    inst : Instance
        A sampled instance (``montecarlo.linear.instances.sample_instance``).
    method : str
        A name of ``ESTIMATORS``.
    tunings : array_like
        Values of the method's tuning parameter (lam or alpha; ignored by untuned methods); one
        decomposition serves them all.
    kind : {"conditional", "empirical"}
        See the module docstring.
    steps : int, optional
        Number of personalization gradient steps (None: converged, the closed forms).
    step_size : float, optional
        Their step size (required with ``steps``, refused without). Both are ignored, like
        ``tunings``, by a method without personalization (FedAvg), so that a batch of
        ``measure_many`` shares them; ``compare`` and ``sweep`` refuse them there.

    Returns
    -------
    dict
        ``bias``, ``variance``, ``risk``: float arrays, one entry per tuning value.
    """
    return measure_many(inst, [(method, tunings)], kind=kind, steps=steps,
                        step_size=step_size)[0]


def measure_many(inst: Instance, requests, *, kind: str = "conditional",
                 steps: int | None = None, step_size: float | None = None) -> list:
    """``measure`` for several methods on one instance, decomposing its designs once.

    Parameters
    ----------
    inst : Instance
        A sampled instance.
    requests : sequence of (method, tunings)
        The methods (names of ``ESTIMATORS``) and each one's tuning values, as for ``measure``.
    kind, steps, step_size
        As for ``measure``, shared by every request.

    Returns
    -------
    list of dict
        One ``measure`` result per request, bit-identical to calling ``measure`` on each.
    """
    # Checked as every entry point checks them: tunings [nan] or [-1] measured rtfa as ftfa,
    # ["1"] was read as a number, steps -1 or 1.5 gave a bias, step_size nan an overflow
    # (fuzz41 measure F3).
    # Was: measure(None, ...) an AttributeError, a request ("rtfa",) "not enough values to
    # unpack" (fuzz42 sim F9).
    if not isinstance(inst, Instance):
        raise ValueError("inst must be a montecarlo.linear.instances.Instance (sample_instance"
                         f"(...)), got {type(inst).__name__}")
    try:
        requests = [(method, tunings) for method, tunings in requests]
    except (TypeError, ValueError):
        raise ValueError("requests must be a sequence of (method, tunings) pairs, got "
                         f"{requests!r:.60}") from None
    ests = [(get_estimator(method),
             np.atleast_1d(as_array("tunings", tunings, low=0.0, allow_inf=True, ndim=1)))
            for method, tunings in requests]
    if any(t.size == 0 for _, t in ests):
        raise ValueError("tunings must hold at least one value")
    if not one_of(kind, KINDS):
        raise ValueError(f"measure must be one of {', '.join(KINDS)}; got {kind!r}")
    if steps is not None:
        if step_size is None:
            raise ValueError("personalization steps need a step size > 0")
        steps = positive_int("steps", steps, minimum=0)
        step_size = float(positive("step_size", step_size, ndim=0))
    elif step_size is not None:
        # Was ignored: measure(step_size=0.1) measured the converged closed forms, silently
        # (compare refuses it; fuzz42 sim F4).
        raise ValueError(f"step_size = {step_size!r} is only used with steps (the "
                         "personalization gradient steps): give steps, or leave out step_size")
    federated = [inst.federated and est.centered for est, _ in ests]
    # At d <= decomposition.SMALL_GRAM every matrix of the measurement is small: a second BLAS thread gains
    # at most ~1.7x on an idle machine (the largest products, the global systems of M clients)
    # and loses far more on a busy one (benchmarks/bench_threads.py).
    with small_blas() if inst.d <= decomposition.SMALL_GRAM else nullcontext():
        # The federated global model needs every client (V formed in the decomposition's
        # loop); a method centered at the oracle only the target.
        decs = decomposition.decompose(inst.X if any(federated) else inst.X[:1], inst.s,
                         eager_v=any(federated))
        centers = []
        return [_measure(inst, est, tunings, kind, steps, step_size, fed,
                         decs if fed else [decs[0].fresh()], centers)
                for (est, tunings), fed in zip(ests, federated)]


def no_steps(method: str, est) -> None:
    """ValueError for personalization steps given to a method without personalization
    (FedAvg: every client keeps the global model, so steps changed nothing and compare fedavg
    --steps answered with a note; fuzz42 sim F8): ``compare`` and ``sweep``'s check."""
    if not est.personalized:
        raise ValueError(f"steps: {method} has no personalization (every client keeps the "
                         "global model), so personalization steps change nothing; leave out "
                         "steps and step_size")


def _measure(inst, est, tunings, kind, steps, step_size, federated, decs, centers):
    """One request of ``measure_many`` on the decompositions it needs (every client's for a
    federated center, else the target's); ``centers`` the federated global models already
    worked out in the call (``_shared``)."""
    target = decs[0]
    # Steps past the stability edge overflow: the risk is infinite, as predicted (inf - inf was
    # NaN, printed as simulated, with numpy's warnings; fuzz38 steps F1).
    with np.errstate(over="ignore", invalid="ignore") if steps is not None else nullcontext():
        filters = np.array([est.filter(target.mu, t, steps, step_size) for t in tunings])
        run = _conditional if kind == "conditional" else _empirical
        if not federated:
            out = run(inst, est, decs, None, filters, centers)
        elif not est.global_tuned:
            out = run(inst, est, decs, 0.0, filters, centers)
        else:
            parts = [run(inst, est, decs, t, filters[i:i + 1], centers)
                     for i, t in enumerate(tunings)]
            out = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
        # Each is a quadratic form, >= 0: a negative value is the rounding of its differences
        # (FedAvg's exact bias 0 at one client, gamma 0.5, was simulated -1.6e-15 and printed
        # so; fuzz39 fuzz F14). NaN stays NaN.
        out = {k: np.where(v < 0, 0.0, v) for k, v in out.items()}
        out["risk"] = out.get("risk", out["bias"] + out["variance"])
    if steps is not None:
        # Past the floats a diverging quantity is inf, unless nothing drives it: with every
        # r_j = 0 (sigma_j = 0) the bias (variance) is 0 at every step, where 0 * inf made NaN,
        # printed as overflow beside the limit's 0 (fuzz39 fuzz F11; the limits' fuzz38 F11).
        zero = {"bias": not np.any(inst.r), "variance": not np.any(inst.sigma)}
        zero["risk"] = zero["bias"] and zero["variance"]
        out = {k: np.where(np.isfinite(v), v, 0.0 if zero.get(k) else np.inf)
               for k, v in out.items()}
    return out


def _shared(centers, omegas, build):
    """``build()``, or its value already built in this ``measure_many`` call for the same
    global weights omega_j of every client: FedAvg, FTFA and RTFA share eq. (6)'s global model,
    whose d x d systems cost more than the rest of a measurement."""
    for key, value in centers:
        if all(np.array_equal(a, b) for a, b in zip(key, omegas)):
            return value
    value = build()
    centers.append((omegas, value))
    return value


# --- conditional (exact given X) ----------------------------------------------------------

def _conditional(inst, est, decs, global_tuning, filters, centers):
    t = decs[0]
    A = t.sigma_diag
    r, sigma, d = inst.r[0], inst.sigma[0], inst.d
    own_var = sigma ** 2 * (filters ** 2 @ (A / t.nmu))
    uniform = np.all(inst.c == inst.c[0])
    if global_tuning is None and uniform:
        # Oracle center: error = -(I - W f W^T) r u + noise part; E[u u^T] = I/d and W^T W = I,
        # so tr(Sigma B^2) = tr(Sigma (I - W W^T)) + (1 - f)^2 . A, summed without the
        # difference tr(Sigma) - (2 f - f^2) . A, which rounding against tr(Sigma) ruined
        # (fuzz41 measure F1).
        bias = r ** 2 / d * (t.null_sigma + (1.0 - filters) ** 2 @ A)
        return {"bias": bias, "variance": own_var}
    W = t.V.T / np.sqrt(t.nmu)
    SW = inst.s[:, None] * W
    Afull = W.T @ SW
    if global_tuning is None and t.null_basis is not None:
        # E[u u^T] = diag(c) (the signal's share G(s) per eigenspace, riskcalc.Spectrum) and,
        # with n > d, a whole basis Q = [W, null]: B = Q diag(1 - f, 1) Q^T, so the bias is a
        # sum over Q^T Sigma Q and Q^T C Q, without ``_sandwich``'s differences against
        # tr(Sigma C) (a two-point:1e-8,1e8 bias 3.2e-9 was 0; fuzz41 measure F6).
        Q = np.hstack([W, t.null_basis])
        g = np.hstack([1.0 - filters, np.ones((len(filters), Q.shape[1] - W.shape[1]))])
        SQ, CQ = Q.T @ (inst.s[:, None] * Q), Q.T @ (inst.c[:, None] * Q)
        return {"bias": r ** 2 * np.einsum("la,ab,ab,lb->l", g, SQ, CQ, g),
                "variance": own_var}
    if global_tuning is None:
        # E[u u^T] = diag(c): the signal's share G(s) per eigenspace (riskcalc.Spectrum).
        return {"bias": r ** 2 * _sandwich(inst.s @ inst.c, inst.c[:, None] * W, inst.s, W,
                                           Afull, filters),
                "variance": own_var}
    if not uniform:
        raise ValueError("the federated global model needs the signal direction uniform "
                         "(spectrum signal weights equal to its weights)")
    omegas = [est.global_weight(dec.mu, global_tuning) for dec in decs]
    tb, MbW, tv, MvW, Z1, Z2 = _shared(centers, omegas,
                                       lambda: _center_terms(inst, decs, omegas, W, SW))
    g = sigma ** 2 * inst.a[0] * omegas[0] * filters
    cross = g @ Z1 - np.einsum("lk,kj,lj,jk->l", g, Afull, filters, Z2)
    return {"bias": _sandwich(tb, MbW, inst.s, W, Afull, filters),
            "variance": _sandwich(tv, MvW, inst.s, W, Afull, filters) + 2 * cross + own_var}


def _center_terms(inst, decs, omegas, W, SW):
    """The filter-free parts of the conditional risk around the federated center: of the bias
    and noise matrices Mb, Mv, only what ``_sandwich`` reads (tr(Sigma M) and M W), and the
    cross terms Z1, Z2 (one center, every method's filters)."""
    # Federated center c = theta_0 + e0 with e0 = D sum_j a_j X_j^T Omega_j (X_j r_j u_j + xi_j)
    # and D = G^-1: the target's error is B (e0 - r u_0) + L xi_0 with B = I - W f W^T, so
    # Mb = (D Q D - r^2 a_0 (D F + F D) + r^2 I) / d and Mv = D P D, F = X_0^T Omega_0 X_0.
    # Only their products with the n_0 columns of W and their Sigma-traces enter the risk:
    # D (Q (D W)) is O(d^2 n_0), not the O(d^3) of D Q D, and both traces are sums against
    # one D Sigma D (tr(Sigma D Q D) = <D Sigma D, Q>).
    t, r, d, s = decs[0], inst.r[0], inst.d, inst.s
    G, Q, P = _accumulate(decs, [
        [inst.a[j] * om, (inst.r[j] * inst.a[j]) ** 2 * om ** 2 * dec.nmu,
         (inst.sigma[j] * inst.a[j]) ** 2 * om ** 2]
        for j, (dec, om) in enumerate(zip(decs, omegas))])
    # G^-1 from its Cholesky factor by potri: two thirds of the time of the d triangular
    # solves against I, and the inverse comes out symmetric (its upper triangle mirrored).
    D = sla.lapack.dpotri(sla.cho_factor(G, check_finite=False)[0], lower=0)[0]
    D = np.triu(D) + np.triu(D, 1).T
    DW = D @ W
    Z2 = W.T @ DW
    k = W.shape[1]
    DQW_DPW = D @ np.hstack([Q @ DW, P @ DW])
    E = D * np.sqrt(s)
    DSD = E @ E.T
    # F = X_0^T Omega_0 X_0 = W diag(g) W^T with g = om_0 n mu (X_0 W = U_0 diag(sqrt(n mu)))
    # and W^T W = I: F W = W diag(g), so D F W = (D W) diag(g) and F D W = W diag(g) Z2, and
    # tr(Sigma D F) = tr(Sigma F D) = sum of s * (D W) * W g.
    g, ra = omegas[0] * t.nmu, r ** 2 * inst.a[0]
    DFW, FDW = DW * g, W @ (g[:, None] * Z2)
    MbW = (DQW_DPW[:, :k] - ra * (DFW + FDW)) / d + r ** 2 / d * W
    tb = (np.vdot(DSD, Q) - 2 * ra * np.einsum("i,ik,ik,k->", s, DW, W, g)) / d \
        + r ** 2 / d * s.sum()
    return tb, MbW, np.vdot(DSD, P), DQW_DPW[:, k:], np.einsum("ij,ij->j", SW, DW), Z2


def _sandwich(trace, MW, s, W, Afull, f):
    """tr(Sigma B M B) for B = I - W diag(f) W^T and M symmetric, from ``trace`` = tr(Sigma M)
    and ``MW`` = M W, one value per row of f."""
    h = np.einsum("j,jk,jk->k", s, W, MW)
    return trace - 2 * f @ h + np.einsum("lk,km,lm->l", f, Afull * (W.T @ MW), f)


def _accumulate(decs, weights):
    """sum_j V_j^T diag(w_jq) V_j for each weight family q, in stacked blocks of clients."""
    d = decs[0].X.shape[1]
    out = [np.zeros((d, d)) for _ in weights[0]]
    block, wblock, rows = [], [], 0

    def flush():
        V = None
        for q, acc in enumerate(out):
            w = np.concatenate([wb[q] for wb in wblock])
            if (w >= 0).all():
                # Every weight family of the estimators is >= 0, so V^T diag(w) V = B^T B with
                # B = diag(sqrt(w)) V, filled block by block (no stacked copy of V): numpy runs
                # B.T @ B as a symmetric rank-k update (syrk), half the flops of V^T (w V).
                B, root = np.empty((rows, d)), np.sqrt(w)[:, None]
                r0 = 0
                for Vj in block:
                    r1 = r0 + Vj.shape[0]
                    np.multiply(root[r0:r1], Vj, out=B[r0:r1])
                    r0 = r1
                acc += B.T @ B
            else:
                V = np.vstack(block) if V is None else V
                acc += V.T @ (w[:, None] * V)

    for dec, w in zip(decs, weights):
        block.append(dec.V)
        wblock.append(w)
        rows += dec.V.shape[0]
        if rows >= _CHUNK_ROWS:
            flush()
            block, wblock, rows = [], [], 0
    if block:
        flush()
    return out


# --- empirical (sampled directions and noise) -----------------------------------------------

def _empirical(inst, est, decs, global_tuning, filters, centers):
    t = decs[0]
    theta0 = inst.theta[0]
    d = inst.d
    if global_tuning is None:
        c_b = c_v = np.zeros(d)
    else:
        omegas = [est.global_weight(dec.mu, global_tuning) for dec in decs]
        c_b, c_v = _shared(centers, omegas, lambda: _global_fit(inst, decs, omegas))
    # theta_hat = c + X^T U diag(f / (n mu)) U^T (y - X c), split into noise-free and noise parts.
    scale = (filters / t.nmu).T  # (k, L)
    e_b = (c_b - theta0)[:, None] + t.lift(scale * t.proj(theta0 - c_b)[:, None])
    e_v = c_v[:, None] + t.lift(scale * (t.U.T @ inst.xi[0] - t.proj(c_v))[:, None])
    s = inst.s[:, None]
    return {"bias": (s * e_b ** 2).sum(0), "variance": (s * e_v ** 2).sum(0),
            "risk": (s * (e_b + e_v) ** 2).sum(0)}


def _global_fit(inst, decs, omegas):
    """Noise-free and noise parts of the federated global model (eqs. 6, 12, 14) with the
    global weights omega_j."""
    (G,) = _accumulate(decs, [[inst.a[j] * om] for j, om in enumerate(omegas)])
    rhs = np.zeros((inst.d, 2))
    for j, (dec, om) in enumerate(zip(decs, omegas)):
        z = np.column_stack([dec.V @ inst.theta[j], dec.U.T @ inst.xi[j]])
        rhs += dec.V.T @ (inst.a[j] * om[:, None] * z)
    sol = sla.cho_solve(sla.cho_factor(G, check_finite=False), rhs, check_finite=False)
    return sol[:, 0], sol[:, 1]
