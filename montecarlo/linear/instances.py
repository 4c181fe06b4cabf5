"""Federated linear-regression instances sampled from a ``riskcalc.ClientSpec``.

The observation model of paper 003 (``003_4b976ddf5225c17e.txt``), Sec. 2: client j has
n_j = d / gamma_j observations y = X_j theta_j + xi_j, rows x = Sigma^(1/2) z with z of
independent standardized entries (Assumption A2), theta_j = theta_0 + r_j u_j with u_j uniform
on the unit sphere, and noise of variance sigma_j^2. Client 0 is the client the specification
describes (the "target"); clients 1..M-1 only feed the federated global model.

Everything is expressed in the eigenbasis of Sigma = V diag(s) V^T: the test loss
||e||_Sigma^2 and the uniform prior of u are invariant under the rotation, so an instance
stores X_j V (whose rows are (V^T z) * sqrt(s)) and the diagonal s. For Gaussian z the rotation
changes nothing in distribution; ``eigvecs="random"`` matters only for non-Gaussian features,
where V^T z no longer has independent entries. theta_0 = 0 without loss of generality: every
estimator here is equivariant under a common shift of all theta_j (its error does not depend
on theta_0), and the local baselines (eqs. 9-10) shrink toward 0 with ||theta_i|| = rho.
"""

from __future__ import annotations

import warnings
from dataclasses import asdict, dataclass

import numpy as np

from montecarlo.runner.budget import (CLIENT_SECONDS, FLOP_SECONDS, REPLICATE_SECONDS,
                                      require_memory)
from montecarlo.runner.seeding import replicate_rng
from riskcalc._validate import as_array, one_of, parameter, positive_int
from riskcalc.linear.model import ClientSpec
from riskcalc.spectrum import ordered_eigenvalues

DISTRIBUTIONS = ("gaussian", "rademacher", "student-t")
GLOBAL_MODELS = ("oracle", "federated")
WEIGHTS = ("uniform", "samples")
EIGVECS = ("aligned", "random")

# Sub-stream indices of ``replicate_rng(seed, rep, client, stream)``: fixed per purpose so that
# e.g. the target client's design is the same whatever the method, tuning or number of clients
# (common random numbers across a sweep and between the oracle and federated settings).
_FEATURES, _DIRECTION, _NOISE, _ROTATION = 0, 1, 2, 3


def _choice(name, value, options):
    if not one_of(value, options):
        raise ValueError(f"{name} must be one of {', '.join(options)}; got {value!r}")
    return value


def _others(name, values, key):
    """The other clients' values of ``key`` in its one range (gammas 1e-300 was taken: F19)."""
    if values is None:
        return None
    arr = np.atleast_1d(parameter(key, values, label=name))
    if arr.ndim > 1:        # was flattened: [[2, 3]] read as two clients' values
        raise ValueError(f"{name} must be a flat list (one value a client), got an array of "
                         f"shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} must list at least one value")
    return tuple(float(v) for v in arr)


def _cut(name, values, room, clients):
    """The first ``room`` of ``values`` (None if none), warning if more (fuzz41 api F3)."""
    if values is not None and len(values) > room:
        warnings.warn(f"{name} lists {len(values)} values where clients = {clients} uses "
                      f"{room}: the last {len(values) - room} go unused", stacklevel=4)
        values = values[:room] or None
    return values


