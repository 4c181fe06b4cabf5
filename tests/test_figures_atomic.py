"""A figure is written as a set (issue 32): an interrupted build leaves no PNG without its PDF,
CSV and caption, and no staging files."""

import pytest

import figures
from figures import core


def test_interrupted_build_leaves_the_previous_set(tmp_path, monkeypatch):
    built = figures.build("p003-region", tmp_path, quick=True, cache=False)
    before = {ext: open(path, "rb").read() for ext, path in built.files.items()}

    def interrupted(self, path):
        raise KeyboardInterrupt

    monkeypatch.setattr(core.Table, "write", interrupted)
    with pytest.raises(KeyboardInterrupt):
        figures.build("p003-region", tmp_path, quick=True, cache=False, seed=1)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        f"p003-region.{ext}" for ext in ("png", "pdf", "csv", "txt"))
    assert {ext: open(path, "rb").read() for ext, path in built.files.items()} == before


def test_interrupted_first_build_leaves_nothing(tmp_path, monkeypatch):
    def interrupted(self, path):
        raise KeyboardInterrupt

    monkeypatch.setattr(core.Table, "write", interrupted)
    # The PNG alone is staged (the PDF costs ~0.5 s more): the staging directory goes as a whole
    # whatever it holds, and a PDF written outside it fails the test above (its bytes change).
    with pytest.raises(KeyboardInterrupt):
        figures.build("p003-region", tmp_path, quick=True, cache=False, formats="png")
    assert list(tmp_path.iterdir()) == []
