"""Paper 004's Algorithm 1 with K warm-started local steps, Sigma = I (derived here): the spectrum
of its round map (``rate``: edges by quadrature, the fallback and the tests' check; ``fold``: the
same edges as folds of the subordination equations, and the circles where the spectrum leaves the
real axis) and the curves of the server model, the clients' own models and the distance to the
fixed point (``curves``), all on the clients' laws of ``laws``; rounds all at the fixed point:
the exact prox's, the same for every K (``fixed_point``). Under a covariance spectrum:
``sigma.algorithm1``."""