@dataclass(frozen=True)
class Setting:
    """How a ``ClientSpec`` is turned into finite instances (what the theory leaves open).

    Parameters
    ----------
    d : int
        Dimension (>= 2, the command line's range); the target client has n = round(d / gamma)
        >= 1 observations.
    clients : int
        Number of clients M (>= 1) of the federated global model; ignored with the oracle.
        Default 100, as on the command line.
    global_model : {"oracle", "federated"}
        ``oracle``: the global model is the center theta_0 itself (the asymptotic limit of
        paper 003, Thms 1-4, isolating one client). ``federated``: the actual solution of the
        method's global objective (eqs. 6, 12, 14) over M simulated clients.
    weights : {"samples", "uniform"}
        Client weights p_j of the global objective: n_j / N (the default, as in
        ``riskcalc.limit`` and on the command line) or 1/M (paper 003, Sec. 3.1).
    eigvecs : {"aligned", "random"}
        Eigenvectors of Sigma (shared by all clients): the canonical basis, or Haar-random.
    features, noise : {"gaussian", "rademacher", "student-t"}
        Law of the standardized entries of z and of the noise (Student-t with ``df`` degrees
        of freedom, scaled to unit variance).
    df : float
        Student-t degrees of freedom, > 4 so that z has the moments beyond the fourth that
        Assumption A2 asks for.
    gammas, rs, sigmas : sequence of float, optional
        gamma_j, r_j, sigma_j of the other clients 1..M-1: client j takes entry (j - 1) modulo
        the length (a longer list is cut to M - 1 entries, with a warning); default: the target's.
    spectra : sequence of str, optional
        Covariate shift: each client's covariance as a SPEC, diagonal in one shared basis in
        the order of ``riskcalc.spectrum.ordered_eigenvalues``: the target's first (it must
        describe the ``ClientSpec``'s spectrum), then clients 1..M-1 (cycled as ``gammas``, cut
        to M entries). Default: every client has the target's covariance.
    """

    d: int
    clients: int = 100
    global_model: str = "oracle"
    weights: str = "samples"
    eigvecs: str = "aligned"
    features: str = "gaussian"
    noise: str = "gaussian"
    df: float = 5.0
    gammas: tuple | None = None
    rs: tuple | None = None
    sigmas: tuple | None = None
    spectra: tuple | None = None

    def __post_init__(self):
        # d >= 2 as on the command line (compare, sweep) and in simulate_rounds: d = 1
        # simulated a 1-dimensional problem here where the command line refuses it.
        object.__setattr__(self, "d", positive_int("d", self.d, minimum=2))
        object.__setattr__(self, "clients", positive_int("clients", self.clients))
        _choice("global model", self.global_model, GLOBAL_MODELS)
        _choice("weights", self.weights, WEIGHTS)
        _choice("eigvecs", self.eigvecs, EIGVECS)
        _choice("features", self.features, DISTRIBUTIONS)
        _choice("noise", self.noise, DISTRIBUTIONS)
        object.__setattr__(self, "df", float(as_array("df", self.df, low=4.0, low_open=True)))
        for name, key in (("gammas", "gamma"), ("rs", "r"), ("sigmas", "sigma")):
            others = _others(name, getattr(self, name), key)
            object.__setattr__(self, name, _cut(name, others, self.clients - 1, self.clients))
        if self.spectra is not None:
            spectra = np.atleast_1d(self.spectra)
            if spectra.ndim > 1:
                raise ValueError(f"spectra must be a flat list (one SPEC a client), got an "
                                 f"array of shape {spectra.shape}")
            bad = [x for x in np.asarray(self.spectra, dtype=object).ravel()
                   if not isinstance(x, str)]   # 1 was the SPEC '1' (fuzz41 api F10)
            if bad:
                raise ValueError(f"spectra must list SPEC strings (one a client), got "
                                 f"{type(bad[0]).__name__} {bad[0]!r:.40}")
            if not spectra.size:
                raise ValueError("spectra must list at least one SPEC")
            object.__setattr__(self, "spectra", _cut("spectra", tuple(str(x) for x in spectra),
                                                     self.clients, self.clients))

    def as_dict(self) -> dict:
        """Plain JSON-serializable fields (``Setting(**d)`` rebuilds it); ``spectra`` only when
        set, so that the task descriptions (and cache keys) of shared covariances keep their
        form."""
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(self).items()
                if not (k == "spectra" and v is None)}


