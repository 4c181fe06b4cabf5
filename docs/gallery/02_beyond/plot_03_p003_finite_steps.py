"""
Risk after k personalization steps (Sec. 7, Algs. 5-6)
======================================================

Figure ``p003-finite-steps``. Source: Cheng, Chadha & Duchi (2023), Sec. 7 Algs. 5-6 and Thms 1-2 (cf. Figs. 5-6).

The caption printed below the figure says what is drawn, with every parameter and the seed.
The full version: ``riskcalc figures p003-finite-steps --out DIR``.
"""

import figures

out = figures.draw("p003-finite-steps", quick=True)
print(out.text)
