"""Training dynamics of the linear model: the risk along federated rounds (issue 29).

``rounds_limit`` dispatches on the method through ``ROUTES`` (method -> curve function, so that
paper 004's Algorithm 1 can be added as a module of its own); ``fedavg`` holds the derivation,
``subordination`` and ``client_laws`` the spectrum of the round map.
"""

from riskcalc.linear.dynamics.api import (RoundsChoice, RoundsLimit, optimal_rounds,
                                          rounds_limit, rounds_to_eps)
from riskcalc.linear.dynamics.fedavg import fedavg_curves

#: method -> function computing its curves (``riskcalc.linear.dynamics.api`` refuses others).
ROUTES = {"fedavg": fedavg_curves}

__all__ = ["ROUTES", "RoundsChoice", "RoundsLimit", "optimal_rounds", "rounds_limit",
           "rounds_to_eps"]
