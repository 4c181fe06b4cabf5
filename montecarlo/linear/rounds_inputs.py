"""The checked parameters of a simulation along federated training (``rounds.simulate_rounds``):
the same checks and ranges as ``riskcalc.rounds_limit``, so that a simulation runs exactly what the
limit takes, and the bounds of what the simulation can represent (its local filter, its memory);
the checked personalizations after round T and their filters (``personalization_keys``,
``personalization_filters``).
"""

from __future__ import annotations

import numpy as np

from montecarlo.linear.estimators import spectral_filter
from montecarlo.linear.instances import require_memory, sample_size
from montecarlo.linear.rounds_shift import shift_eigenvalues
from riskcalc._text import distinct
from riskcalc._validate import parameter, per_client, positive, positive_int
from riskcalc.linear.dynamics.inputs import local_steps_count, step_size_value
from riskcalc.linear.dynamics.personalize import personalization_filter
from riskcalc.linear.finite_clients import client_weight_vector
from riskcalc.spectrum import Spectrum

METHODS = ("fedavg", "fedprox", "pfedme")


def stalled_advice(gl: float, radius: float, lam=None, finite: bool = True) -> str:
    """What brings a round map's spectral radius ``radius`` below 1 (the simulations' refusal
    of rounds = inf): a larger global step where the server step ``gl`` (g, or g lam for
    Algorithm 1) is so small that 1 - gl x rounds to 1 (global_step 1e-300 was advised to
    "lower the step sizes"); where the radius is 1 to rounding (within 1e-12) otherwise, the
    round map's slowest factor is below rounding: steps too small for the covariance's scale,
    or Algorithm 1's ``lam`` far above it (its prox moves a model by about s / lam;
    scaled:1e-50 at lam 1 was advised to "lower the step sizes": fuzz42 path F3); ``finite``:
    finite local steps, whose step_size counts; smaller step sizes where the radius exceeds
    1."""
    if gl < 2.0 ** -52:
        return (f"the server step {gl:.3g} leaves 1 - step x at 1 to rounding: raise "
                "global_step")
    if radius <= 1.0 + 1e-12:  # 1 to the eigen-solver's rounding (K = 2: 1 + 2e-16)
        fix = ", ".join(["raise global_step"] + ["step_size"] * bool(finite) + (
            ["or give a lam nearer the covariance's eigenvalues"] if lam is not None else []))
        return ("the radius is 1 to rounding, not above it: the round map moves its slowest "
                "direction by less than rounding per round (a step too small for the "
                f"covariance's scale); {fix}, or rescale the covariance")
    return "lower the step sizes"


def personalization_keys(personalize) -> list:
    """The checked personalizations after round T: a list of dicts as
    ``riskcalc.linear.dynamics.personalize.personalization_filter`` returns them
    (``{"personalization": "ftfa", "steps", "step_size"}`` or ``{"personalization": "rtfa",
    "lam"}``), from a sequence of keyword dicts of ``RoundsLimit.personalized_risk``."""
    if isinstance(personalize, dict):
        personalize = [personalize]
    keys = []
    for kw in personalize if isinstance(personalize, (list, tuple)) else [personalize]:
        if not isinstance(kw, dict):
            # personalize="lam" was "dictionary update sequence element #0 has length 1".
            raise ValueError("personalize takes a dict ({'steps': k, 'step_size': e} for FTFA "
                             "or {'lam': l} for RTFA) or a list of them; got "
                             f"{type(kw).__name__} {kw!r:.60}")
        kw = dict(kw)
        unknown = sorted(set(kw) - {"steps", "step_size", "lam"})
        if unknown:
            raise ValueError(f"personalize entries take steps and step_size (FTFA) or lam "
                             f"(RTFA); got {', '.join(unknown)}")
        keys.append(personalization_filter(**kw)[1])
    return keys


def personalization_filters(keys) -> list:
    """The filters pi(mu) of ``personalization_keys``' entries (``estimators.spectral_filter``):
    FTFA 1 - (1 - e mu)^k, RTFA mu / (mu + lam)."""
    def make(key):
        if key["personalization"] == "rtfa":
            return lambda mu: spectral_filter(mu, key["lam"])
        return lambda mu: spectral_filter(mu, 0.0, key["steps"], key["step_size"])
    return [make(key) for key in keys]


def sample_sizes(params) -> np.ndarray:
    """n_j = round(d / gamma_j) of every client (``instances.sample_size``)."""
    d = np.shape(params["s"])[-1]
    return np.array([sample_size(d, g, f"client {j}") for j, g in enumerate(params["gamma"])])


def check_rounds(rounds) -> list:
    """An int T >= 0, ``numpy.inf``, or a non-empty sequence of them, each once (as
    ``riskcalc.rounds_limit``), as a list of floats."""
    if np.ndim(rounds) > 1:     # [[1, 2], [5, 7]] was read as four rounds (rounds_limit's range)
        raise ValueError("rounds must be a 1-d list of numbers, got an array of shape "
                         f"{np.shape(rounds)}")
    seq = list(np.atleast_1d(np.asarray(rounds, dtype=object)).ravel())
    if not seq:
        raise ValueError("rounds must list at least one T")
    for t in seq:
        if not (isinstance(t, (float, np.floating)) and np.isinf(t) and t > 0):
            positive_int("rounds", t, minimum=0)
    return distinct("rounds", [float(t) for t in seq])    # [5, 5] was simulated twice


