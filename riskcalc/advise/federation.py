"""The federation ``riskcalc.advise`` works on: every client's gamma_j, r_j, sigma_j (and rho_j).

Paper 003 (``003_4b976ddf5225c17e.txt``), Sec. 2: client j has n_j = d / gamma_j samples,
noise level sigma_j, parameter theta_j = theta_0 + r_j u_j (u_j uniform on the sphere) and
rho_j = ||theta_j|| (what the local baselines shrink towards 0 must learn). All clients share
one covariance spectrum; a per-client ``spectrum`` (covariate shift) is accepted by the input
format and refused until the finite-M limits take one spectrum per client.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from riskcalc._validate import as_array, nonnegative, positive
from riskcalc.spectrum import Spectrum

CLIENT_KEYS = ("gamma", "n", "r", "sigma", "rho", "spectrum")


@dataclass(frozen=True, eq=False)
class Federation:
    """M >= 2 clients with pooled N > d (sum_j 1/gamma_j > 1).

    Parameters
    ----------
    gamma, r, sigma : sequence of float (M,)
        d / n_j > 0, ||theta_j - theta_0|| >= 0, noise level >= 0.
    rho : sequence of float (M,), optional
        ||theta_j|| >= 0, needed for local ridge only.
    spectrum : Spectrum or sequence of Spectrum, optional
        The covariance spectrum shared by the clients (None: Sigma = I); a sequence of
        per-client spectra must all be the same spectrum for now.

    Raises
    ------
    ValueError
        For fewer than two clients, lists of different lengths, values out of range, pooled
        N <= d, or per-client spectra that differ.
    """

    gamma: np.ndarray
    r: np.ndarray
    sigma: np.ndarray
    rho: np.ndarray | None = None
    spectrum: Spectrum | None = None

    def __post_init__(self):
        gamma = np.atleast_1d(positive("gamma", self.gamma)).astype(float).ravel()
        m = gamma.size
        if m < 2:
            raise ValueError(f"a federation needs at least two clients, got {m}: for one "
                             "client use riskcalc predict")
        vals = {"gamma": gamma}
        for name in ("r", "sigma", "rho"):
            v = getattr(self, name)
            if v is None:
                continue
            arr = np.atleast_1d(nonnegative(name, v)).astype(float).ravel()
            if arr.size != m:
                raise ValueError(f"{name} lists {arr.size} clients, gamma {m}")
            vals[name] = arr
        for name, v in vals.items():
            object.__setattr__(self, name, v)
        object.__setattr__(self, "spectrum", shared_spectrum(self.spectrum, m))
        pooled = float(np.sum(1.0 / gamma))
        if not pooled > 1.0 + 1e-12:
            raise ValueError(
                "pooled N = sum_j n_j must exceed d (sum_j 1/gamma_j > 1), got sum_j 1/gamma_j "
                f"= {pooled:.6g}: FedAvg, FTFA, RTFA, MAML-FL and pFedMe all need a global "
                "model fitted on N > d samples (only local ridge does not); add clients or data")

    @property
    def m(self) -> int:
        """Number of clients M."""
        return self.gamma.size

    def describe(self) -> dict:
        """Plain JSON values."""
        out = {"clients": self.m, "gamma": self.gamma.tolist(), "r": self.r.tolist(),
               "sigma": self.sigma.tolist(),
               "spectrum": "identity" if self.spectrum is None else self.spectrum.describe()}
        if self.rho is not None:
            out["rho"] = self.rho.tolist()
        return out


def shared_spectrum(spectrum, m: int):
    """One spectrum for all clients (None for Sigma = I) from a Spectrum, None, or M spectra
    (ValueError when these differ: per-client spectra are covariate shift)."""
    if spectrum is None or isinstance(spectrum, Spectrum):
        items = [spectrum]
    else:
        items = list(spectrum)
        if len(items) != m:
            raise ValueError(f"spectrum lists {len(items)} clients, gamma {m}")
    items = [None if (s is None or s.is_identity) else s for s in items]
    first = items[0]
    for s in items[1:]:
        same = (s is None and first is None) or (
            s is not None and first is not None and s.atoms.shape == first.atoms.shape
            and np.array_equal(s.atoms, first.atoms) and np.array_equal(s.weights, first.weights)
            and np.array_equal(s.signal_weights, first.signal_weights))
        if not same:
            raise ValueError("clients with different covariance spectra (covariate shift): "
                             "the finite-M limits take one spectrum shared by all clients")
    return first


def from_clients(clients, d=None, spectrum=None) -> Federation:
    """A Federation from a list of client dicts with keys ``gamma`` (or ``n`` with ``d``),
    ``r``, ``sigma`` and optionally ``rho`` and ``spectrum`` (a SPEC string or Spectrum);
    ``spectrum`` applies to the clients that give none."""
    if not isinstance(clients, (list, tuple)) or not all(isinstance(c, dict) for c in clients):
        raise ValueError('the federation must be a list of client objects {"gamma": G, "r": R, '
                         '"sigma": S}')
    if d is not None:
        d = float(as_array("d", d, low=0.0, low_open=True))
    gam, spectra = [], []
    for k, c in enumerate(clients):
        extra = sorted(set(c) - set(CLIENT_KEYS))
        missing = [key for key in ("r", "sigma") if key not in c]
        if extra or missing or (("gamma" in c) == ("n" in c)):
            raise ValueError(f"client {k} must have r, sigma and one of gamma, n (optionally "
                             f"rho, spectrum); got {', '.join(sorted(c)) or 'no keys'}")
        if "n" in c:
            if d is None:
                raise ValueError(f"client {k} gives n: give d (--d) to turn it into gamma = d/n")
            gam.append(d / float(positive(f"client {k} n", c["n"])))
        else:
            gam.append(c["gamma"])
        sp = c.get("spectrum", spectrum)
        spectra.append(Spectrum.parse(sp, d=None if d is None else int(d))
                       if isinstance(sp, str) else sp)
    rho = [c.get("rho") for c in clients]
    if any(v is None for v in rho) and not all(v is None for v in rho):
        raise ValueError("give rho for every client or for none")
    return Federation(gamma=gam, r=[c["r"] for c in clients],
                      sigma=[c["sigma"] for c in clients],
                      rho=None if rho[0] is None else rho, spectrum=spectra)
