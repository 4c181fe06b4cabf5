"""Paper 004's Algorithm 1 with K warm-started local steps under a shared covariance spectrum:
the pieces beyond the curves of ``sigma.algorithm1_sigma_k`` (personalization from the round-T
server model, ``personalize``)."""
