"""
Paper 000's Fig. 1 with exact minimizers and the finite-M logistic limits
=========================================================================

Figure ``p000-fig1-theory``. Source: Chen, Zheng, Long & Su (2023), Fig. 1 and Appendix D;
riskcalc.logistic_limit(clients=5): FedAvg's global model over five clients, local ridge and
fine-tuning, exact ridge-regularized minimizers through the finite-M limits.

The caption printed below the figure says what is drawn, with every parameter and the seed,
and how this differs from the paper's SGD runs.
The full version: ``riskcalc figures p000-fig1-theory --out DIR``.
"""

import figures

out = figures.draw("p000-fig1-theory", quick=True)
print(out.text)
