"""Paper 004's Algorithm 1 under a shared covariance spectrum, the parts of its round map's
spectrum that leave the real axis (``circles``: odd K, eta (L + lam) > 1, g lam > 1): the disk
bound, the real edges, and the circle contours that ``sigma.algorithm1_sigma_k`` and
``sigma.algorithm1_chain`` integrate on there."""
