"""Start-up cost of the ``riskcalc`` command against the floor of any numpy program.

Every CLI call pays Python's start-up and its imports before any arithmetic; for a one-line
``riskcalc predict`` that is the whole cost. The baseline is ``python -c "import numpy"`` (no
program using numpy can start faster); the goal (issue 12) is a ratio of at most 2.5, which the
lazy subcommand loading of ``riskcalc.cli`` (only the named subcommand's module is imported)
and the lazy scipy imports of the theory code make possible.

The two commands are run in turn ``--repeat`` times (interleaved, so load on the machine hits
both alike); prints the median wall time of each and the ratio of the medians.

Run: ``python benchmarks/bench_startup.py [--repeat 15]``.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time

BASELINE = [sys.executable, "-c", "import numpy"]
ARGS = ["predict", "ftfa", "--gamma", "2", "--r", "1", "--sigma", "0.5"]


def riskcalc_command() -> list:
    """The installed ``riskcalc`` script if on PATH, else the same entry point through this
    interpreter (what the script runs)."""
    script = shutil.which("riskcalc")
    if script is not None:
        return [script, *ARGS]
    return [sys.executable, "-c", "import sys; from riskcalc.cli import main; sys.exit(main())",
            *ARGS]


def wall(cmd) -> float:
    t = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15, help="runs of each command")
    args = parser.parse_args()
    cmd = riskcalc_command()
    wall(cmd)  # warm the file cache for both (first run of a fresh install compiles .pyc)
    wall(BASELINE)
    ours, base = [], []
    for _ in range(args.repeat):
        ours.append(wall(cmd))
        base.append(wall(BASELINE))
    m_ours, m_base = statistics.median(ours), statistics.median(base)
    print(f"riskcalc {' '.join(ARGS)}: median {m_ours * 1e3:.0f} ms")
    print(f"python -c 'import numpy': median {m_base * 1e3:.0f} ms")
    print(f"ratio: {m_ours / m_base:.2f} (goal <= 2.5)")


if __name__ == "__main__":
    main()
