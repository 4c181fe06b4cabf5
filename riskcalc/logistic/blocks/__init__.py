"""The fixed points of M FIXED blocks of data (Sigma = I), each derived in its module: FedAvg's
global model over the M blocks (``pooled``), the target's fine-tuning toward it on shared data
(``finetune``) and the FedProx / pFedMe joint objective (``fedprox``). Their public face is
``riskcalc.logistic.finite_clients``; their spectral versions are in
``riskcalc.logistic.spectrum``."""
