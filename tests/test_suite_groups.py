"""The suite's split over two workers (tests/conftest.py): a file that reads the session's
paper-checks catalogue is in its group (else a second worker would run the catalogue again),
and the longest-first order names files that exist."""

import pathlib
import re

from tests import conftest

HERE = pathlib.Path(__file__).resolve().parent
SHARED = re.compile(r"\b(quick_catalogue|quick_sensitivity)\b")


def test_every_reader_of_the_catalogue_shares_its_group():
    readers = {p.name for p in HERE.glob("test_*.py") if SHARED.search(p.read_text())}
    assert readers - {"test_suite_groups.py"} == set(conftest._SHARED_GROUPS)


def test_the_longest_first_order_names_existing_groups():
    names = {p.name for p in HERE.glob("test_*.py")} | set(conftest._SHARED_GROUPS.values())
    assert set(conftest._LONGEST_FIRST) <= names
    assert len(set(conftest._LONGEST_FIRST)) == len(conftest._LONGEST_FIRST)
