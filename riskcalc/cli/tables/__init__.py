"""The verbs' text tables and CSV rows: ``advise`` (the ranked candidates), ``bootstrap``
(``advise --bootstrap``'s intervals and the recommendation's stability) and ``rounds`` (``predict``
and ``compare`` along the rounds)."""
