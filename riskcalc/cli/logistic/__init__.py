"""The logistic model family of the model verbs (``--model logistic``): ``family`` (its options,
modes and ``predict``, named in ``riskcalc.cli.options.families.FAMILIES``), ``compare``,
``sweep`` and ``advise``."""
