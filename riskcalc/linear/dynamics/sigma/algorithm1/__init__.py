"""Paper 004's Algorithm 1 with K warm-started local steps under a shared covariance spectrum
(derived here): the curves (``curves``), the dense pencil and its spectrum's edges (``pencil``),
the chain route beyond the dense pencil (``chain``) and its cost (``cost``), the contour
machinery they share (``contour``), the parts of the round map's spectrum that leave the real
axis (``circles``: odd K, eta (L + lam) > 1, g lam > 1: the disk bound, the real edges, the
circle contours) and personalization from the round-T server model (``personalize``)."""