@dataclass
class Instance:
    """One sampled federated problem, in the eigenbasis of Sigma (see the module docstring).

    Attributes
    ----------
    s : ndarray (d,)
        Eigenvalues of Sigma.
    X : list of ndarray (n_j, d)
        Client designs; ``X[0]`` is the target's.
    r, sigma, a : ndarray (M,)
        Signal norms r_j (rho for the local baselines), noise levels, and a_j = p_j / n_j,
        the weight of client j's squared error in the global objective (eq. 6).
    u : ndarray (M, d)
        Unit directions of theta_j - theta_0: uniform on the sphere, or, for a spectrum whose
        signal distribution G differs from H, uniform within each eigenspace of Sigma with the
        share G(s) of the squared norm on the eigenspace of s.
    c : ndarray (d,)
        E[u u^T] (diagonal in the eigenbasis): 1/d, or G(s) / #{j: s_j = s}.
    xi : list of ndarray (n_j,)
        Noise vectors.
    federated : bool
        Whether the global model is the federated solution (else the oracle theta_0 = 0).
    """

    s: np.ndarray
    X: list
    r: np.ndarray
    sigma: np.ndarray
    a: np.ndarray
    u: np.ndarray
    c: np.ndarray
    xi: list
    federated: bool

    @property
    def d(self) -> int:
        return self.s.size

    @property
    def n(self) -> np.ndarray:
        return np.array([x.shape[0] for x in self.X])

    @property
    def theta(self) -> np.ndarray:
        """theta_j - theta_0 = r_j u_j, one row per client (theta_0 = 0)."""
        return self.r[:, None] * self.u


def sample_size(d: int, gamma: float, who: str = "the target client") -> int:
    """n = round(d / gamma), the sample size realizing gamma = d / n (paper 003, Sec. 2).

    Raises
    ------
    ValueError
        If n < 1: d is too small for gamma.
    """
    n = int(round(d / gamma))
    if n < 1:
        raise ValueError(f"d = {d} is too small for gamma = {gamma:g} ({who}): "
                         f"n = d / gamma = {d / gamma:.3g} < 1; increase d")
    return n


def check_memory(setting: Setting, gamma) -> None:
    """Raise ValueError naming d (and clients, federated) before allocating a replicate
    that cannot fit in memory: the Python keyword, with the command line's option beside it.

    A replicate holds every simulated design (sum_j n_j x d), its decompositions (at most
    min(n, d)^2 and n x d per client) and, with a federated global model, d x d matrices; the
    estimate counts three copies of each in float64, against the machine's physical memory.
    """
    d, federated = setting.d, setting.global_model == "federated"
    gammas = np.atleast_1d(np.asarray(gamma, float)).ravel()
    n = sample_size(d, float(gammas.min()))
    low = min(setting.gammas or gammas)
    other = sample_size(d, low, "a client") if federated else n
    need = 8 * 3 * (n * d + (setting.clients - 1) * other * d * federated + min(n, d) ** 2
                    + (d * d if federated else 0))
    # The clients' designs too: 10^9 clients at d = 60 were told "lower --d"; another
    # client's gamma 1e-8 was "n = 10 samples per client ... lower --d" (fuzz41 api F20).
    # A Python call was told "lower --d" (compare(..., d=10**6)): both are named, as the
    # time limits' "max_seconds (in Python; --max-minutes on the command line)" (fuzz42 seams3
    # F2). n = d / gamma: gamma 1e-9 at d = 20 was told "lower d" alone, which no d fits (F5).
    many = other > n
    require_memory(need, f"d = {setting.d} (n = {n} samples"
                   + (f", {other} for a client of gamma {low:g}" if many else " per client")
                   + (f") with {setting.clients} clients" if federated else ")"),
                   ("raise the other clients' gamma, " if many else "")
                   + ("lower d or clients, or raise gamma (in Python; --d, --clients, --gamma"
                      if federated else "lower d or raise gamma (in Python; --d, --gamma")
                   + " on the command line)")


