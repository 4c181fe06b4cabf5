"""
RTFA risk vs gamma and vs lam (Thm 2)
=====================================

Figure ``p003-thm2-rtfa``. Source: Cheng, Chadha & Duchi (2023), Thm 2 (eqs. 6, 8).

The caption printed below the figure says what is drawn, with every parameter and the seed.
The full version: ``riskcalc figures p003-thm2-rtfa --out DIR``.
"""

import figures

out = figures.draw("p003-thm2-rtfa", quick=True)
print(out.text)
