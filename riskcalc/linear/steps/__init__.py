"""Finite numbers of personalization gradient steps (paper 003, Sec. 7, Algs. 5-6).

``limits``: the public entry ``steps_limit`` and the steps from the exact (M -> infinity)
centre; ``optimal``: ``optimal_steps``, the best k on that curve within a time estimate;
``finite_clients``: steps from the finite-M FedAvg model, any shared spectrum, its traces
built as pencils by ``pencils`` (for the engine ``riskcalc.linear.engine.resolvent_pencil``).
"""
