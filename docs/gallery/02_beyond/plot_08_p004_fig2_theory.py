"""
Paper 004's Figure 2 on the linear model: Algorithm 1 with K = 1, 5, 20 local steps
===================================================================================

Figure ``p004-fig2-theory``. Source: paper 004's Fig. 2 (Sec. 6.3; Cor. 1): more local steps
save communication rounds when lam is small, and little when it is large. Exact limits for
Algorithm 1 with K warm-started local gradient steps on paper 003's linear model, derived here
(``riskcalc.rounds_limit("pfedme", local_steps=K)``), through the literal algorithm simulated.

The caption printed below the figure says what is drawn, with every parameter and the seed.
The full version: ``riskcalc figures p004-fig2-theory --out DIR``.
"""

import figures

out = figures.draw("p004-fig2-theory", quick=True)
print(out.text)
