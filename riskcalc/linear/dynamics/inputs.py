"""Checked inputs of the rounds limits (``riskcalc.linear.dynamics.api.rounds_limit`` and its
tuning): per-client arrays, the rounds and local steps asked, the client weights, the clients'
covariances under covariate shift (``shift_inputs``), the step sizes and penalty against the
clients (``checked_steps``), and the work and range limits that bound every curve before it is
solved (issues 29 and 32).
"""

from __future__ import annotations

import numpy as np

from riskcalc._validate import (MAX_INT, SCALE_MAX, as_array, ints_beyond, parameter, per_client,
                                positive)
from riskcalc._text import distinct, shown_apart


def client_arrays(gamma, r, sigma):
    """(gamma, r, sigma) as float arrays over the clients, each checked in its range."""
    vals = per_client({"gamma": gamma, "r": r, "sigma": sigma})
    return tuple(parameter(k, vals[k]) for k in ("gamma", "r", "sigma"))


#: Most cells (rounds asked) x (contour nodes) of one curve: each T is a row over the contour,
#: whose nodes grow as 2 max(T) + 16 (``fedavg._contour``, at most ``MAX_NODES``). Measured
#: (FedAvg, M = 1, a loaded 2-core machine): 4000 rounds up to T = 4000, 8.6e6 cells, 18 s;
#: 10^6 rounds asked for 32 GiB. Checked before any solve, on max(T) (the contour may stop
#: short of it when the iteration settles sooner).
MAX_ROUND_CELLS = 1e7


