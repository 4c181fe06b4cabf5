"""The model specification shared by theory and simulation (DESIGN.md).

A ``ClientSpec`` states one client's problem in the high-dimensional linear model of paper 003
(``003_4b976ddf5225c17e.txt``, Sec. 2): aspect ratio gamma = d/n_i, noise level sigma, the
distance r = ||theta_i - theta_0|| to the center (or the norm rho = ||theta_i|| for the local
baselines), the covariance spectrum, and the method with its tuning (lam or alpha).
``riskcalc`` computes its limit; ``montecarlo`` samples instances of exactly this
specification, so predicted and simulated always describe the same problem.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from riskcalc import _frames
# GAMMA_RANGE, SCALE_MAX: one range per parameter wherever it enters (riskcalc._validate).
from riskcalc._validate import GAMMA_RANGE, SCALE_MAX, as_array, canonical_method, real
from riskcalc.linear.methods import Method, get_method
from riskcalc.spectrum import Spectrum, as_spectrum

_OPTIONAL = ("r", "rho", "lam", "alpha")

#: Nonzero penalties the limits are computed for (the paper route squares 1/lam).
LAM_RANGE = (1e-100, 1e100)


def check_lam(lam) -> None:
    """Raise a ValueError unless every ``lam`` is 0 or in ``LAM_RANGE`` (the one range of a
    ridge penalty, for one client as for a federation). Its message said the limits beyond
    equal those at lam = 0 to 100 digits, which gamma = 1 belies: isotropic ridge at gamma = 1
    has variance sigma^2 / (2 sqrt(lam)) to first order (paper 003, Thm 2 with the
    Marchenko-Pastur m(-lam) ~ lam^-1/2), infinite at lam = 0 (fuzz40 api F4)."""
    lam = np.asarray(lam)
    below = np.isnan(lam) | (lam < 0)
    if np.any(below):   # -1 was told "lam must lie in [0, inf)" (fuzz41 api F22)
        raise ValueError(f"lam must be 0 or lie in [{LAM_RANGE[0]:g}, {LAM_RANGE[1]:g}], got "
                         f"{float(lam[below].flat[0])!r}")
    if np.any((lam != 0) & ((lam < LAM_RANGE[0]) | (lam > LAM_RANGE[1]))):
        raise ValueError(f"lam must be 0 or lie in [{LAM_RANGE[0]:g}, {LAM_RANGE[1]:g}]: "
                         "beyond, the limits equal those at lam = 0 (or the method fedavg "
                         "for lam -> infinity) to 100 digits, except near gamma = 1 (the ridge "
                         "variance there grows as sigma^2 / (2 sqrt(lam)), lam = 0's is "
                         "infinite), and their forms overflow")


@dataclass(frozen=True)
class ClientSpec:
    """One client's problem and the method it runs; validated on construction.

    Parameters
    ----------
    method : str
        A name of ``riskcalc.METHODS``.
    gamma : float or array_like
        d / n_i in ``GAMMA_RANGE`` = [1e-100, 1e100].
    sigma : float or array_like
        Noise standard deviation in [0, ``SCALE_MAX``] = [0, 1e100].
    r : float or array_like, optional
        ||theta_i - theta_0|| in [0, 1e100]; for every method but ``local`` and
        ``local_ridge``.
    rho : float or array_like, optional
        ||theta_i|| in [0, 1e100]; for ``local`` and ``local_ridge`` only.
    lam : float or array_like, optional
        Ridge penalty: 0 or in ``LAM_RANGE`` = [1e-100, 1e100]; for ``rtfa``, ``pfedme`` and
        ``local_ridge`` only.
    alpha : float or array_like, optional
        MAML step size >= 0; for ``maml_fl`` only.
    spectrum : Spectrum or SPEC str, optional
        Covariance spectrum H (and signal distribution G); None means Sigma = I.

    Raises
    ------
    ValueError
        For an unknown method, a parameter the method does not take or lacks, or a value out
        of range.
    """

    method: str
    gamma: object
    sigma: object
    r: object = None
    rho: object = None
    lam: object = None
    alpha: object = None
    spectrum: Spectrum | None = None
    # Arrays by value: the generated __eq__ raised numpy's "truth value of an array ... is
    # ambiguous" for two specs with array parameters (fuzz40 api F5).
    __eq__ = _frames.equal

    def __post_init__(self):
        # An alias (fedprox) is the method of its canonical name (pfedme), everywhere.
        object.__setattr__(self, "method", canonical_method(self.method))
        info = get_method(self.method)
        wanted = set(info.parameters)
        for name in _OPTIONAL:
            if getattr(self, name) is not None and name not in wanted:
                takes = ", ".join(info.parameters)
                raise ValueError(f"method {info.name} does not take {name} (it takes {takes})")
        for name in info.parameters:
            if getattr(self, name) is None:
                raise ValueError(f"method {info.name} needs {name}")
        object.__setattr__(self, "gamma", as_array("gamma", self.gamma, low=GAMMA_RANGE[0],
                                                   high=GAMMA_RANGE[1]))
        for name in ("sigma", *wanted):
            high = None if name in ("lam", "alpha") else SCALE_MAX
            if name == "lam":   # its one range in the message, not as_array's [0, inf)
                check_lam(real("lam", self.lam))
            object.__setattr__(self, name, as_array(name, getattr(self, name), low=0.0,
                                                    high=high))
        for name in ("gamma", "sigma", *wanted):
            if getattr(self, name).size == 0:       # was an empty result, no error
                raise ValueError(f"{name} must be a number or a non-empty array of numbers, "
                                 "got an empty array")
        # A SPEC string as clients_limit and rounds_limit take it (was refused here).
        object.__setattr__(self, "spectrum", as_spectrum(self.spectrum))

    @property
    def info(self) -> Method:
        """The registry entry of the method."""
        return get_method(self.method)

    @property
    def signal(self) -> np.ndarray:
        """The norm the client must learn from its own data: r, or rho for local baselines."""
        return getattr(self, self.info.signal)

    @property
    def penalty(self) -> np.ndarray:
        """The ridge penalty of the client's regression (0 for min-norm interpolation)."""
        return self.lam if self.info.ridge else np.zeros(())

    @property
    def spectrum_or_identity(self) -> Spectrum:
        """The spectrum, with None read as Sigma = I."""
        return self.spectrum if self.spectrum is not None else Spectrum.identity()

    def params(self) -> dict:
        """The parameters as plain Python numbers/lists (for JSON and tables)."""
        out = {}
        for f in fields(self):
            v = getattr(self, f.name)
            if f.name == "method" or v is None:
                continue
            if f.name == "spectrum":
                out["spectrum"] = v.record()
            else:
                out[f.name] = v.tolist()
        return out


def broadcast_shape(values: dict) -> tuple:
    """The broadcast shape of the parameters ``values`` (name -> number or array), or a
    ValueError naming each array's shape (numpy's own named "arg 0" and "arg 2")."""
    try:
        return np.broadcast_shapes(*(np.shape(v) for v in values.values()))
    except ValueError:
        shapes = ", ".join(f"{k} {np.shape(v)}" for k, v in values.items() if np.ndim(v))
        raise ValueError(f"parameter arrays of shapes {shapes} do not broadcast together "
                         "(give arrays of one length, or scalars)") from None


def as_spec(spec, where: str) -> ClientSpec:
    """``spec`` if it is a ``ClientSpec``, else ValueError saying how to make one (``where``:
    the function that takes it; a method name or None gave an AttributeError traceback)."""
    if not isinstance(spec, ClientSpec):
        raise ValueError(f"{where}: spec must be a riskcalc.ClientSpec (e.g. ClientSpec('rtfa', "
                         f"gamma=0.5, sigma=1, r=1, lam=0.5)), got {type(spec).__name__} "
                         f"{spec!r:.40}; riskcalc.limit / steps_limit take the method name and "
                         "parameters directly")
    return spec
