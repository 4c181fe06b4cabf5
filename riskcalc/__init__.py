"""riskcalc: exact asymptotic bias, variance and risk of personalized federated learning methods."""
