"""Personalization after round T under a shared covariance spectrum: the extended pencil, one
chain per client appended to the base pencil, and its fixed point (``pencil``); the route that
assembles the personalized risks and guards its size is ``sigma.personalize_sigma``."""
