"""``python -m riskcalc``: the same as the ``riskcalc`` command."""

import sys

from riskcalc.cli import main

if __name__ == "__main__":  # importing the module (e.g. the API reference) runs nothing
    sys.exit(main())
