"""
Rounds to a 1e4 reduction vs lam: APGD1 vs APGD2
================================================

Figure ``p001-fig2``. Source: Hanzely, Hanzely, Horvath & Richtarik (2020), Fig. 2 (Sec. 4.1, Algs. 2-3).

The caption printed below the figure says what is drawn, with every parameter and the seed.
The full version: ``riskcalc figures p001-fig2 --out DIR``.
"""

import figures

out = figures.draw("p001-fig2", quick=True)
print(out.text)
