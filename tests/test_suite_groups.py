"""The suite's order over two workers (tests/conftest.py): every file that reads the session's
paper-checks catalogue is one of the consecutive readers (else it would be scheduled apart and
a second worker would run the catalogue again), and the longest-first order names files that
exist."""

import pathlib
import re

from tests import conftest

HERE = pathlib.Path(__file__).resolve().parent
SHARED = re.compile(r"\b(quick_catalogue|quick_sensitivity)\b")


def test_every_reader_of_the_catalogue_is_listed():
    readers = {p.name for p in HERE.glob("test_*.py") if SHARED.search(p.read_text())}
    assert readers - {"test_suite_groups.py"} == set(conftest.CATALOGUE_READERS)


def test_the_readers_are_consecutive_and_the_order_names_existing_files():
    order = conftest.LONGEST_FIRST
    first = order.index(conftest.CATALOGUE_READERS[0])
    assert order[first:first + len(conftest.CATALOGUE_READERS)] == conftest.CATALOGUE_READERS
    assert set(order) <= {p.name for p in HERE.glob("test_*.py")}
    assert len(set(order)) == len(order)
