"""The C library's allocator for ``riskcalc.advise``: freed memory kept for the next arrays.

``advise`` evaluates the finite-M limits and their gradients hundreds of times over batches of
all the clients (1000 clients under covariate shift: arrays of megabytes, built and freed at
every call). glibc's malloc maps an array above its mmap threshold afresh (128 KB at start,
rising only as such arrays are freed) and hands the free top of its heap back to the kernel
past a trim threshold that follows it, so each call pays a page fault per 4 KB again: kernel
time, and user time refilling the caches. Measured (one thread, ``benchmarks/bench_advise.py``
shift1000, ``advise(fed, [method])`` in one process, 2026-11-27, load ~3): 1.3 million minor
faults and 3.7 s of system time over FedAvg, FTFA, RTFA, MAML-FL and pFedMe (MAML-FL 1.7 s,
FedAvg 1.1 s), against ~20,000 faults and 0.1 s with the thresholds below; the peak resident
memory the same (~160 MB). The numbers computed do not change (the same arithmetic on
memory from elsewhere). The ``riskcalc advise`` command sets them for its own process; the
library's ``advise()`` does not (the allocator is its host process's: a caller who wants the
saving calls ``keep_freed_memory()`` once). ``tests/conftest.py`` sets the same two thresholds
for the suite.
"""

from __future__ import annotations

import ctypes
import os

#: glibc's mallopt parameters (malloc.h).
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
#: Arrays up to this size come from the heap (glibc's largest mmap threshold, 32 MiB).
MMAP_THRESHOLD = 32 << 20
#: Free memory kept at the top of the heap.
TRIM_THRESHOLD = 512 << 20


def keep_freed_memory() -> bool:
    """Set glibc's mmap and trim thresholds to ``MMAP_THRESHOLD`` and ``TRIM_THRESHOLD`` for
    this process (module docstring), or to the values of the environment variables
    ``MALLOC_MMAP_THRESHOLD_`` and ``MALLOC_TRIM_THRESHOLD_`` where they are set (glibc read
    them at start; they stay in force). Returns whether both were set: False where the C
    library is not glibc (musl's mallopt does nothing, macOS and Windows have none) or a
    variable is not an integer; nothing else changes then."""
    try:
        mmap = int(os.environ.get("MALLOC_MMAP_THRESHOLD_", MMAP_THRESHOLD))
        trim = int(os.environ.get("MALLOC_TRIM_THRESHOLD_", TRIM_THRESHOLD))
        mallopt = ctypes.CDLL(None).mallopt
        mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
        return bool(mallopt(_M_MMAP_THRESHOLD, mmap)) and bool(mallopt(_M_TRIM_THRESHOLD,
                                                                       trim))
    except (ValueError, OSError, AttributeError, TypeError, ctypes.ArgumentError):
        return False
