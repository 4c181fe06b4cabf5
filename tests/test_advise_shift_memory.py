"""``riskcalc.advise.memory``: glibc keeps the memory of freed arrays for the next ones (the
page faults and kernel time of ``advise`` under covariate shift at 1000 clients)."""

import os
import subprocess
import sys
import pathlib

import pytest

from riskcalc.advise import memory

ROOT = pathlib.Path(__file__).resolve().parents[1]

# Ten rounds of 16 arrays of 1 MiB built and freed together: past glibc's default trim
# threshold (twice the largest array freed), so by default the free top of the heap goes back
# to the kernel after each round and the next round faults on every 4 KB page again.
ROUNDS = """
import resource
import numpy as np
from riskcalc.advise.memory import keep_freed_memory

def faults():
    start = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(10):
        arrays = [np.ones(1 << 17) for _ in range(16)]
        del arrays
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - start

faults()                    # the default mmap threshold rises to the arrays' size
before = faults()
ok = keep_freed_memory()
faults()
print(before, ok, faults())
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_freed_memory_is_kept_without_page_faults():
    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    env["PYTHONPATH"] = str(ROOT)
    out = subprocess.run([sys.executable, "-c", ROUNDS], capture_output=True, text=True,
                         env=env, cwd=ROOT, check=True).stdout.split()
    before, ok, after = int(out[0]), out[1], int(out[2])
    if ok != "True":
        pytest.skip("not glibc: mallopt absent or a stub")
    pages = 10 * 16 * (1 << 20) // 4096
    assert before >= pages // 2           # the default: most pages faulted again
    assert after <= pages // 100          # kept: (almost) none


def test_a_setting_that_is_not_an_integer_changes_nothing(monkeypatch):
    monkeypatch.setenv("MALLOC_TRIM_THRESHOLD_", "lots")
    assert memory.keep_freed_memory() is False
