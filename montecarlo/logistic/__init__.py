"""Simulations of the logistic model of ``riskcalc.logistic``: ridge toward the centre
(``ridge``) and the federated pipeline with a finite number of clients (``pipeline``)."""
