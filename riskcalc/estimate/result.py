"""``Estimate``: the result of ``riskcalc.estimate.estimate`` (the estimates, their standard
errors and joint covariance), the federation and federation file it gives, and the two-atom
spectrum matching three moments (``gauss_two_atoms``); the estimators are in
``riskcalc.estimate.estimator``."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from riskcalc import _frames
from riskcalc._validate import as_array
from riskcalc.estimate import centring
from riskcalc.spectrum import Spectrum

#: The estimates with a joint covariance (``Estimate.cov``), in its order.
FLAT = ("sigma2", "r2", "rho2", "centre_norm2", "moments")
#: The estimates ``Estimate.root`` takes the square root of.
ROOTS = ("sigma", "r", "rho", "centre_norm")


@dataclass(frozen=True)
class Estimate:
    """Estimates with jackknife standard errors (``estimate``).

    Attributes
    ----------
    d : int
    ids, n : ndarray (M,)
        Client ids (sorted) and sample sizes.
    values, se : dict of str -> ndarray
        ``sigma2``, ``r2``, ``rho2`` (M,; unbiased, hence possibly negative),
        ``centre_norm2`` (||theta_0||^2), ``moments`` (3,): m1, m2, m3 of the spectrum of
        Sigma, ``spread`` (m2 - m1^2).
    route : str
        ``moments`` or ``least-squares``.
    cov : ndarray (3 M + 4, 3 M + 4), optional
        Joint covariance of the estimates of ``FLAT`` in that order (sigma2, r2, rho2: M each;
        centre_norm2; moments: 3); ``se`` is the root of its diagonal (and of the jackknife
        variance of ``spread``).
    mean_test : dict, optional
        Whether the data are mean zero, as the model has them
        (``riskcalc.estimate.centring.mean_test``: ``features_p``, ``features_ratio``,
        ``y_p``); ``centring_note`` says when they are not.
    notes : tuple of str
        Why the route is not the one ``auto`` takes by its sample sizes (a client's design
        of rank below d, so moments where every n_j >= 1.5 d), and rows two clients share
        (``riskcalc.estimate.data.shared_rows``); empty otherwise.
    """

    d: int
    ids: np.ndarray
    n: np.ndarray
    values: dict
    se: dict
    route: str = "moments"
    cov: np.ndarray | None = None
    mean_test: dict | None = None
    notes: tuple = ()
    # Arrays by value (riskcalc._frames.equal): the generated __eq__ raised "The truth value
    # of an array with more than one element is ambiguous".
    __eq__ = _frames.equal

    def with_values(self, flat) -> "Estimate":
        """The same estimate with the values of ``FLAT`` replaced by the vector ``flat`` (and
        ``spread`` = m2 - m1^2 from its moments): one plausible federation's estimates."""
        size = 3 * self.n.size + 4
        flat = as_array("flat", flat, ndim=1)   # finite (NaN reached the federation file)
        if flat.shape != (size,):
            # A wrong length was an IndexError, or values shifted between the clients.
            raise ValueError(f"flat must hold the {size} values of FLAT for {self.n.size} "
                             f"clients (3 M + 4: {', '.join(FLAT)}), got shape {flat.shape}")
        values = _unflat(flat, self.n.size)
        m1, m2 = values["moments"][:2]
        return replace(self, values={**values, "spread": m2 - m1 ** 2})

    def root(self, name: str):
        """sqrt of the squared estimate ``name`` (``sigma``, ``r``, ``rho``, ``centre_norm``)
        clipped at 0, and its delta-method standard error se(x^2) / (2 x), inf where x^2 is
        within two standard errors of 0 (as ``spectrum``'s spread; noise-free data gave r =
        1.05e-08 +- 0.13 for r^2 = 1e-16 +- 2.6e-9) or within ``ROUNDING`` of the largest
        rho_j^2 + sigma_j^2 (noise-free: r = 6.1e-09 +- 1.8e-17, rho^2 = 0.4's rounding)."""
        if not isinstance(name, str) or name not in ROOTS:     # was a KeyError ('bogus2')
            raise ValueError(f"name must be one of {', '.join(ROOTS)}; got {name!r}")
        v, s = np.asarray(self.values[name + "2"]), np.asarray(self.se[name + "2"])
        x = np.sqrt(np.maximum(v, 0.0))
        unit = ROUNDING * float(np.max(np.maximum(self.values["rho2"], 0.0)
                                       + np.maximum(self.values["sigma2"], 0.0), initial=0.0))
        resolved = v > 2 * s + unit
        with np.errstate(divide="ignore", invalid="ignore"):
            return x, np.where(resolved & (x > 0), s / (2 * np.where(x > 0, x, 1.0)), np.inf)

    @property
    def gamma(self) -> np.ndarray:
        return self.d / self.n

    def spectrum(self):
        """The estimated spectrum as a two-atom Spectrum, or None when the spread of the
        eigenvalues is within two standard errors of 0 (then ``federation`` rescales)."""
        m1, m2, m3 = self.values["moments"]
        if not self.values["spread"] > 2 * self.se["spread"]:
            return None
        return gauss_two_atoms(m1, m2, m3)

    def federation(self, spectrum=None):
        """The ``riskcalc.advise.Federation`` of the estimates (with ``spectrum``, default
        ``self.spectrum()``; None: Sigma = m1 I, i.e. the identity with r, rho times
        sqrt(m1))."""
        from riskcalc.advise import Federation

        scale = 1.0
        if spectrum is None:
            scale = np.sqrt(self.values["moments"][0])
        return Federation(gamma=self.gamma, r=scale * self.root("r")[0],
                          sigma=self.root("sigma")[0], rho=scale * self.root("rho")[0],
                          spectrum=spectrum)

    def contradiction(self, spectrum) -> str | None:
        """A note when the spectrum's first or second moment (``spectrum``: a Spectrum) lies
        more than four standard errors (and 1e-9 relative) from the data's estimate m1 or
        m2, else None: ``advise --data F --spectrum identity`` on data with m1 = 3.11 +- 0.06
        answered at the identity (0.288 for 0.827) without a word."""
        for k in (1, 2):
            given = float(spectrum.weights @ spectrum.atoms ** k)
            value, se = (float(self.values["moments"][k - 1]),
                         float(self.se["moments"][k - 1]))
            if abs(given - value) > 4 * se + 1e-9 * abs(value):
                return (f"the data contradict the spectrum given: its m{k} (the mean of the "
                        f"eigenvalues{'' if k == 1 else ' squared'}) is {given:.4g}, the "
                        f"data's {value:.4g} +- {se:.2g}; the data's own spectrum is "
                        f"{self.spec()} (advise --data without --spectrum uses it)")
        return None

    def centring_note(self) -> str | None:
        """A note when the data are not mean zero (``mean_test``), else None: the model has
        mean-zero features and no intercept (``riskcalc.estimate.centring``)."""
        return centring.note(self.mean_test)

    def spec(self) -> str:
        """The estimated covariance as a SPEC: ``two-point:A,B,W`` (``spectrum``), or
        ``scaled:C`` for Sigma = C I with C = m1 when the spread is not resolved."""
        sp = self.spectrum()
        if sp is None:
            return f"scaled:{float(self.values['moments'][0])!r}"
        return (f"two-point:{float(sp.atoms[0])!r},{float(sp.atoms[-1])!r},"
                f"{float(sp.weights[0])!r}")

    def as_dict(self) -> dict:
        """The federation file of the estimates (``riskcalc.federation_file``, version 1:
        ``fedrisk_federation``, ``d``, ``signal`` = ||theta_0||, ``clients`` with ``name``,
        ``id``, ``n``, ``r``, ``sigma``, ``rho``, ``spectrum`` and their standard errors ``se``,
        null where infinite), with the estimator's details under ``estimate`` and the same
        clients as a bare list (the format before version 1) under ``federation``; the
        route's ``notes`` under ``estimate``."""
        v, s = self.values, self.se
        sp = self.spectrum()
        spec = self.spec()
        roots = {k: self.root(k) for k in ("sigma", "r", "rho")}
        centre, centre_se = self.root("centre_norm")
        clients = [{"name": f"client{int(i)}", "id": int(i), "n": int(n),
                    **{k: float(roots[k][0][j]) for k in ("r", "sigma", "rho")},
                    "spectrum": spec,
                    "se": {k: _finite(roots[k][1][j]) for k in ("r", "sigma", "rho")}}
                   for j, (i, n) in enumerate(zip(self.ids, self.n))]
        squares = [{"id": int(i), **{f"{k}2": float(v[k + "2"][j]) for k in roots},
                    **{f"{k}2_se": float(s[k + "2"][j]) for k in roots}}
                   for j, i in enumerate(self.ids)]
        return {"fedrisk_federation": 1, "d": int(self.d), "signal": float(centre),
                "clients": clients,
                "estimate": {"route": self.route, "notes": list(self.notes),
                             "signal_se": _finite(centre_se),
                             "spectrum": {"moments": v["moments"].tolist(),
                                          "moments_se": s["moments"].tolist(),
                                          "spec": spec,
                                          "atoms": None if sp is None else sp.atoms.tolist(),
                                          "weights": None if sp is None
                                          else sp.weights.tolist()},
                             "squares": squares, "mean_test": self.mean_test},
                "federation": [{"gamma": float(self.d / c["n"]),
                                **{k: c[k] for k in ("r", "sigma", "rho", "spectrum")}}
                               for c in clients]}


