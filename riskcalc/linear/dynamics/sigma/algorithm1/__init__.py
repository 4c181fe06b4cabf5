"""Paper 004's Algorithm 1 with K warm-started local steps under a shared covariance spectrum:
the pieces beyond the curves of ``sigma.algorithm1_sigma_k``: the contour machinery they share
(``contour``), the parts of the round map's spectrum that leave the real axis (``circles``: odd
K, eta (L + lam) > 1, g lam > 1: the disk bound, the real edges, the circle contours), the chain
route's cost (``cost``) and personalization from the round-T server model (``personalize``)."""