def draw(rng: np.random.Generator, law: str, size, df: float) -> np.ndarray:
    """Standardized (mean 0, variance 1) draws from ``law`` (Assumption A2 of paper 003)."""
    if law == "gaussian":
        return rng.standard_normal(size)
    if law == "rademacher":
        return rng.integers(0, 2, size=size).astype(float) * 2.0 - 1.0
    return rng.standard_t(df, size=size) / np.sqrt(df / (df - 2.0))


def haar_rotation(rng: np.random.Generator, d: int) -> np.ndarray:
    """A Haar-distributed d x d orthogonal matrix (QR of a Gaussian matrix, signs fixed)."""
    q, r = np.linalg.qr(rng.standard_normal((d, d)))
    return q * np.sign(np.diag(r))


def scalar_spec(spec: ClientSpec) -> None:
    """Simulation is of one parameter point: every numeric field of ``spec`` must be a scalar."""
    for name, value in spec.params().items():
        if name != "spectrum" and np.ndim(value) != 0:
            raise ValueError(f"simulate one value of {name} at a time (got {value!r}); "
                             "use sweep for grids")


def client_params(spec: ClientSpec, setting: Setting, m: int | None = None):
    """gamma_j, r_j (rho_j for the local baselines) and sigma_j of clients 0..m-1 (default
    m = ``setting.clients``): client 0 is ``spec``'s, the others cycle through
    ``setting.gammas``, ``rs``, ``sigmas`` (the target's value when not given)."""
    m = setting.clients if m is None else m
    first = (float(spec.gamma), float(spec.signal), float(spec.sigma))
    return tuple(np.array([v0] + [v0 if vals is None else vals[(j - 1) % len(vals)]
                                  for j in range(1, m)])
                 for v0, vals in zip(first, (setting.gammas, setting.rs, setting.sigmas)))


def sample_instance(spec: ClientSpec, setting: Setting, seed: int, rep: int,
                    federated: bool | None = None) -> Instance:
    """Sample replicate ``rep`` of the federated problem described by ``spec`` and ``setting``.

    Paper 003 (``003_4b976ddf5225c17e.txt``), Sec. 2 and Assumption A2. Random numbers come
    from ``replicate_rng(seed, rep, client, stream)``, so client j's design, direction and noise
    are the same whatever the method, its tuning, or the number of other clients.

    Parameters
    ----------
    spec : ClientSpec
        The target client's model (scalar parameters).
    setting : Setting
        Dimension, clients, distributions.
    seed, rep : int
        Experiment seed and replicate index.
    federated : bool, optional
        Sample all M clients (True) or the target only; default: ``setting.global_model ==
        "federated"``. The local baselines never need other clients.

    Raises
    ------
    ValueError
        If a client would have n_j < 1, or the federated global model would be
        underdetermined (N = sum n_j < d).
    """
    scalar_spec(spec)
    federated = setting.global_model == "federated" if federated is None else federated
    d = setting.d
    m = setting.clients if federated else 1
    gam, r, sigma = client_params(spec, setting, m)
    n = np.array([sample_size(d, g, "the target client" if j == 0 else f"client {j}")
                  for j, g in enumerate(gam)])
    if federated and n.sum() < d:
        raise ValueError(f"the federated global model needs N = sum n_j >= d, got N = "
                         f"{n.sum()} < d = {d}; increase the number of clients")
    spectrum = spec.spectrum_or_identity
    s = spectrum.eigenvalues(d)
    groups, c = _signal_groups(spectrum, s)
    roots = [np.sqrt(s)] * m
    if setting.spectra is not None:
        roots = [np.sqrt(v) for v in client_spectra(spec, setting, m)]
        s = roots[0] ** 2
    rot = (haar_rotation(replicate_rng(seed, rep, 0, _ROTATION), d)
           if setting.eigvecs == "random" else None)
    X, xi, u = [], [], np.empty((m, d))
    for j in range(m):
        z = draw(replicate_rng(seed, rep, j, _FEATURES), setting.features, (n[j], d), setting.df)
        if rot is not None:
            z = z @ rot
        X.append(z * roots[j])
        g = replicate_rng(seed, rep, j, _DIRECTION).standard_normal(d)
        if groups is None:
            u[j] = g / np.linalg.norm(g)
        else:
            norms = np.sqrt(np.bincount(groups, weights=g ** 2, minlength=c.size))
            u[j] = g * np.sqrt(spectrum.signal_weights)[groups] / norms[groups]
        xi.append(sigma[j] * draw(replicate_rng(seed, rep, j, _NOISE), setting.noise, n[j],
                                  setting.df))
    p = np.full(m, 1.0 / m) if setting.weights == "uniform" else n / n.sum()
    return Instance(s=s, X=X, r=r, sigma=sigma, a=p / n, u=u,
                    c=np.full(d, 1.0 / d) if groups is None else c[groups], xi=xi,
                    federated=federated)


