"""Memory under ``advise`` at 1000 clients under covariate shift: ``riskcalc.advise.memory``
(glibc keeps the memory of freed arrays for the next ones: no page faults and kernel time at
every call) and ``block_pencil._jacobian``'s products in cache-sized chunks of pencils."""

import os
import subprocess
import sys
import pathlib

import numpy as np
import pytest

from riskcalc.advise import memory
from riskcalc.linear.engine import block_pencil

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


@pytest.mark.parametrize("dtype", [float, complex])
def test_jacobian_in_chunks_is_each_pencils_own(dtype):
    # A batch over three chunks (the last one short): every pencil's I - J bit for bit the one
    # it has alone, on the many-entries route (8 x 8 pencils, blocks 3, 1, 1, 3 as MAML-FL's
    # W: 42 unknowns).
    rng = np.random.default_rng(30)
    B, n, k = 2 * block_pencil._CHUNK + 5, 2, 8
    block = np.repeat(np.arange(4), [3, 1, 1, 3])
    upper = block[:, None] <= block[None, :]

    def draw(*shape):
        x = rng.normal(size=shape)
        return x + 1j * 1e-3 * rng.normal(size=shape) if dtype is complex else x

    g, s, h = rng.uniform(1, 4, B), rng.uniform(0.5, 4, (B, n)), np.array([0.3, 0.7])
    C, Q = draw(B, k, k) * upper, draw(B, n, k, k) * upper
    idx = np.flatnonzero((block[None, :] - block[:, None]).ravel() >= 0)
    assert 4 * idx.size ** 2 > k ** 4                      # the many-entries route
    batch = block_pencil._jacobian(g, s, h, C, Q, idx)
    alone = np.concatenate([block_pencil._jacobian(g[j:j + 1], s[j:j + 1], h, C[j:j + 1],
                                                   Q[j:j + 1], idx) for j in range(B)])
    assert batch.dtype == alone.dtype == np.dtype(dtype)
    assert np.array_equal(batch, alone)
