"""
Local baselines (min-norm, ridge) vs gamma and vs lam (Cor. 3.1)
================================================================

Figure ``p003-cor31-local``. Source: Cheng, Chadha & Duchi (2023), Cor. 3.1 (eqs. 9-10).

The caption printed below the figure says what is drawn, with every parameter and the seed.
The full version: ``riskcalc figures p003-cor31-local --out DIR``.
"""

import figures

out = figures.draw("p003-cor31-local", quick=True)
print(out.text)
