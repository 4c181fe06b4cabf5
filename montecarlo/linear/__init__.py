"""Simulations of paper 003's linear model: instances sampled from a ``riskcalc.ClientSpec``
(``instances``), the closed-form estimators of every registered method (``estimators``), the
measured bias, variance and risk (``measure``), the iterative algorithms of Sec. 7
(``algorithms``), and whole federations under an advise pipeline (``federation``)."""
