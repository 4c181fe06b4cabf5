"""The package version: the one place it is written (pyproject.toml reads it from here, via
``[tool.setuptools.dynamic]``), so ``riskcalc.__version__``, ``riskcalc --version`` and the
installed metadata agree whether or not the package is installed."""

__version__ = "0.1.0"
