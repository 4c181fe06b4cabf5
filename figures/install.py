"""A figure set installed whole: the files of a set (``set_files``), the check that each can
be replaced (``check_targets``), the renames that put the set in or leave the previous one
(``install``), and the images of an earlier set that no longer belong (``stale_images``)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

#: The images ``figures.build`` can write (both by default).
IMAGE_FORMATS = ("png", "pdf")

def set_files(fig_id: str, out_dir, formats=IMAGE_FORMATS) -> dict:
    """The files of figure ``fig_id``'s set in ``out_dir``, by extension: the images of
    ``formats``, the CSV and the caption (TXT)."""
    return {ext: Path(out_dir) / f"{fig_id}.{ext}" for ext in (*formats, "csv", "txt")}


def check_targets(files: dict, out_dir) -> None:
    """ValueError naming the file of the set (``set_files``) that a rename cannot or must not
    replace, a directory or a device, pipe or socket: found before the set is drawn, not as
    the raw error of a rename halfway through its install."""
    for path in files.values():
        if path.is_dir() and not path.is_symlink():
            raise ValueError(f"{out_dir}: {path.name} is a directory, where the figure set "
                             "writes a file: move it away")
        if path.exists() and not path.is_symlink() and not path.is_file():
            # A named pipe or a device was replaced by the rename, as --out FILE refuses.
            raise ValueError(f"{out_dir}: {path.name} is not a regular file (a device, pipe "
                             "or socket), where the figure set writes a file: move it away")


def install(staged: dict, files: dict, stale: list, staging: Path) -> None:
    """Rename the ``staged`` files onto ``files`` and move the ``stale`` images into
    ``staging``, all or none: every file replaced is first linked (or copied) into
    ``staging``, and a failure or an interrupt halfway puts each back, so the folder holds
    the previous set or the new one, never a PNG of other data than the CSV beside it. Each
    rename is atomic: a reader never finds a file of the set missing."""
    done = []   # (path, its previous version kept in staging or None, new file installed)
    try:
        for path in stale:
            os.replace(path, staging / f"stale.{path.name}")
            done.append((path, staging / f"stale.{path.name}", False))
        for ext in ("csv", "txt", "pdf", "png"):
            if ext not in staged:
                continue
            path, kept = files[ext], None
            if os.path.lexists(path):
                kept = staging / f"previous.{path.name}"
                _keep(path, kept)
            done.append((path, kept, False))
            os.replace(staged[ext], path)
            done[-1] = (path, kept, True)
    except BaseException:
        for path, kept, installed in reversed(done):
            try:
                if kept is not None:
                    os.replace(kept, path)
                elif installed:
                    os.unlink(path)
            except OSError:
                pass    # the first error is the one to report; the rest is what it left
        raise


def _keep(path: Path, kept: Path) -> None:
    """A copy of ``path`` at ``kept`` that leaves ``path`` in place: a hard link, or a copy
    where the file system has none; a symbolic link stays a link."""
    if path.is_symlink():
        os.symlink(os.readlink(path), kept)
        return
    try:
        os.link(path, kept)
    except OSError:
        shutil.copy2(path, kept)


def stale_images(files, staged, formats) -> list:
    """The images in the output folder of a format not asked for that no longer show the set's
    data: kept when the previous build wrote the same CSV and caption byte for byte (a
    ``--formats pdf`` after a ``--formats png`` build keeps the PNG), else removed (a full
    build's PDF was left beside a new ``--formats png`` set drawn from other data)."""
    others = [files["csv"].with_suffix(f".{ext}") for ext in IMAGE_FORMATS
              if ext not in formats]
    others = [path for path in others if path.is_file()]
    same = all(files[ext].is_file() and files[ext].read_bytes() == staged[ext].read_bytes()
               for ext in ("csv", "txt"))
    return [] if same else others
