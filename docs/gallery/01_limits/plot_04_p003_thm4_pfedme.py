"""
PFedMe risk vs gamma and vs lam (Thm 4)
=======================================

Figure ``p003-thm4-pfedme``. Source: Cheng, Chadha & Duchi (2023), Thm 4 (eq. 14).

The caption printed below the figure says what is drawn, with every parameter and the seed.
The full version: ``riskcalc figures p003-thm4-pfedme --out DIR``.
"""

import figures

out = figures.draw("p003-thm4-pfedme", quick=True)
print(out.text)
