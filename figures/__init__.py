"""Figures of the papers, regenerated (consumer layer: uses riskcalc and montecarlo).

``riskcalc figures --list`` lists them; ``figures.build(ID, OUT)`` writes ``ID.png``,
``ID.pdf``, ``ID.csv`` (the data drawn) and ``ID.txt`` (caption with every parameter and the
seed); ``figures.draw(ID)`` returns the drawn figure, table and caption. ``NOT_REPRODUCIBLE`` lists the papers' figures that need data this toolkit cannot have.
"""

from figures.core import FIGURES, build, draw, get_figure, load_all
from figures.not_reproducible import NOT_REPRODUCIBLE

__all__ = ["FIGURES", "NOT_REPRODUCIBLE", "build", "draw", "get_figure", "load_all"]
