"""The result of ``riskcalc.linear.finite_clients.clients_limit``: every client's finite-M
limits, with their population means, notes and solver diagnostics, and the notes (the
caveats of a finite-M limit) ``clients_limit`` and ``riskcalc.limit`` attach."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from riskcalc import _frames


@dataclass(frozen=True)
class ClientsLimit:
    """Finite-M limits of every client of a federation (``clients_limit``).

    Attributes
    ----------
    method : str
    params : dict
        Per-client parameter lists and the weights.
    bias, variance, risk : ndarray (M,)
        Client j's limits as target.
    mean_bias, mean_variance, mean_risk : float
        Their population averages (uniform over clients).
    notes : tuple of str
        Where the parameters leave the papers' assumptions.
    diagnostics : dict
        The scalar solves behind the numbers (``riskcalc.solvers.record``): per quantity
        solved, the number of solves and roots, the most iterations a root took and the
        largest residual at the last iterate; empty when no scalar equation was solved
        (closed forms and quadrature).
    """

    method: str
    params: dict
    bias: np.ndarray
    variance: np.ndarray
    risk: np.ndarray
    mean_bias: float
    mean_variance: float
    mean_risk: float
    notes: tuple = field(default=())
    diagnostics: dict = field(default_factory=dict, compare=False)
    __eq__ = _frames.equal    # arrays by value (riskcalc._frames.equal)

    def as_dict(self) -> dict:
        """Plain JSON values; infinite limits become None (JSON has no infinity)."""
        def conv(v):
            v = np.asarray(v, dtype=float)
            return np.where(np.isfinite(v), v, None).tolist()
        return {"method": self.method, "params": self.params, "bias": conv(self.bias),
                "variance": conv(self.variance), "risk": conv(self.risk),
                "mean": {"bias": conv(self.mean_bias), "variance": conv(self.mean_variance),
                         "risk": conv(self.mean_risk)},
                "notes": list(self.notes)}

    def to_frame(self):
        """A pandas DataFrame with one row per client (index ``client``, 0..M-1): the method,
        the client's parameters (gamma, sigma, r and the tuning), the weights, its bias,
        variance and risk as target. The population means are the columns' means.

        Needs pandas (``pip install 'fedrisk[frames]'``); ImportError saying so otherwise.
        """
        pd = _frames.pandas()
        # The covariance as text: ``spectra``'s SPECs were converted to floats (ValueError
        # "could not convert string to float: 'identity'" under covariate shift).
        per_client = {k: (v if k == "spectrum" else np.asarray(v, dtype=float))
                      for k, v in self.params.items()
                      if k not in ("clients", "weights", "spectra")}
        if "spectra" in self.params:
            given = [s if isinstance(s, str) else f"{len(s)} eigenvalues"
                     for s in self.params["spectra"]]
            per_client["spectrum"] = given * (self.bias.size if len(given) == 1 else 1)
        return pd.DataFrame({"method": self.method, **per_client,
                             "weights": self.params["weights"], "bias": self.bias,
                             "variance": self.variance, "risk": self.risk}).rename_axis("client")


def notes(method: str, gam, lam, variance, per_client: bool = False) -> tuple:
    """Caveats of a finite-M limit (the interpolation threshold; ``lam`` the tuning, alpha for
    MAML-FL, whose personalization is the min-norm interpolation whatever alpha).
    ``per_client``: ``gam``, ``lam`` per client (``clients_limit``), named by 0-based index in
    the note (the command line's order: the target first), which ``compare --federation``
    printed unnamed beside the target's finite variance (fuzz39 api F3). At the threshold the
    min-norm variance is sigma^2 times an infinite factor: the note follows ``variance``,
    infinite where sigma > 0 and 0 with no noise, where it said "infinite" beside a variance
    0 (as ``riskcalc.limit``'s own notes did: fuzz40 api F1)."""
    penalty = np.zeros_like(np.asarray(lam, float)) if method == "maml_fl" else np.asarray(lam)
    hit = (np.asarray(gam) == 1) & (penalty == 0)
    if method == "fedavg" or not np.any(hit):
        return ()
    variance = np.broadcast_to(variance, hit.shape)
    return tuple(_threshold_note(hit & cond, text, per_client) for cond, text in (
        (np.isinf(variance), "is infinite"),
        (variance == 0, "(sigma^2 times an infinite factor) is 0 with sigma = 0 (no noise)"))
        if np.any(hit & cond))


def _threshold_note(hit, text: str, per_client: bool) -> str:
    if not per_client or hit.all():      # every client: the text of limit(clients=M)
        return ("gamma = 1 with no ridge penalty: the interpolation threshold, where the "
                f"min-norm variance {text}")
    ids = np.flatnonzero(hit).tolist()
    who = ", ".join(map(str, ids[:5])) + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")
    one = len(ids) == 1
    return (f"gamma = 1 with no ridge penalty at client{'' if one else 's'} {who} (0-based, in "
            f"the order given): the interpolation threshold, where {'its' if one else 'their'} "
            f"min-norm variance {text}")
