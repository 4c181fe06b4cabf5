"""
Accuracy vs heterogeneity R: FedAvg, local, fine-tuning (left), FedProx (right)
===============================================================================

Figure ``p000-fig1``. Source: Chen, Zheng, Long & Su (2023), Fig. 1 and Appendix D.

The caption printed below the figure says what is drawn, with every parameter and the seed.
The full version: ``riskcalc figures p000-fig1 --out DIR``.
"""

import figures

out = figures.draw("p000-fig1", quick=True)
print(out.text)
