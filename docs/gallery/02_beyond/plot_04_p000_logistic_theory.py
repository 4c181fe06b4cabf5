"""
Personalized logistic regression: exact limits vs simulation
============================================================

Figure ``p000-logistic-theory``. Source: riskcalc.logistic (CGMT; Salehi-Abbasi-Hassibi 2019, Sur-Candes 2019); model of Chen, Zheng, Long & Su (2023), Sec. 3.2 with w_i = w_0 + r u.

The caption printed below the figure says what is drawn, with every parameter and the seed.
The full version: ``riskcalc figures p000-logistic-theory --out DIR``.
"""

import figures

out = figures.draw("p000-logistic-theory", quick=True)
print(out.text)
