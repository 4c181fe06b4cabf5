"""Output paths checked before any work: a run must not spend minutes and then fail to write,
nor write over one of its own input files; outputs are written atomically
(``riskcalc._files.atomic``)."""

from __future__ import annotations

import errno
import os
import tempfile

from riskcalc._files import no_special_file, user_path


def check_writable(path, option: str, dash: bool = False) -> None:
    """Raise ValueError naming ``option`` unless ``path`` can be created or overwritten as a
    file (its folder exists and is writable; an existing ``path`` is a writable file).
    ``dash``: the option takes ``-`` for stdout (its message then says so)."""
    if path is None:
        return
    if not str(path).strip():
        raise ValueError(f"{option} needs a file name, got an empty one")
    if str(path).strip() == "-":    # was: a file named "-" (where the convention says stdout)
        raise ValueError(f"{option} -: give a file name ({option} writes a file, not stdout)")
    path = no_special_file(path, option, dash)
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise ValueError(f"{option} {path}: is a directory, expected a file path")
    if str(path).endswith(("/", os.sep)):
        # A folder's name: its parent passed, and the write failed after the work, "Not a
        # directory" naming the temporary file (fuzz39 fuzz F6).
        raise ValueError(f"{option} {path}: ends in '/', a folder's name; give a file path")
    if not os.path.isdir(folder):
        # A file where the folder should be was "folder ... does not exist", though it does.
        raise ValueError(f"{option} {path}: " + (
            f"{folder} is a file, not a folder" if os.path.lexists(folder)
            else f"folder {folder} does not exist"))
    if not os.access(folder, os.W_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
        raise ValueError(f"{option} {path}: not writable")
    try:
        # The atomic write's temporary file, tried now: access() says yes for root in /proc
        # or on a read-only mount, and the work would be done before the write failed.
        fd, probe = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", dir=folder)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        # The folder exists (checked above): ENOENT or EINVAL there (/proc, /sys) is a kernel
        # file system that makes no new files; "(No such file or directory)" named none.
        why = ("a kernel file system: it takes no new files" if exc.errno in (
            errno.ENOENT, errno.EINVAL) else exc.strerror or exc)
        raise ValueError(f"{option} {path}: cannot create a file in {folder} ({why}); give "
                         "a file in a writable folder") from None


def make_folder(path, option: str) -> None:
    """Create the output folder ``path`` (and parents) now, or raise ValueError naming
    ``option``."""
    if not str(path).strip():
        raise ValueError(f"{option} needs a folder name, got an empty one")
    if str(path).strip() == "-":    # was: a folder named "-" (where the convention says stdout)
        raise ValueError(f"{option} -: give a folder name ({option} is the folder the files "
                         "are written to, not stdout)")
    if os.path.exists(path) and not os.path.isdir(path):
        # makedirs said only "File exists" (--out /dev/null, --out an input file).
        raise ValueError(f"{option} {path}: exists and is not a folder (a file or a device); "
                         "give a folder name")
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as exc:
        raise ValueError(f"{option} {path}: cannot create the folder ({exc.strerror})") from None
    if not os.access(path, os.W_OK):
        raise ValueError(f"{option} {path}: not writable")


def no_stdin(args) -> None:
    """Raise ValueError for an input file option given ``-``: no option reads standard input
    by that name (``--data -`` said "no such file", ``--clients-file -`` "No such file or
    directory", ``--spectrum file:-`` "does not exist"; fuzz41 left F4)."""
    for dest in ("federation", "clients_file", "data"):
        option = "--" + dest.replace("_", "-")
        if str(getattr(args, dest, None)).strip() == "-":
            raise ValueError(f"{option} -: give a file name ({option} reads a file, not "
                             f"standard input; {option} /dev/stdin reads it)")
    spectrum = getattr(args, "spectrum", None)
    if isinstance(spectrum, str) and spectrum:
        from riskcalc.spectrum import spec_kind

        if spec_kind(spectrum) == ("file", "-"):
            raise ValueError("--spectrum file:-: give a file name (a file: spectrum is read "
                             "from a regular .npy or text file, not standard input)")


def same_file(a, b) -> bool:
    """Whether the paths ``a`` and ``b`` name the same file (existing or not), through
    symbolic links: ``--out LINK`` to a ``--cache`` not yet written (a dangling link) passed,
    and the CSV written through the link replaced the cache. A leading ``~`` is the home
    folder, as for every path read (``riskcalc._files.user_path``)."""
    a, b = user_path(a), user_path(b)
    if os.path.exists(a) and os.path.exists(b):
        return os.path.samefile(a, b)
    return os.path.realpath(a) == os.path.realpath(b)


def not_an_input(args, outputs) -> None:
    """Raise ValueError when an output option names one of the command's input files (the
    clients or federation file, a ``file:`` spectrum, the data, a ``--plugin`` file): no verb
    writes over what it reads. ``outputs``: the option names of ``args`` holding output
    paths."""
    inputs = {}
    for option in ("federation", "clients_file", "data"):
        value = getattr(args, option, None)
        if value:
            inputs["--" + option.replace("_", "-")] = value
    from riskcalc.spectrum import spec_kind

    kind, arg = spec_kind(str(getattr(args, "spectrum", "") or ""))
    if kind == "file":
        inputs["--spectrum"] = arg
    if any(getattr(args, out, None) for out in outputs):
        for option in ("--federation", "--clients-file"):
            if option in inputs:
                inputs.update(_client_spectrum_files(inputs[option], option))
    # A list: the option is repeatable (riskcalc.cli._run sets it; the parser never sees it).
    for source in getattr(args, "plugin", None) or ():
        inputs[f"--plugin {source}"] = source
    for out in outputs:
        path = getattr(args, out, None)
        if not path:
            continue
        for option, source in inputs.items():
            if same_file(path, source):
                raise ValueError(f"--{out.replace('_', '-')} {path} is the input file of "
                                 f"{option}: write the output elsewhere")


def _client_spectrum_files(path, option) -> dict:
    """The ``file:`` spectra of the clients of a federation or clients file (inputs as well:
    ``sweep --federation F --out EIG.npy`` wrote over a client's spectrum file), read here when
    ``path`` is a regular file (a pipe is read once, by the verb; a file the verb will refuse
    gives none here)."""
    if not os.path.isfile(path):
        return {}
    from riskcalc import federation_file
    from riskcalc.spectrum import spec_kind

    try:
        ff = federation_file.read(path, option)
    except ValueError:
        return {}
    out = {}
    for j, c in enumerate(ff.clients):
        kind, arg = spec_kind(str(c.get("spectrum", "")))
        if kind == "file":
            out[f"{option} {path} ({ff.label(j)}'s spectrum)"] = arg
    return out
