"""pandas on demand: the ``to_frame`` methods need it, the package does not (extra ``frames``)."""


def pandas():
    """The pandas module, or ImportError saying how to install it."""
    try:
        import pandas
    except ImportError:
        raise ImportError("to_frame needs pandas, an optional dependency: "
                          "pip install 'fedrisk[frames]' (or pip install pandas)") from None
    return pandas
