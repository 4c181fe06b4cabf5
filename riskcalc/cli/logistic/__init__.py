"""The logistic model family of the model verbs (``--model logistic``): ``family`` (its options,
modes and ``predict``, named in ``riskcalc.cli.options.families.FAMILIES``), ``compare``,
``sweep`` and ``advise``."""


def file_ranges() -> dict:
    """The family's ranges of a federation file's numbers where they differ from the package's
    (``riskcalc.federation_file.read``'s ``ranges``): gamma in ``GAMMA_RANGE``."""
    from riskcalc.logistic.ranges import GAMMA_RANGE

    return {"gamma": (*GAMMA_RANGE, "with --model logistic (riskcalc.logistic.ranges)")}
