"""The machinery every verb of the ``riskcalc`` command shares: ``guards`` (checks and
conversions, ``--max-minutes``, progress, the one JSON writer), ``outputs`` (output paths checked
before any work, written atomically) and ``plugins`` (``--plugin FILE.py``)."""