def client_spectra(spec: ClientSpec, setting: Setting, m: int | None = None) -> list:
    """The ordered eigenvalues (shared basis) of clients 0..m-1 under ``setting.spectra``
    (covariate shift): the target's is ``spectra[0]``, which must have the eigenvalue
    distribution of ``spec``'s spectrum; the others cycle through ``spectra[1:]`` (all equal to
    the target's when there is one entry)."""
    m = setting.clients if m is None else m
    specs = list(setting.spectra)
    rest = specs[1:] or specs[:1]
    out = [ordered_eigenvalues(specs[0] if j == 0 else rest[(j - 1) % len(rest)], setting.d)
           for j in range(m)]
    # The two expansions may place a two-point spectrum's edge one coordinate apart.
    if np.count_nonzero(~np.isclose(np.sort(out[0]), np.sort(
            spec.spectrum_or_identity.eigenvalues(setting.d)), rtol=1e-9, atol=0)) > 1:
        raise ValueError(f"spectra[0] = {specs[0]!r} is the target's covariance and must "
                         "describe the client's spectrum")
    if not spec.spectrum_or_identity.signal_is_uniform:
        raise ValueError("covariate shift needs the signal direction uniform")
    return out


def _signal_groups(spectrum, s):
    """For a non-uniform signal distribution G: each coordinate's atom, and per atom
    G(s) / #coordinates (the second moment of u there); (None, None) when G = H."""
    if spectrum.signal_is_uniform:
        return None, None
    groups = np.searchsorted(spectrum.atoms, s)
    counts = np.bincount(groups, minlength=spectrum.atoms.size)
    missing = (counts == 0) & (spectrum.signal_weights > 0)
    if missing.any():
        raise ValueError(f"d = {s.size} is too small to realize the spectrum's eigenvalue "
                         f"{spectrum.atoms[missing][0]:g}, which carries signal; increase d")
    return groups, spectrum.signal_weights / np.maximum(counts, 1)


def linear_replicate_seconds(setting, gamma, centered: bool = True) -> float:
    """Estimated seconds of one replicate of ``montecarlo.compare`` (the cost model of
    ``montecarlo.runner.budget``'s module docstring, with its constants)."""
    d = setting.d
    federated = setting.global_model == "federated" and centered
    m = setting.clients if federated else 1
    gammas = np.atleast_1d(as_array("gamma", gamma, low=0.0, low_open=True)).ravel()
    target = sample_size(d, float(gammas.min()))
    others = (np.asarray(setting.gammas, float) if setting.gammas is not None
              else gammas[:1])
    n_other = sample_size(d, float(others.min()), "a client") if m > 1 else 0
    cost = lambda n: CLIENT_SECONDS + FLOP_SECONDS * (n * d * min(n, d) + min(n, d) ** 3)
    return REPLICATE_SECONDS + cost(target) + (m - 1) * cost(n_other) + (FLOP_SECONDS * d ** 3 if federated
                                                    else 0.0)
