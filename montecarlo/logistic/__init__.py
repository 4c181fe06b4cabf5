"""Simulations of the logistic model of ``riskcalc.logistic``: ridge toward the centre
(``ridge``) and the federated pipeline with a finite number of clients (``pipeline``, its exact
minimizers in ``fits``), and the sweep of both over a grid (``sweep``, its checks and time
estimate in ``sweep_checks``)."""
