"""``riskcalc.show_versions()``: what a bug report needs (after scikit-learn's).

Everything is imported inside the function, so ``import riskcalc`` pays nothing for it.
"""

from __future__ import annotations

import sys

# Required by fedrisk (pyproject ``dependencies``), then the optional extras: distribution
# names, read from the installed metadata (importing dask or sphinx would take seconds).
REQUIRED = ("numpy", "scipy", "sympy", "mpmath", "matplotlib", "joblib", "tqdm",
            "threadpoolctl")
OPTIONAL = ("pandas", "dask", "distributed", "pytest", "hypothesis", "sphinx", "numpydoc",
            "sphinx-gallery")


def _version(distribution: str) -> str | None:
    """The installed version of a distribution, or None when it is not installed."""
    import importlib.metadata

    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def _blas() -> list[dict]:
    """The BLAS/OpenMP libraries numpy and scipy loaded (threadpoolctl), one dict each."""
    import numpy  # noqa: F401  (loads its BLAS, which threadpoolctl then finds)
    import scipy.linalg  # noqa: F401
    from threadpoolctl import threadpool_info

    keys = ("internal_api", "version", "num_threads", "threading_layer", "architecture",
            "filepath")
    return [{k: info[k] for k in keys if k in info} for info in threadpool_info()]


def versions() -> dict:
    """The information ``show_versions`` prints, as a dict.

    Returns
    -------
    dict
        ``{"system": {...}, "dependencies": {...}, "optional": {...}, "blas": [...]}``: the
        fedrisk, Python and platform versions; the version of every required and optional
        package (None when not installed); the BLAS libraries loaded by numpy and scipy.
    """
    import platform

    from riskcalc._version import __version__

    system = {"fedrisk": __version__, "python": sys.version.replace("\n", " "),
              "executable": sys.executable, "machine": platform.platform()}
    return {"system": system,
            "dependencies": {name: _version(name) for name in REQUIRED},
            "optional": {name: _version(name) for name in OPTIONAL},
            "blas": _blas()}


def show_versions() -> None:
    """Print the fedrisk, Python, platform, dependency and BLAS versions (for bug reports).

    Returns
    -------
    None
        The report goes to standard output: one ``name: version`` line per item, optional
        packages that are not installed shown as ``None``.

    Examples
    --------
    >>> import riskcalc
    >>> riskcalc.show_versions()  # doctest: +SKIP
    """
    info = versions()
    for title, key in (("System", "system"), ("Python dependencies", "dependencies"),
                       ("Optional dependencies", "optional")):
        print(f"\n{title}:")
        width = max(map(len, info[key]))
        for name, value in info[key].items():
            print(f"{name:>{width}}: {value}")
    print("\nBLAS and threading libraries (threadpoolctl):")
    for lib in info["blas"] or [{"internal_api": "none found"}]:
        print("  " + ", ".join(f"{k}={v}" for k, v in lib.items()))
