"""Seeds: every random number of a simulation is a function of one integer seed.

Replicate ``rep`` of any experiment draws from ``SeedSequence(seed, spawn_key=(rep, ...))``:
the same child that ``SeedSequence(seed).spawn(...)`` would hand out, built directly so that a
worker needs nothing but (seed, rep). Two consequences the simulations rely on:

* results do not depend on the number of workers or the order tasks run in;
* grid points of a sweep share replicate ``rep``'s random numbers (common random numbers), so
  differences between grid points are not blurred by independent noise.
"""

from __future__ import annotations

import numpy as np

from riskcalc._validate import seed_integer


def check_seed(seed) -> int:
    """A seed must be a non-negative integer (what ``SeedSequence`` accepts as entropy)."""
    return seed_integer("seed", seed)


def replicate_seed(seed: int, rep: int, *stream: int) -> np.random.SeedSequence:
    """The SeedSequence of replicate ``rep`` (and optional sub-stream indices) under ``seed``."""
    return np.random.SeedSequence(check_seed(seed), spawn_key=(int(rep),) + tuple(map(int, stream)))


def replicate_rng(seed: int, rep: int, *stream: int) -> np.random.Generator:
    """A ``numpy.random.Generator`` for replicate ``rep`` (see ``replicate_seed``)."""
    return np.random.default_rng(replicate_seed(seed, rep, *stream))
