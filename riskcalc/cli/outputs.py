"""Output paths checked before any work: a run must not spend minutes and then fail to write."""

from __future__ import annotations

import os


def check_writable(path, option: str) -> None:
    """Raise ValueError naming ``option`` unless ``path`` can be created or overwritten as a
    file (its folder exists and is writable; an existing ``path`` is a writable file)."""
    if path is None:
        return
    if not str(path).strip():
        raise ValueError(f"{option} needs a file name, got an empty one")
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise ValueError(f"{option} {path}: is a directory, expected a file path")
    if not os.path.isdir(folder):
        raise ValueError(f"{option} {path}: folder {folder} does not exist")
    if not os.access(folder, os.W_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
        raise ValueError(f"{option} {path}: not writable")


def make_folder(path, option: str) -> None:
    """Create the output folder ``path`` (and parents) now, or raise ValueError naming
    ``option``."""
    if not str(path).strip():
        raise ValueError(f"{option} needs a folder name, got an empty one")
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as exc:
        raise ValueError(f"{option} {path}: cannot create the folder ({exc.strerror})") from None
    if not os.access(path, os.W_OK):
        raise ValueError(f"{option} {path}: not writable")


def same_file(a, b) -> bool:
    """Whether the paths ``a`` and ``b`` name the same file (existing or not)."""
    if os.path.exists(a) and os.path.exists(b):
        return os.path.samefile(a, b)
    return os.path.abspath(a) == os.path.abspath(b)
