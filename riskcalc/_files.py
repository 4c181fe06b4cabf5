"""Files written atomically, wherever they are written (the command line's outputs, and the
Python API's ``montecarlo.sweep.write_rows``): a temporary file beside the target, renamed onto it
when complete, so that a reader or an interrupted run never sees a half-written file; a symbolic
link is written through, as a shell's ``> path`` does. Files are bounded the same way wherever
they enter (a federation file, a spectrum file, a data file): ``file_size`` refuses one larger
than its kind can be before a byte of it is read.
"""

from __future__ import annotations

import os
import re
import tempfile
import tokenize
from contextlib import contextmanager

#: What numpy raises on a damaged .npy header besides ValueError and EOFError: its parser's
#: fallback tokenizes a header dict cut short ("{'descr': '<f8',") and raises
#: ``tokenize.TokenError``, which was a traceback (a spectrum file, a data file).
NPY_HEADER_ERRORS = (ValueError, EOFError, tokenize.TokenError)


def file_size(path, limit: int, where: str, what: str) -> int:
    """The size in bytes of the file ``path`` (0 for a device or pipe, which has none: its
    reader caps what it reads), or ValueError, before any of it is read, when it is larger than
    ``limit``: ``"{where}: N bytes, larger than {what} (L MiB)"``; ``what`` names the kind of
    file and what its limit holds (``"a federation file (about 200,000 clients)"``)."""
    try:
        size = os.stat(path).st_size if os.path.isfile(path) else 0
    except OSError as exc:
        raise ValueError(f"{where}: {exc.strerror or exc}") from None
    if size > limit:
        kind, _, holds = what.partition(" (")
        raise ValueError(f"{where}: {size} bytes, larger than {kind} ({limit / 2 ** 20:g} MiB"
                         + (f", {holds}" if holds else ")"))
    return size


def npy_damage(exc) -> str | None:
    """What numpy's error ``exc`` on loading a .npy array says of a damaged header, or None:
    a header cut short (``tokenize.TokenError``), or one longer than numpy reads without
    ``allow_pickle`` (its message advises allowing pickles: the readers said the file held
    Python objects)."""
    if isinstance(exc, tokenize.TokenError):
        return "its header is cut short"
    if "max_header_size" in str(exc):
        return "its header is longer than numpy reads safely"
    return None


def user_path(path) -> str:
    """``path`` (a str, bytes or os.PathLike) as a str, its leading ``~`` or ``~user`` read as
    a shell reads it unquoted, as that home folder (``os.path.expanduser``): the shell expands
    ``--data ~/d.npz`` but not ``--data=~/d.npz``, ``--spectrum file:~/eig.txt`` or a
    federation file's ``"file:~/eig.txt"``, which named a folder "~" ("does not exist")."""
    return os.path.expanduser(os.fsdecode(path))


def unreadable(path) -> str | None:
    """Why no file can be read at ``path``, or None when something is there: "does not exist",
    or the system's reason (a 5000-character name was said not to exist: "File name too
    long"; a name holding a NUL character)."""
    try:
        os.stat(path)
    except FileNotFoundError:
        return "does not exist"
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})"
    except ValueError:              # os.stat's "embedded null byte"
        return "cannot be read (its name holds a NUL character)"
    return None


def through_links(path, option: str) -> str:
    """The file a symbolic link ``path`` leads to (``path`` itself when it is no link), or
    ValueError naming ``option`` for a loop of links: an output is written where the link
    points, as a shell's ``> path`` does; the atomic rename onto the link itself replaced the
    link by a regular file and left its target unwritten."""
    if not os.path.islink(path):
        return path
    try:
        return os.path.realpath(path, strict=True)
    except FileNotFoundError:
        return os.path.realpath(path)   # a dangling link: its target is created
    except OSError as exc:
        raise ValueError(f"{option} {path}: {exc.strerror or exc} (a loop of symbolic "
                         "links?)") from None


#: A folder of open descriptors: /proc/self/fd (which /dev/stdout, /dev/stderr and /dev/fd/N
#: lead to) once /proc/self is resolved, or a thread's.
_FD_FOLDER = re.compile(r"/proc/(\d+)(/task/\d+)?/fd")

#: Links followed before giving up (Linux's own limit).
_MAX_LINKS = 40


def stream(path) -> str | None:
    """What ``path`` names when it leads through symbolic links to an open descriptor
    (``/dev/stdout``, ``/dev/stderr``, ``/dev/fd/N``, ``/proc/self/fd/N``): "stdout",
    "stderr" or "descriptor N" of this process, "a descriptor of process P" of another;
    None for any other path. Resolved whole, such a path is the file a shell redirect opened
    (or a /proc name of a pipe), which an atomic write must not replace."""
    here = os.path.abspath(str(path))
    for _ in range(_MAX_LINKS):
        found = _FD_FOLDER.fullmatch(os.path.realpath(os.path.dirname(here)))
        if found:
            fd = os.path.basename(here)
            if int(found.group(1)) != os.getpid():
                return f"a descriptor of process {found.group(1)}"
            return {"1": "stdout", "2": "stderr"}.get(fd, f"descriptor {fd}")
        if not os.path.islink(here):
            return None
        here = os.path.abspath(os.path.join(os.path.dirname(here), os.readlink(here)))
    return None


def no_special_file(path, option: str, dash: bool = False) -> str:
    """``path`` through its links (``through_links``), or ValueError naming ``option`` when it
    leads to an open stream (``stream``) or to an existing device, FIFO or socket: the one
    rule of every output file, the command line's options and the Python API's ``cache=``
    alike (``cache="/dev/null"`` was taken and kept nothing, fuzz42 misc F2). ``dash``: the
    option takes ``-`` for stdout (its message then says so)."""
    fd = stream(path)
    if fd is not None:
        # The rename of the atomic write went over the file the shell's redirect points to
        # (``>> log`` lost the log) or failed on a /proc path (a pipe).
        raise ValueError(f"{option} {path}: an open stream ({fd}), not a file: an output "
                         "file is written by a rename, which would replace what the stream "
                         "leads to; " + (f"use {option} - (or no {option}) for stdout"
                                         if dash else "give a file name"))
    path = through_links(path, option)
    if os.path.exists(path) and not (os.path.isfile(path) or os.path.isdir(path)):
        # A device, FIFO or socket: an atomic write (temporary file, then rename) would replace
        # it with a regular file (/dev/null for everyone, when run as root).
        raise ValueError(f"{option} {path}: not a regular file (a device, pipe or socket); "
                         "give a file name")
    return path


@contextmanager
def atomic_path(path):
    """A temporary file name next to ``path``, renamed to ``path`` when the block ends without
    an error (removed otherwise): a reader, or an interrupted run, never sees a half-written
    ``path``; a symbolic link is written through (``through_links``)."""
    path = through_links(path, "output")
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp",
                               dir=folder)
    os.close(fd)
    try:
        yield tmp
        if os.path.exists(path):
            # Keep the permissions of the file replaced (mkstemp creates it 0600).
            os.chmod(tmp, os.stat(path).st_mode & 0o777)
        else:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


@contextmanager
def atomic(path, mode: str = "w", **kwargs):
    """``open(path, mode)`` through ``atomic_path``."""
    with atomic_path(path) as tmp, open(tmp, mode, **kwargs) as fh:
        yield fh
