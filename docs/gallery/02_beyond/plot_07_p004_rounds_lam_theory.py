"""
Paper 004's Algorithm 1 along the rounds for small, medium and large lam
========================================================================

Figure ``p004-rounds-lam-theory``. Source: paper 004's communication claim (Sec. 6.3, Fig. 1
bottom row; Cor. 1, eq. 13): the larger lam, the more rounds Algorithm 1 needs. Exact limits
for Algorithm 1 with exact local solves on paper 003's linear model; derived here
(``riskcalc.rounds_limit("pfedme")``).

The caption printed below the figure says what is drawn, with every parameter and the seed.
The full version: ``riskcalc figures p004-rounds-lam-theory --out DIR``.
"""

import figures

out = figures.draw("p004-rounds-lam-theory", quick=True)
print(out.text)
