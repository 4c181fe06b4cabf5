"""``python -m riskcalc``: the same as the ``riskcalc`` command."""

import sys

from riskcalc.cli import main

sys.exit(main())