def check_work(count: int, top: float, name: str = "rounds",
                advice: str = "ask for fewer rounds, e.g. every 10th T of the range") -> None:
    """ValueError naming ``name`` when ``count`` rounds up to T = ``top`` exceed
    ``MAX_ROUND_CELLS``."""
    from riskcalc.linear.dynamics.fedavg import MAX_NODES

    cells = count * (min(top, MAX_NODES // 2) + 8)
    if cells > MAX_ROUND_CELLS:
        raise ValueError(f"{name}: {count} rounds up to T = {top:.0f} cost {cells:.3g} contour "
                         f"evaluations (more than {MAX_ROUND_CELLS:.0g}: minutes and gigabytes); "
                         f"{advice}")


def rounds_array(rounds):
    """The rounds T asked (integers 0..2^53 or inf, each once, as the command line's
    ``--rounds``: ``distinct``), as a float array, within ``check_work``."""
    arr = np.atleast_1d(as_array("rounds", rounds, low=0.0, allow_inf=True, ndim=1)).ravel()
    if arr.size == 0:       # was "must be integers ..., got []"
        raise ValueError("rounds must list at least one number of rounds T (integers in "
                         f"0..{MAX_INT} (2^53) or numpy.inf), got an empty list")
    fin = np.isfinite(arr)
    # ints_beyond: rounds=[2**53 + 1] was solved as T = 2^53, its float
    if (np.any(arr[fin] != np.round(arr[fin])) or np.any(arr[fin] > MAX_INT)
            or ints_beyond(rounds, MAX_INT)):
        raise ValueError(f"rounds must be integers in 0..{MAX_INT} (2^53) or numpy.inf, got "
                         f"{rounds!r}"[:200])
    distinct("rounds", arr.tolist())    # rounds=[5, 5] solved and returned column 5 twice
    check_work(arr.size, arr[fin].max(initial=0.0))
    return arr


def local_steps_count(local_steps):
    """K: one integer in 1..2^53, or inf (the exact local solve)."""
    K = as_array("local_steps", local_steps, low=1.0, allow_inf=True)
    if K.ndim or (np.isfinite(K) and (K != np.round(K) or K > MAX_INT
                                      or ints_beyond(local_steps, MAX_INT))):
        raise ValueError(f"local_steps must be one integer in 1..{MAX_INT} (2^53) or numpy.inf, "
                         f"got {local_steps!r}")
    return float(K) if np.isinf(K) else int(K)


def step_size_value(step_size, K):
    """The local step size (None where not given) for K local steps, read as the rounds
    limits and their simulations both read it: a number in (0, 1e100], refused with K = inf
    (the exact local solve takes no step: it was taken and dropped silently)."""
    # At most SCALE_MAX: beyond it the local filter's powers overflow the quadratures (measured:
    # 1e100 answers, inf where it overflows; 1e150 a SolverError blaming lam or u).
    eta = None if step_size is None else float(as_array("step_size", step_size, low=0.0,
                                                        low_open=True, high=SCALE_MAX, ndim=0))
    if eta is not None and np.isinf(K):
        raise ValueError(f"step_size = {eta:g}: local_steps=inf is the exact local solve, no "
                         "step: step_size applies to finite local_steps only; leave it out")
    return eta


#: Smallest local step size with finite local_steps: below it 1 - (1 - step_size s)^K loses
#: its digits to rounding (measured, FedAvg M = 1, T = 1: exact to 1e-16 down to 1e-14, wrong
#: in the 5th digit at 1e-15, and below that a refusal blaming gamma).
MIN_STEP_SIZE = 1e-12


def check_step_floor(eta, K, top: float, covariance: str = "",
                     names=("step_size", "local_steps")) -> None:
    """ValueError when finite local steps of size ``eta`` times ``top``, the largest eigenvalue
    of the covariance (1 for Sigma = I; a shared spectrum's top atom, or under covariate shift
    the clients' largest eigenvalue), fall below ``MIN_STEP_SIZE``: the local filter
    1 - (1 - eta s)^K then loses its digits to rounding. The routes solve at the scale of that
    eigenvalue (``sigma.guards.unit_top``), so the product counts (scaled:1e100 at step 1e-101,
    step x top 0.1, was refused on eta alone). ``covariance``: "spectrum" or "covariances"
    (shift), "" for Sigma = I; under either, one local step keeps the floor on eta alone (its
    closed-form routes answer the server model at scaled:1e-100, step 0.1). ``names``: the
    step size and the local steps as the caller calls them (the command line's options)."""
    name = names[0]
    if eta is None or not np.isfinite(K) or eta * top >= MIN_STEP_SIZE:
        return
    if not covariance:
        raise ValueError(f"{name} must be >= {MIN_STEP_SIZE:g} with finite {names[1]}, got "
                         f"{eta:g}: below it the local filter 1 - (1 - step_size s)^K is lost "
                         "to rounding (the curve would be silently wrong)")
    if K == 1 and eta >= MIN_STEP_SIZE:
        return
    raise ValueError(f"{name}: step_size times the largest eigenvalue of the {covariance} is "
                     f"{eta * top:.3g}, below {MIN_STEP_SIZE:g}: the local filter 1 - (1 - "
                     "step_size s)^K is lost to rounding; raise step_size (or rescale the "
                     "covariance)")


#: Most local steps solved as such: the exact route sums over the K roots of the local filter
#: at every contour node (measured, M = 2 clients, 3 rounds: 7 s at K = 1000, 30 s at 10^4,
#: more than 2 minutes and 1 GB at 10^5; K = 10^9 asked for 8 GB for the roots alone).
MAX_LOCAL_STEPS = 10_000

#: Fewest local steps taken as the exact local solve when they reach it to rounding
#: (``effective_steps``): K = 5000 steps of 0.1 at gamma (0.5, 2), exact to 2^-53, took 22 s
#: (FedAvg) and 135 s (Algorithm 1, lam 1) where K = inf takes 0.05-0.3 s (fuzz40 path F2);
#: below it K steps are solved as such (the tests compare K = 400 with K = inf that way).
EXACT_FROM = 1000


def check_memory_used(gigabytes, name, K, covariance: bool, flag: str = "max_gigabytes"):
    """ValueError for a memory limit that no route of the call reads (safety.rst: an option
    without effect is an error): at Sigma = I FedAvg's routes and the exact prox (K = inf)
    estimate no memory (``max_gigabytes=1e-9`` answered there; fuzz42 path F4); Algorithm 1
    with finite K does (``algorithm1.cost``), as every route under a covariance."""
    if gigabytes is not None and not covariance and (name == "fedavg" or np.isinf(K)):
        what = "FedAvg" if name == "fedavg" else "Algorithm 1 with exact local solves"
        raise ValueError(f"{flag} does not apply to {what} at Sigma = I (no route there "
                         "estimates its memory); it bounds the routes under a covariance and "
                         "Algorithm 1 with finite local_steps: leave it out")


def effective_steps(K, eta: float, gam, lam: float = 0.0):
    """K, or inf when K >= ``EXACT_FROM`` local steps are the exact local solve to rounding:
    q(s) = 1 - (1 - eta s)^K is 1 within 2^-53 on every client's continuous spectrum
    [(1 - sqrt g)^2, (1 + sqrt g)^2] (and 0 at its atom at 0 for any K). Algorithm 1 (``lam``
    > 0): its warm-started steps on f_j + lam/2 ||. - w||^2 contract by (1 - eta (s + lam)) per
    step, the atom at 0 too, and reach the exact prox to rounding likewise (measured: K = 1000
    took 2.4 s, 10^4 and more ran for minutes unestimated; the gap to the prox falls like
    (1 - eta lam)^K). ValueError beyond ``MAX_LOCAL_STEPS`` otherwise."""
    if np.isinf(K) or K < EXACT_FROM:
        return K
    lo, hi = (1.0 - np.sqrt(gam)) ** 2 + lam, (1.0 + np.sqrt(gam)) ** 2 + lam
    worst = np.maximum(np.abs(1.0 - eta * lo), np.abs(1.0 - eta * hi))
    if lam > 0:
        worst = np.maximum(worst, np.where(gam > 1.0, abs(1.0 - eta * lam), 0.0))
    if np.all(worst < 1.0) and np.all(K * np.log(worst) <= -53 * np.log(2.0)):
        return np.inf
    if K <= MAX_LOCAL_STEPS:
        return K
    why = ("a client with gamma_j near 1 has spectrum near 0, where (1 - step_size s)^K stays "
           "near 1" if lam == 0 else f"|1 - step_size (s + lam)|^K, at most (1 - "
           f"{1.0 - worst.max():.3g})^K on the clients' spectra, is not yet below 2^-53")
    raise ValueError(f"local_steps = {K}: more than {MAX_LOCAL_STEPS} local steps that still "
                     f"differ from the exact local solve ({why}) cost minutes per curve here; "
                     f"give local_steps <= {MAX_LOCAL_STEPS}, or numpy.inf for the exact local "
                     "solve")


def rounds_notes(gam, K, eta, lam, covariance) -> tuple:
    """``RoundsLimit.notes`` (``covariance``: a spectrum or covariate shift): finite local
    steps solved as the exact local solve they equal to rounding (Sigma = I,
    ``effective_steps``), and pooled samples that do not span R^d, where training from 0 never
    learns theta_0's part outside their span (sum_j 1/gamma_j < 1)."""
    out = []
    if (np.isfinite(K) and not covariance
            and np.isinf(effective_steps(K, eta, gam, lam or 0.0))):
        out.append(f"local_steps = {K}: within rounding of the exact local solve (max_j "
                   "abs(1 - step_size (s + lam))^K < 2^-53 on the clients' sample spectra, "
                   "lam = 0 for FedAvg), solved as local_steps = inf")
    inv = float(np.sum(1.0 / gam))
    if inv < 1.0:
        out.append(f"pooled N / d = sum_j 1/gamma_j = {inv:.6g} < 1: the pooled samples do not "
                   "span R^d, and training from 0 never learns the part of theta_0 outside "
                   "their span (signal^2 (1 - N / d) under Sigma = I); T = inf is the pooled "
                   "min-norm solution")
    return tuple(out)


def weight_vector(weights, gam):
    """The clients' weights p_j (summing to 1) from "samples", "uniform" or a vector."""
    from riskcalc.linear.client_weights import check_weights, client_weight_vector, client_weights

    if isinstance(weights, str):
        return client_weights(gam, np.ones(gam.size), check_weights(weights))
    if weights is None:     # was "weights must be a real number, got None"
        raise ValueError("weights must be 'samples', 'uniform' or one positive number per "
                         f"client ({gam.size}), got None")
    return client_weight_vector(weights, gam.size)


#: Largest gamma_j of a federation (M >= 2) along the rounds, by method. Measured with gamma =
#: (0.5, G): Algorithm 1's own models at T = inf against ``clients_limit("pfedme")`` (the same
#: fixed point by another route) agree to 1e-8 at G = 1e5, are 8e-7 off at 3e5, 1.2e-5 at 1e6
#: and 7% at 1e8 (refused by other edge solves at 1e7, 3e7); FedAvg's edge solve fails from
#: G = 1e12 ("inputs beyond floating point range?") and answers at 1e10.
GAMMA_MAX = {"fedavg": 1e10, "pfedme": 1e5}


def check_step_scope(gam, L, lam, eta, K, g, top: str, complex_ok: bool = False,
                     pooled_ok: bool = False) -> None:
    """Raise a ValueError outside the scope of Algorithm 1's exact rate and curves with finite
    local steps (paper 004 Alg. 1; ``algorithm1.rate``'s module docstring): local steps at or
    past their stability edge eta (L + lam) = 2; odd K with eta (L + lam) > 1 and g lam > 1
    (complex eigenvalues) unless ``complex_ok``; pooled samples that do not span. ``L`` is the
    top of the clients' sample spectra, ``top`` how it is computed (for the message);
    ``sigma.algorithm1.pencil`` shares this check with its own L. The complex case reaches
    neither real-spectrum route through ``rounds_limit`` (``algorithm1.fold`` for Sigma = I,
    ``sigma.algorithm1.circles`` under a spectrum, which pass ``complex_ok``): the check keeps
    their real edge scans from being used there. Pooled samples that do not span (sum_j
    min(1, 1/gamma_j) < 1) with ``pooled_ok`` (the routes that hold the common null space apart,
    ``algorithm1.pooled``, ``sigma.algorithm1.pooled`` and ``shift.algorithm1.pooled``): within
    g lam <= 1 and eta (L + lam) <= 1."""
    if eta * (L + lam) >= 2.0:
        raise ValueError("step_size: Algorithm 1's local gradient steps diverge on a client "
                         f"(step_size (L + lam) = {eta * (L + lam):.6g} >= 2, L = {top} = "
                         f"{L:.6g}); give step_size < 2 / (L + lam)")
    if pooled_ok and np.sum(np.minimum(1.0, 1.0 / gam)) < 1.0:
        _check_pooled(L, lam, eta, K, g, top)
    if not complex_ok and K % 2 == 1 and eta * (L + lam) > 1.0 and g * lam > 1.0:
        raise ValueError("step_size: with an odd number of local steps, step_size > 1 / (L + "
                         f"lam) = {1.0 / (L + lam):.6g} (L = {top}) and global_step * lam = "
                         f"{g * lam:.6g} > 1, Algorithm 1's round map has complex eigenvalues, "
                         "outside this real-spectrum route (algorithm1.fold, or "
                         "sigma.algorithm1.circles under a spectrum, computes them)")
    if not pooled_ok and np.sum(np.minimum(1.0, 1.0 / gam)) < 1.0:
        raise ValueError("gamma: Algorithm 1 with finite local_steps needs the pooled samples "
                         "to span R^d (sum_j min(1, 1/gamma_j) >= 1) on this route; Sigma = I, "
                         "a shared spectrum and covariate shift (its dense pencil) cover pooled "
                         "N < d for global_step * lam <= 1 and step_size (L + lam) <= 1")


def _check_pooled(L, lam, eta, K, g, top: str) -> None:
    """ValueError outside the pooled N < d scope of ``algorithm1.pooled`` (its docstring):
    g lam > 1 (a negative spectrum, whose edge equation meets the null space's atom too), or
    eta (L + lam) > 1 (where a(s) = (1 - eta (s + lam))^K need not decrease, nor psi_z)."""
    where = ("Algorithm 1 with finite local_steps and pooled samples that do not span R^d "
             "(sum_j min(1, 1/gamma_j) < 1) is covered")
    if g * lam > 1.0:
        raise ValueError(f"global_step: {where} for global_step * lam <= 1 (got "
                         f"global_step * lam = {g * lam:.6g}); give global_step <= 1 / lam "
                         "(the default)")
    if eta * (L + lam) > 1.0:
        raise ValueError(f"step_size: {where} for step_size <= 1 / (L + lam) = "
                         f"{1.0 / (L + lam):.6g} (paper 004 Thm 2's condition; L = {top} = "
                         f"{L:.6g})")


def shift_inputs(method, spectra, spectrum, gamma, local_steps, d=None):
    """(spectrum, joint, specs) of ``rounds_limit``'s ``spectra`` (``riskcalc.linear.engine.
    joint_spectrum.spectra_joint``; specs as given, eigenvalue lists as lists), refusing what
    the shift routes do not cover: another method, clients counted differently
    (``shift.one_step`` K = 1, ``shift.curves`` K >= 2, ``shift.kinf`` K = inf)."""
    from riskcalc.linear.engine.joint_spectrum import spectra_joint

    spectrum, joint, specs = spectra_joint(spectra, spectrum, gamma, d)
    specs = [x if isinstance(x, str) else np.asarray(x, float).tolist() for x in specs]
    if joint is None:
        return spectrum, None, specs
    if method != "fedavg":
        raise ValueError("spectra (covariate shift) along the rounds: fedavg or pfedme only "
                         f"(got {method}); equal spectra are a shared spectrum")
    local_steps_count(local_steps)
    return None, joint, specs


#: Largest lam of Algorithm 1 along the rounds, in units of L, the top of the clients' sample
#: spectra (``_check_lam_scale``).
LAM_MAX_RATIO = 1e6


def _check_lam_scale(lam, gam, spectrum, joint) -> None:
    """ValueError when Algorithm 1's lam exceeds ``LAM_MAX_RATIO`` times L = max_j (1 +
    sqrt(gamma_j))^2 times the covariance's largest eigenvalue (``spectrum``, or under shift
    the ``joint`` spectrum's; Sigma = I: 1). The prox q(s) = s / (s + lam) then moves a model
    by about L / lam per round and the edges of the round map's spectrum, of that size, lose
    their digits (measured, Sigma = I, gamma (0.5, 3): relative error of the bottom edge 1e-9 at
    lam / L = 1.3e6, 6e-7 at 1.3e8; the contraction 1e-3 off at lam = 1e14; from 1e16 SolverError
    and ValueError blaming the contour or "pooled N = d" at N / d = 2.5)."""
    top = (1.0 if spectrum is None and joint is None else
           float(np.max(spectrum.atoms if joint is None else joint.values)))
    L = float(np.max((1.0 + np.sqrt(gam)) ** 2)) * top
    if lam > LAM_MAX_RATIO * L:
        raise ValueError(f"lam = {lam:g} is {lam / L:.3g} times the top of the clients' sample "
                         f"spectra L = {L:.4g} (max_j (1 + sqrt(gamma_j))^2 times the largest "
                         "eigenvalue of the covariance): the prox then moves a model by about "
                         "L / lam per round and the rounds limits lose the round map's edges "
                         f"to rounding; give lam <= {LAM_MAX_RATIO:g} L = "
                         f"{LAM_MAX_RATIO * L:.4g}")


def checked_steps(name, gam, K, step_size, lam, global_step, shared, spectrum, joint):
    """(eta, lam, g, sum_j 1/gamma_j) of ``rounds_limit``: the step sizes and penalty checked
    against the clients and the method before any route runs (``shared``: a spectrum other
    than the identity; ``joint``: covariate shift's joint spectrum or None). ValueError naming
    the parameter where no route covers the input."""
    inv = float(np.sum(1.0 / gam))
    if abs(inv - 1.0) <= 1e-9:
        # Every route refuses it (bottom edge ~ (inv - 1)^2 / 16 of the top, below their 1e-9);
        # at 1 + 1e-100 their edge solves failed first ("inputs beyond floating point range?").
        dev = "" if inv == 1.0 else f" {'+' if inv > 1 else '-'} {abs(inv - 1.0):.2g}"
        raise ValueError(f"gamma: the round map's spectrum reaches 0 (pooled N = d: sum_j "
                         f"1/gamma_j = 1{dev}, 1 within 1e-9); move gamma off the threshold")
    if name == "fedavg" and np.isinf(K) and joint is None and np.any(gam == 1.0):  # as shared
        raise ValueError("gamma: a client with gamma_j = 1 (n_j = d) has an exact local least "
                         "squares of infinite variance (S_j^+ unbounded); move gamma_j off 1")
    if gam.size > 1 and gam.max() > GAMMA_MAX[name]:
        raise ValueError(f"gamma: {gam.max():g} (client {int(np.argmax(gam))}, about d / "
                         f"{gam.max():.2g} samples) is beyond {GAMMA_MAX[name]:g}, the largest "
                         f"d / n_j the {name} rounds limits resolve in a federation (beyond it "
                         "their edge and contour solves lose the client's thin spectrum); such "
                         "a client holds almost no data: leave it out")
    eta = step_size_value(step_size, K)
    top = 1.0 if not shared and joint is None else float(np.max(
        spectrum.atoms if joint is None else joint.values))
    check_step_floor(eta, K, top, "" if not shared and joint is None else
                     "spectrum" if joint is None else "covariances")
    if name == "pfedme":
        if lam is None:
            raise ValueError("method pfedme (Algorithm 1) needs lam > 0")
        lam = float(positive("lam", lam, ndim=0))
        _check_lam_scale(lam, gam, spectrum if shared else None, joint)
        if np.isfinite(K) and eta is None:
            raise ValueError("step_size: Algorithm 1 with finite local_steps needs step_size "
                             "> 0 (its local gradient step eta)")
        g = 1.0 / lam if global_step is None else float(positive("global_step", global_step,
                                                                 ndim=0))
    else:
        if lam is not None:
            raise ValueError("method fedavg does not take lam")
        g = 1.0 if global_step is None else float(positive("global_step", global_step,
                                                           ndim=0))
        if eta is None and np.isfinite(K):
            raise ValueError("step_size: FedAvg with finite local_steps needs step_size > 0")
        # Sigma = c I: the top c (1 + sqrt(gamma_j))^2 (it takes Sigma = I's route since fuzz40
        # scale F1; scaled:1e4 at step 0.3 was "no real solution at the start of the scan").
        c = 1.0 if not shared else spectrum.identity_scale
        if c is not None and joint is None and np.isfinite(K) and K % 2 == 0 and np.any(
                eta * c * (1.0 + np.sqrt(gam)) ** 2 > 2.0):
            # Odd K keeps q(s) = 1 - (1 - eta s)^K increasing (q' = K eta (1 - eta s)^(K - 1)
            # >= 0): D stays positive semidefinite, the curves exact however large q grows (a
            # divergent local step is a result, as for K = 1). Even K makes q negative where
            # eta s > 2: D indefinite, its spectrum on both sides of 0, not covered here.
            top = eta * c * (1.0 + np.sqrt(gam)) ** 2
            what, tail = (("step_size (1 + sqrt(gamma_j))^2", "") if c == 1.0 else
                          ("step_size times its sample spectrum's top c (1 + sqrt(gamma_j))^2",
                           f", Sigma = c I with c = {c:g}"))
            raise ValueError("step_size: local gradient descent diverges on a client "
                             f"({what} = {shown_apart(top.max(), 2.0)} > 2{tail}) and "
                             f"local_steps = {K} is even: the local filter 1 - (1 - step_size "
                             "s)^K is then negative on part of the spectrum (the round map "
                             "indefinite), not covered; give a stable step_size or an odd "
                             "local_steps (a divergent local step is then a result)")
    return eta, lam, g, inv


def divergent_range(exc, name, gam, eta, K):
    """Re-raise ``exc`` of FedAvg's Sigma = I route saying why when its local steps diverge
    (odd K): the filter 1 - (1 - eta s)^K then grows like (eta s - 1)^K, and the round map's
    spectrum spans more than its edge and contour solves resolve (measured: gamma (0.5, 0.8),
    eta 1.5: K = 11 computed, within 7e-15 of ``steps_limit`` for one client; K = 13 needs
    more contour nodes than allowed, K >= 15 was refused as pooled N = d)."""
    if name != "fedavg" or eta is None or not np.isfinite(K):
        raise exc
    top = eta * (1.0 + np.sqrt(gam)) ** 2
    if not np.any(top > 2.0):
        raise exc
    qmax = float(np.max(1.0 - (1.0 - top) ** K))
    raise ValueError(f"step_size: the local steps diverge (step_size (1 + sqrt(gamma_j))^2 = "
                     f"{shown_apart(top.max(), 2.0)} > 2), so the local filter 1 - (1 - "
                     "step_size s)^K "
                     f"reaches {qmax:.3g} with local_steps = {K}: the round map's spectrum "
                     "spans more than its edge and contour solves resolve; give fewer "
                     "local_steps or a smaller step_size") from None