#: Largest local filter abs(1 - step_size (s + lam))^K the simulation represents: its square
#: enters the traces (beyond, inf - inf made every value NaN, reported inf, the zero model of
#: T = 0 included, and a larger step_size an internal "zero-size array" error).
FILTER_MAX = 1e150


def check_filter(eta, K, lam, gamma, s) -> None:
    """ValueError when K local steps of size ``eta`` (on f_j + lam/2 ||. - w||^2: Algorithm 1's
    ``lam``, 0 for FedAvg) grow a direction past ``FILTER_MAX``, at the top of the clients'
    spectra about max_j (1 + sqrt(gamma_j))^2 max(s) + lam (``s``: the covariance's
    eigenvalues)."""
    top = float(np.max((1.0 + np.sqrt(gamma)) ** 2)) * float(np.max(s)) + lam
    grow = K * np.log10(max(abs(1.0 - eta * top), 1e-300))
    if grow > np.log10(FILTER_MAX):
        raise ValueError(f"step_size = {eta:g}: the local steps diverge and grow a direction "
                         f"by about 10^{grow:.0f} in one round (|1 - step_size top|^local_steps, "
                         f"top ~ {top:.3g}), past the floats this simulation carries "
                         f"({FILTER_MAX:g}); give a smaller step_size or fewer local_steps")


def rounds_params(method, *, gamma, r, sigma, signal, rounds, local_steps, step_size,
                  global_step=None, lam=None, weights="samples", spectrum=None, spectra=None,
                  d) -> dict:
    """The checked, JSON-serializable parameters of ``simulate_rounds`` (one task minus its
    seed and replicate)."""
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}; got {method!r}")
    method = "fedprox" if method == "pfedme" else method
    # The limit's checks (riskcalc._validate): real numbers, 1-d lists of one length, and the
    # one range of each parameter, so that a simulation runs exactly what rounds_limit takes.
    vals = {k: parameter(k, v) for k, v in per_client({"gamma": gamma, "r": r,
                                                       "sigma": sigma}).items()}
    gamma = vals["gamma"]
    m = gamma.size
    d = positive_int("d", d, minimum=2)     # the CLI's range (was: d = 1 simulated here)
    K = float(local_steps_count(local_steps))
    eta = step_size_value(step_size, K)
    if eta is None and not np.isinf(K):
        raise ValueError("step_size (> 0) is needed with finite local_steps")
    if method == "fedavg":
        if lam is not None:
            raise ValueError("lam applies to fedprox (Algorithm 1) only")
        lam, default_g = None, 1.0
    elif lam is None:   # was "lam must be a finite number in (0, inf), got nan" (fuzz42 path F9)
        raise ValueError("fedprox (Algorithm 1) needs lam > 0, its proximal penalty")
    else:
        lam = float(positive("lam", lam, ndim=0))
        default_g = 1.0 / lam
    g = default_g if global_step is None else float(positive("global_step", global_step,
                                                             ndim=0))
    if isinstance(spectrum, str):
        spectrum = Spectrum.parse(spectrum, d)
    if spectrum is not None and not spectrum.signal_is_uniform:
        raise ValueError("training dynamics need uniform signal directions: a spectrum with "
                         "signal_weights is refused")
    s = np.ones(d) if spectrum is None else spectrum.eigenvalues(d)
    if spectra is not None:     # covariate shift: (M, d), client j's covariance in row j
        s = shift_eigenvalues(spectra, spectrum, gamma, d)
    if eta is not None and not np.isinf(K):
        check_filter(eta, K, 0.0 if lam is None else lam, gamma, s)
    n = sample_sizes({"gamma": gamma, "s": s})
    # The clients' designs alone (was: a 3.6 TiB MemoryError at d = 10^6, after the checks).
    # Both doors' names (compare --rounds was told "lower d"; fuzz42 seams3 F7).
    require_memory(8.0 * float(n.sum()) * d, f"d = {d} with {m} client(s) (their designs)",
                   f"lower d or raise the smallest gamma_j (n_j = d / gamma_j rows: "
                   f"{float(n.max()):.3g} for client {int(np.argmax(n))}) (in Python; --d, "
                   "--gamma on the command line)")
    p = (n / n.sum() if isinstance(weights, str) and weights == "samples" else
         np.full(m, 1.0 / m) if isinstance(weights, str) and weights == "uniform" else
         client_weight_vector(weights, m))
    return dict(method=method, gamma=gamma.tolist(), r=vals["r"].tolist(),
                sigma=vals["sigma"].tolist(), signal=float(parameter("signal", signal, ndim=0)),
                rounds=check_rounds(rounds), local_steps=K, step_size=eta, global_step=g,
                lam=lam, p=p.tolist(), s=s.tolist())
