"""Training dynamics of the linear model: the risk along federated rounds (issue 29).

``rounds_limit`` dispatches on the method through ``ROUTES`` (method -> curve function):
``fedavg`` holds the derivation of the round map's curves for any client filter,
``client_laws`` FedAvg's filter (K local gradient steps), ``prox_laws`` paper 004's
Algorithm 1 with exact local solves, the room ``algorithm1`` its K warm-started local steps
(``pfedme_steps``, Sigma = I), ``subordination`` the spectrum of the round map, ``tuning`` the
rounds read from a curve, ``result`` the ``RoundsLimit`` it returns; the room ``sigma``: the
rounds under a shared covariance spectrum (called by ``rounds_limit`` when a spectrum is given);
the room ``shift``: under covariate shift (``spectra``).
"""

from riskcalc.linear.dynamics.algorithm1.curves import curves as algorithm1_step_curves
from riskcalc.linear.dynamics.algorithm1.rate import algorithm1_contraction
from riskcalc.linear.dynamics.api import RoundsLimit, rounds_limit
from riskcalc.linear.dynamics.fedavg import fedavg_curves
from riskcalc.linear.dynamics.prox_laws import algorithm1_curves
from riskcalc.linear.dynamics.tuning import RoundsChoice, optimal_rounds, rounds_to_eps

#: method -> function computing its curves (``riskcalc.linear.dynamics.api`` refuses others).
ROUTES = {"fedavg": fedavg_curves, "pfedme": algorithm1_curves,
          "pfedme_steps": algorithm1_step_curves}

__all__ = ["ROUTES", "RoundsChoice", "RoundsLimit", "algorithm1_contraction", "optimal_rounds",
           "rounds_limit", "rounds_to_eps"]