#: Squared estimates within this share of the squares' scale of 0 are rounding
#: (``Estimate.root``; as ``riskcalc.advise.result.TIE_ATOL`` for the risks).
ROUNDING = 1e-12


def _finite(x):
    """A float, or None for infinity (standard JSON)."""
    return float(x) if np.isfinite(x) else None


def gauss_two_atoms(m1, m2, m3):
    """The two-atom distribution with moments m1, m2, m3 (Gauss quadrature: the atoms are the
    roots of x^2 + a x + b with m2 + a m1 + b = 0, m3 + a m2 + b m1 = 0); one atom at m1 when
    these are not two positive atoms. Each moment a real number (a string was a TypeError),
    m1 > 0 (a mean eigenvalue)."""
    m1 = float(as_array("m1", m1, low=0.0, low_open=True, ndim=0))
    m2, m3 = (float(as_array(name, m, ndim=0)) for name, m in (("m2", m2), ("m3", m3)))
    var = m2 - m1 ** 2
    if var > 0:
        a = -(m3 - m1 * m2) / var
        b = -m2 - a * m1
        disc = a * a - 4 * b
        if disc > 0:
            lo, hi = (-a - np.sqrt(disc)) / 2, (-a + np.sqrt(disc)) / 2
            if lo > 0:
                w = (hi - m1) / (hi - lo)
                return Spectrum([lo, hi], weights=[w, 1 - w])
    return Spectrum([m1])


def _flat(values) -> np.ndarray:
    """The estimates of ``FLAT`` in one vector (sigma2, r2, rho2: M each; centre_norm2;
    moments: 3)."""
    return np.concatenate([np.atleast_1d(values[k]) for k in FLAT])


def _unflat(vec, m: int) -> dict:
    """``_flat``'s inverse."""
    out = {k: vec[i * m:(i + 1) * m] for i, k in enumerate(FLAT[:3])}
    out["centre_norm2"] = vec[3 * m]
    out["moments"] = vec[3 * m + 1:]
    return out
