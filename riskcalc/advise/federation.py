"""The federation ``riskcalc.advise`` works on: every client's gamma_j, r_j, sigma_j (and rho_j)
and covariance.

Paper 003 (``003_4b976ddf5225c17e.txt``), Sec. 2: client j has n_j = d / gamma_j samples,
noise level sigma_j, parameter theta_j = theta_0 + r_j u_j (u_j uniform on the sphere) and
rho_j = ||theta_j|| (what the local baselines shrink towards 0 must learn). The clients share
one covariance spectrum (``spectrum``), or each has its own covariance (covariate shift,
``spectra``: one SPEC per client, all covariances diagonal in one shared basis, the SPEC's
expansion order fixing which eigenvalue sits on which coordinate; docs/covariate_shift.rst).
A measure (a ``Spectrum``) cannot say how two clients' eigenvalues line up, so per-client
covariances are SPECs; SPECs that expand to the same ordered eigenvalues are the shared case.
``Federation.limit_kwargs`` hands either to ``riskcalc.clients_limit``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from riskcalc._validate import parameter, positive_int
from riskcalc.linear.engine.joint_spectrum import d_if_used, joint_spectrum
from riskcalc.spectrum import Spectrum, as_spectrum, spec_key

CLIENT_KEYS = ("gamma", "n", "r", "sigma", "rho", "spectrum")
#: A federation file's client labels, no part of the model (``FederationFile.notes``).
LABEL_KEYS = ("name", "id", "se")


@dataclass(frozen=True, eq=False)
class Federation:
    """M >= 2 clients with pooled N > d (sum_j 1/gamma_j > 1).

    Parameters
    ----------
    gamma, r, sigma : sequence of float (M,) or float
        d / n_j > 0, ||theta_j - theta_0|| >= 0, noise level >= 0; a number is shared by the
        clients (as in ``clients_limit``), M is the lists' common length.
    rho : sequence of float (M,) or float, optional
        ||theta_j|| >= 0, needed for local ridge only. In the model rho_j^2 is r_j^2 plus the
        squared norm of theta_0, so rho_j >= r_j, but a rho_j below r_j is accepted: each
        limit reads one of them (r_j the methods with a global model, rho_j the local
        baselines), and estimates from data (``riskcalc.estimate``) land there within their
        standard errors.
    spectrum : Spectrum, SPEC str or sequence of Spectrum, optional
        The covariance spectrum shared by the clients (None: Sigma = I); a sequence of
        per-client spectra must all be the same spectrum (per-client covariances go in
        ``spectra``).
    spectra : sequence of str (M,), optional
        Covariate shift, instead of ``spectrum``: each client's covariance as a SPEC
        (``identity``, ``scaled:C``, ``two-point:A,B,W``, ``powerlaw:P[,D]``, ``file:PATH``),
        diagonal in one shared basis in the SPEC's order (``riskcalc.spectrum.ordered_steps``).
        When all expand to the same eigenvalues this is the shared ``spectrum`` of the first.
    d : int, optional
        The dimension, with ``spectra``: needed for ``powerlaw:P`` without a count; explicit
        numbers of eigenvalues (files, ``powerlaw:P,D``) must equal it.

    Raises
    ------
    ValueError
        For fewer than two clients, lists of different lengths, values out of range, pooled
        N <= d, per-client ``spectrum`` entries that differ, both ``spectrum`` and ``spectra``,
        ``spectra`` of the wrong length or with a malformed SPEC, or a SPEC that needs ``d``.
    """

    gamma: np.ndarray
    r: np.ndarray
    sigma: np.ndarray
    rho: np.ndarray | None = None
    spectrum: Spectrum | None = None
    spectra: tuple | None = None
    d: int | None = None

    def __post_init__(self):
        given = {k: parameter(k, getattr(self, k), ndim=1)
                 for k in ("gamma", "r", "sigma", "rho")
                 if k == "gamma" or getattr(self, k) is not None}
        # A number is shared by the clients, as in clients_limit: sigma=0.5 beside two clients
        # was "sigma lists 1 clients, gamma 2" (fuzz41 api F8).
        lists = {k: v.size for k, v in given.items() if v.ndim}
        if self.spectra is not None and np.ndim(self.spectra) == 1:   # as many clients (F23)
            lists["spectra"] = np.size(self.spectra)
        ref, m = next(iter(lists.items()), ("gamma", 1))
        for name, size in lists.items():
            if size != m:
                raise ValueError(f"{name} lists {size} clients, {ref} {m}")
        vals = {k: np.broadcast_to(v, (m,)).astype(float) for k, v in given.items()}
        gamma = vals["gamma"]
        # The count after the lengths: a length mismatch was "at least two clients, got 1"
        # (fuzz41 api F7).
        if m < 2:
            raise ValueError(f"a federation needs at least two clients, got {m}: for one "
                             "client use riskcalc predict")
        for name, v in vals.items():
            v.flags.writeable = False   # frozen: fed.gamma[0] = -1 passed the checks
            object.__setattr__(self, name, v)
        if self.spectra is None:
            if self.d is not None:
                raise ValueError("d applies to spectra (per-client SPECs) only")
            object.__setattr__(self, "spectrum", shared_spectrum(self.spectrum, m))
        else:
            if self.spectrum is not None:
                raise ValueError("give spectrum (one shared by the clients) or spectra (one "
                                 "SPEC per client), not both")
            spectrum, spectra, d = client_spectra(self.spectra, self.d, m)
            object.__setattr__(self, "spectrum", spectrum)
            object.__setattr__(self, "spectra", spectra)
            object.__setattr__(self, "d", d)
            # Read once: limit_kwargs runs at every limit advise asks for (a scan of all the
            # SPECs there was 0.8 s of shift1000's 31 s).
            object.__setattr__(self, "_limit_d", d_if_used(d, spectra))
        pooled = float(np.sum(1.0 / gamma))
        if not pooled > 1.0 + 1e-12:
            raise ValueError(
                "pooled N = sum_j n_j must exceed d (sum_j 1/gamma_j > 1), got sum_j 1/gamma_j "
                f"= {pooled:.6g}: FedAvg, FTFA, RTFA, MAML-FL and pFedMe all need a global "
                "model fitted on N > d samples; add clients or data (local ridge alone, which "
                "has no global model: riskcalc predict local_ridge for each client)")

    @classmethod
    def from_file(cls, path, *, spectrum=None, d=None) -> "Federation":
        """The federation of a federation file (``riskcalc.federation_file``: the versioned
        object ``{"fedrisk_federation": 1, "clients": [...]}``, or a bare list of ALL
        clients).

        Parameters
        ----------
        path : str or path-like
        spectrum : str or Spectrum, optional
            The covariance of the clients that give no ``spectrum`` (default identity).
        d : int, optional
            The dimension (turns ``n`` into gamma = d / n), an integer >= 1 as the file's
            own ``d`` and ``advise --d``: a bare list's, or the object's when it gives none
            (it must equal the object's own).

        Raises
        ------
        ValueError
            One line naming the file, the client and the key.
        """
        from riskcalc import federation_file

        return from_file_object(federation_file.read(path), spectrum=spectrum, d=d)

    @property
    def m(self) -> int:
        """Number of clients M."""
        return self.gamma.size

    @property
    def shift(self) -> bool:
        """Whether the clients' covariances differ (covariate shift)."""
        return self.spectra is not None

    def limit_kwargs(self) -> dict:
        """The federation's keyword arguments of ``riskcalc.clients_limit``: gamma, sigma, r
        and the covariance (``spectrum``, or ``spectra`` and ``d`` under covariate shift)."""
        out = {"gamma": self.gamma, "sigma": self.sigma, "r": self.r}
        if self.shift:      # d only where it sizes a spectrum (clients_limit refuses it else)
            return {**out, "spectra": list(self.spectra), **self._limit_d}
        return {**out, "spectrum": self.spectrum}

    def spectrum_groups(self) -> list:
        """(Spectrum or None for Sigma = I, client indices) per distinct covariance: each
        client's own spectral measure, for what has no global model (local ridge)."""
        if not self.shift:
            return [(self.spectrum, np.arange(self.m))]
        joint = joint_spectrum(list(self.spectra), self.d)
        return [(joint.marginal(t), np.flatnonzero(joint.types == t))
                for t in range(joint.values.shape[0])]

    def top_eigenvalues(self) -> np.ndarray:
        """Each client's largest covariance eigenvalue (M,)."""
        top = np.empty(self.m)
        for spectrum, idx in self.spectrum_groups():
            top[idx] = 1.0 if spectrum is None else float(spectrum.atoms.max())
        return top

    def describe(self) -> dict:
        """Plain JSON values."""
        out = {"clients": self.m, "gamma": self.gamma.tolist(), "r": self.r.tolist(),
               "sigma": self.sigma.tolist()}
        if self.shift:
            out.update(spectra=list(self.spectra), d=self.d)
        else:
            out["spectrum"] = "identity" if self.spectrum is None else self.spectrum.describe()
        if self.rho is not None:
            out["rho"] = self.rho.tolist()
        return out

    def covariance_text(self) -> str:
        """One line naming the clients' covariance(s)."""
        if self.shift:
            dim = "" if self.d is None else f", d = {self.d}"
            return f"covariate shift (spectra {' / '.join(self.spectra)}{dim})"
        return f"spectrum {'identity' if self.spectrum is None else self.spectrum.describe()}"


def shared_spectrum(spectrum, m: int):
    """One spectrum for all clients (None for Sigma = I) from a Spectrum, a SPEC string, None, or
    M spectra (ValueError when these differ: per-client covariances are ``spectra``)."""
    if isinstance(spectrum, str):
        # A SPEC string is one spectrum (as a list it was read as one client per character).
        spectrum = as_spectrum(spectrum)
    if spectrum is None or isinstance(spectrum, Spectrum):
        items = [spectrum]
    elif isinstance(spectrum, (list, tuple)):
        # Each a Spectrum, a SPEC string or None (a list of SPECs was an AttributeError).
        numbers = [j for j, s in enumerate(spectrum)
                   if isinstance(s, (int, float, np.number)) and not isinstance(s, bool)]
        if numbers:
            # Was 'spectrum must be a riskcalc.Spectrum or a SPEC string ..., got float'.
            raise ValueError(f"spectrum lists one Spectrum or SPEC string per client, got a "
                             f"number (entry {numbers[0]}): eigenvalues go in "
                             "riskcalc.Spectrum(EIGENVALUES)")
        items = [as_spectrum(s) for s in spectrum]
        if len(items) != m:
            raise ValueError(f"spectrum lists {len(items)} clients, gamma {m}")
    else:
        # Was a TypeError (a float), an AttributeError (an array of eigenvalues) or 'spectrum
        # lists 8 clients' (bytes, a dict).
        raise ValueError("spectrum must be a riskcalc.Spectrum, a SPEC string (identity, "
                         "scaled:C, two-point:A,B,W, powerlaw:P[,D], file:PATH) or a list of "
                         f"one per client, got {type(spectrum).__name__}"
                         + (" (eigenvalues: riskcalc.Spectrum(EIGENVALUES))"
                            if isinstance(spectrum, np.ndarray) else ""))
    items = [None if (s is None or s.is_identity) else s for s in items]
    first = items[0]
    for s in items[1:]:
        same = s is first or (
            s is not None and first is not None and s.atoms.shape == first.atoms.shape
            and np.array_equal(s.atoms, first.atoms) and np.array_equal(s.weights, first.weights)
            and np.array_equal(s.signal_weights, first.signal_weights))
        if not same:
            raise ValueError("clients with different covariance spectra (covariate shift): "
                             "give one SPEC per client in spectra (with d where needed), whose "
                             "order fixes how the clients' eigenvalues line up")
    return first


def client_spectra(spectra, d, m: int):
    """(shared Spectrum or None, None, None) when the M SPECs ``spectra`` expand to the same
    ordered eigenvalues, else (None, tuple of the SPECs, d): validated through their joint
    measure (``riskcalc.linear.engine.joint_spectrum``)."""
    if isinstance(spectra, str) or not all(isinstance(s, str) for s in spectra):
        raise ValueError("spectra must list one SPEC string per client (identity, scaled:C, "
                         "two-point:A,B,W, powerlaw:P[,D], file:PATH)")
    spectra = tuple(spectra)
    if len(spectra) != m:
        raise ValueError(f"spectra lists {len(spectra)} clients, gamma {m}")
    d = None if d is None else positive_int("d", d)
    values = joint_spectrum(spectra, d).values       # one row per distinct SPEC text
    if np.all(values == values[0]):
        spectrum = Spectrum.parse(spectra[0], d=d)
        return (None if spectrum.is_identity else spectrum), None, None
    return None, spectra, d


def from_clients(clients, d=None, spectrum=None) -> Federation:
    """A Federation from a list of client dicts with keys ``gamma`` (or ``n`` with ``d``),
    ``r``, ``sigma`` and optionally ``rho`` and ``spectrum`` (a SPEC string or Spectrum);
    ``spectrum`` applies to the clients that give none. Different SPECs are covariate shift
    (``Federation.spectra``, with ``d``, which also turns n into gamma = d / n). The labels a
    federation file's client may carry (``name``, ``id``, ``se``) are ignored, as the file's
    linear readers do."""
    if not isinstance(clients, (list, tuple)) or not all(isinstance(c, dict) for c in clients):
        raise ValueError('the federation must be a list of client objects {"gamma": G, "r": R, '
                         '"sigma": S}')
    if d is not None:
        # A dimension: an integer, as a file's "d" and advise --d (d=True was read as 1 and a
        # float such as 5.5 taken).
        d = positive_int("d", d)
    if spectrum is not None and not isinstance(spectrum, (str, Spectrum)):
        # was: AttributeError "'int' object has no attribute 'strip'"
        raise ValueError("spectrum must be a SPEC string (identity, scaled:C, two-point:A,B,W, "
                         f"powerlaw:P[,D], file:PATH) or a riskcalc.Spectrum, got "
                         f"{type(spectrum).__name__}")
    from riskcalc.federation_file import default_spectrum_used

    default_spectrum_used(clients, spectrum, "every client", "spectrum")
    gam = []
    for k, c in enumerate(clients):
        extra = sorted(set(c) - set(CLIENT_KEYS) - set(LABEL_KEYS), key=str)
        if extra:
            # was: "must have r, sigma ...; got gamma, name, r, sigma" (the key not named)
            raise ValueError(f"client {k}: unknown key {', '.join(map(repr, extra))} (client "
                             f"keys: {', '.join(CLIENT_KEYS + LABEL_KEYS)})")
        missing = [key for key in ("r", "sigma") if key not in c]
        if missing or (("gamma" in c) == ("n" in c)):
            raise ValueError(f"client {k} must have r, sigma and one of gamma, n (optionally "
                             f"rho, spectrum); got {', '.join(sorted(c, key=str)) or 'no keys'}")
        if "n" in c:
            if d is None:
                raise ValueError(f"client {k} gives n: give d (--d) to turn it into gamma = d/n")
            # n a count, as in a federation file (n = 50.5 was taken: half a sample)
            gam.append(d / positive_int(f"client {k} n", c["n"]))
        else:
            gam.append(c["gamma"])
        if not isinstance(c.get("spectrum", ""), (str, Spectrum)):
            raise ValueError(f"client {k}'s spectrum must be a SPEC string (identity, "
                             "scaled:C, two-point:A,B,W, powerlaw:P[,D], file:PATH)")
    rho = [c.get("rho") for c in clients]
    if any(v is None for v in rho) and not all(v is None for v in rho):
        raise ValueError("give rho for every client or for none")
    given = [c.get("spectrum", spectrum) for c in clients]
    texts = ["identity" if s is None else s for s in given]
    if (not any(isinstance(s, Spectrum) for s in given)
            and len({spec_key(s) for s in texts}) > 1):
        # Different SPECs: covariate shift (a client without one has Sigma = I).
        cov = {"spectra": texts, "d": d}
    else:
        parsed = {}                          # each distinct SPEC parsed once (M may be 10^5)
        for s in given:
            if isinstance(s, str) and s not in parsed:
                parsed[s] = as_spectrum(s, d=d)     # a file of other than d values refused
        cov = {"spectrum": [parsed[s] if isinstance(s, str) else s for s in given]}
    return Federation(gamma=gam, r=[c["r"] for c in clients],
                      sigma=[c["sigma"] for c in clients],
                      rho=None if not rho or rho[0] is None else rho, **cov)


def from_file_object(ff, spectrum=None, d=None) -> Federation:
    """A Federation from a checked ``riskcalc.federation_file.FederationFile`` (ALL clients);
    ``spectrum`` for the clients that give none, ``d`` for a bare list's ``n``. Errors name
    the file (and the client where there is one)."""
    if d is not None:
        try:
            d = positive_int("d", d)        # d=True was compared with the file's d as 1
        except ValueError as exc:
            raise ValueError(f"{ff.where}: {exc}") from None
        if not ff.uses_d(spectrum if isinstance(spectrum, str) else None):
            # was: taken and dropped (the federation the same at every d), as advise --d was
            raise ValueError(f"{ff.where}: d = {d}: nothing in the file uses it (it turns a "
                             "client's n into gamma = d / n and sizes powerlaw:P and file: "
                             "spectra; every client gives gamma): leave it out")
    if not ff.versioned:
        try:
            # from_clients ignores the labels name, id and se (fuzz41 advise F1, left F1).
            return from_clients([dict(c) for c in ff.clients], d=d, spectrum=spectrum)
        except ValueError as exc:
            raise ValueError(f"{ff.where}: {exc}") from None
    if d is not None and ff.d is not None and d != ff.d:
        raise ValueError(f"{ff.where}: the file gives d = {ff.d}, d (--d) = {d} another")
    why = "the linear model needs it"
    gamma, r, sigma = ff.gammas(d), ff.column("r", why), ff.column("sigma", why)
    clients = [{"gamma": g, "r": rj, "sigma": s} for g, rj, s in zip(gamma, r, sigma)]
    rho = ff.optional("rho")
    for j, c in enumerate(ff.clients):
        if rho is not None:
            clients[j]["rho"] = rho[j]
        if "spectrum" in c:
            clients[j]["spectrum"] = c["spectrum"]
    size = ff.d if ff.d is not None else d
    try:
        return from_clients(clients, d=size, spectrum=spectrum)
    except ValueError as exc:
        raise ValueError(f"{ff.where}: {exc}") from None
