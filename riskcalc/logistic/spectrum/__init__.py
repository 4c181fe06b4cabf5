"""The logistic family with any covariance spectrum (x ~ N(0, Sigma); issue 33): the one-learner
fixed point (``fixed_point``; derived there), its public face and grids (``limits``), and the
finite-M pipeline's global model (``pooled``), fine-tuning (``finetune``) and FedProx joint
objective (``fedprox``) with a spectrum. ``riskcalc.logistic_limit(..., spectrum=)`` and
``riskcalc.logistic_clients_limit(..., spectrum=)`` dispatch here."""
