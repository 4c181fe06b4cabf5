"""The one reader of federation files, for every verb and for ``riskcalc.Federation.from_file``.

A federation file (DESIGN.md, "Contracts added in the fourth round") is a JSON object listing
ALL the clients of a federation::

    {"fedrisk_federation": 1, "d": 200, "signal": 1.5,
     "clients": [{"name": "a", "gamma": 0.5, "r": 1.0, "sigma": 0.5, "rho": 1.2,
                  "spectrum": "two-point:1,4,0.5", "se": {"r": 0.05}}, ...]}

* ``fedrisk_federation``: the format version, 1 (another number is an error);
* ``d`` (optional): the dimension, an integer; it turns a client's ``n`` into gamma = d / n
  and sizes ``powerlaw:P`` spectra;
* ``signal`` (optional): ||theta_0|| (the logistic family's ``--signal``);
* per client: exactly one of ``gamma`` (d / n_j) and ``n`` (an integer, with ``d``); ``r``
  (||theta_j - theta_0||), ``sigma`` (noise level), ``rho`` (||theta_j||, local baselines),
  ``spectrum`` (a SPEC; ``file:`` paths relative to the folder of the federation file as
  given, a symbolic link's own folder), ``name`` (a string, unique in Unicode's composed form
  NFC), ``id`` (an integer, unique: the data's client id, written by ``riskcalc estimate``),
  ``se`` (standard errors of the client's numbers, an object of numbers or null);
* ``riskcalc estimate --json`` also writes ``estimate`` (its route, moments and squared
  estimates) and ``federation`` (the same clients as a bare list, the format before version
  1); readers ignore both.

Each model family takes the keys it uses and ignores the others with a note (the logistic
family has no sigma); a key outside the schema is an error. A bare JSON list of client objects
(the format before version 1) is read with the same checks; its meaning stays each verb's own
(the OTHER clients for predict, compare and sweep, ALL clients for advise).

Strict: numbers are JSON numbers, finite, in the one range of each parameter
(``riskcalc._validate.RANGES``: the same as on the command line); a string or boolean where a
number belongs, a duplicate key, an unknown key, nesting deeper than the schema, a file larger
than ``MAX_BYTES`` (checked before reading, and never read past it: ``/dev/zero`` is refused)
and bytes that are not UTF-8 are errors, each one line naming the file, the client (index and
name) and the key. Nothing is coerced. The checks of each value:
``riskcalc.federation_file.checks``; the JSON layer under them (size, bytes, depth, duplicate
keys, non-finite numbers): ``riskcalc.json_strict``.
"""

from __future__ import annotations

import os
import re
import unicodedata
from dataclasses import dataclass

import numpy as np

from riskcalc._files import user_path
from riskcalc._validate import RANGES, flag
from riskcalc.federation_file.checks import (check_integer, check_keys, check_number,
                                             check_se, check_spec)
from riskcalc.json_strict import NonFinite, load
from riskcalc.json_strict import kind as _kind
from riskcalc.spectrum import MAX_EIGENVALUES, spec_uses_d

__all__ = ["MAX_BYTES", "VERSION", "FederationFile", "default_spectrum_used", "from_object",
           "read"]

#: The version of the format this reader reads.
VERSION = 1
FORMAT_KEY = "fedrisk_federation"
#: Largest federation file read (a client takes about 150 bytes: 200,000 clients).
MAX_BYTES = 32 * 2 ** 20
#: Deepest nesting of the schema: object > clients list > client > se; one more level is
#: allowed for the ``estimate`` block's lists.
MAX_DEPTH = 5
TOP_KEYS = (FORMAT_KEY, "d", "signal", "clients", "estimate", "federation")
CLIENT_KEYS = ("name", "id", "gamma", "n", "r", "sigma", "rho", "spectrum", "se")
#: The client keys each model family uses (the others are ignored with a note).
FAMILY_KEYS = {"linear": ("gamma", "n", "r", "sigma", "rho", "spectrum"),
               "logistic": ("gamma", "n", "r", "spectrum")}
_NUMBERS = ("gamma", "r", "sigma", "rho")


#: Most client names a message lists; longer names are shown by their start (``_shown``).
NAMES_SHOWN = 10


def _shown(name: str) -> str:
    """``name`` as a message shows it: its repr, or its first 20 characters and its length."""
    return repr(name) if len(name) <= 40 else f"{name[:20]!r}...({len(name)} characters)"


@dataclass(frozen=True)
class FederationFile:
    """A checked federation file.

    Attributes
    ----------
    path : str
    versioned : bool
        The versioned object (True) or a bare list of clients (False).
    d : int or None
    signal : float or None
    clients : tuple of dict
        Per client the keys given, numbers as floats (``n``, ``id`` as int), ``spectrum``
        with ``file:`` paths made absolute (versioned files).
    where : str
        How messages name the file (the option and the path).
    """

    path: str
    versioned: bool
    d: int | None
    signal: float | None
    clients: tuple
    where: str

    @property
    def m(self) -> int:
        """Number of clients."""
        return len(self.clients)

    def label(self, j: int) -> str:
        """``client J`` or ``client J ('NAME')``, as messages name a client (one that is no
        object, ``"clients": [[{...}]]``, has no name: it was an AttributeError)."""
        c = self.clients[j]
        name = c.get("name") if isinstance(c, dict) else None
        return f"client {j}" + (f" ({_shown(name)})" if isinstance(name, str) else "")

    def error(self, j: int | None, text: str) -> ValueError:
        """A ValueError naming the file and client ``j``."""
        return ValueError(f"{self.where}: " + ("" if j is None else f"{self.label(j)}: ")
                          + text)

    def target(self, value) -> int:
        """The client index of ``--target J``: a 0-based index or a client name."""
        # Names compared in one Unicode form: 'é' typed as one code point or as e and an
        # accent is one name (the file's form chose one client, the other form none).
        text = _nfc(str(value).strip())
        names = [_nfc(c.get("name")) for c in self.clients]
        index = int(text) if re.fullmatch(r"[0-9]+", text) and int(text) < self.m else None
        if text in names:
            if index is not None and names.index(text) != index:
                raise ValueError(f"--target {text}: ambiguous in {self.where}, the index of "
                                 f"{self.label(index)} and the name of "
                                 f"{self.label(names.index(text))}")
            return names.index(text)
        if index is not None:
            return index
        # The first NAMES_SHOWN names: 5000 named clients made this one line of 80 kB (as a
        # 100,000-character name did every message naming its client; fuzz42 misc F8).
        named = [n for n in names if n is not None]
        known = ", ".join(_shown(n) for n in named[:NAMES_SHOWN]) + (
            f", ... ({len(named) - NAMES_SHOWN} more)" if len(named) > NAMES_SHOWN else "")
        raise ValueError(f"--target {value!r}: not a client of {self.where} (a 0-based index "
                         f"below {self.m}" + (f" or a name: {known}" if named else "") + ")")

    def check_default_spectrum(self, spec) -> None:
        """``default_spectrum_used`` for ``--spectrum``."""
        default_spectrum_used(self.clients, spec, f"every client of {self.where}")

    def gammas(self, d: int | None = None) -> list:
        """Every client's gamma (``n`` turned into d / n with the file's d, else ``d``: advise
        --d, which was accepted and then refused as 'the file needs "d"')."""
        size = self.d if self.d is not None else d
        out = []
        for j, c in enumerate(self.clients):
            if "gamma" in c:
                out.append(c["gamma"])
            elif size is None:
                raise self.error(j, 'gives n: the file needs "d" to turn it into gamma = d/n')
            else:
                g = size / c["n"]
                if not RANGES["gamma"][0] <= g <= RANGES["gamma"][1]:
                    raise self.error(j, f"gamma = d/n = {g:g} is outside "
                                        f"[{RANGES['gamma'][0]:g}, {RANGES['gamma'][1]:g}]")
                out.append(g)
        return out

    def column(self, key: str, why: str) -> list:
        """Every client's ``key``; an error naming the first client without it (``why``: who
        needs it)."""
        for j, c in enumerate(self.clients):
            if key not in c:
                raise self.error(j, f"missing key {key} ({why})")
        return [c[key] for c in self.clients]

    def optional(self, key: str) -> list | None:
        """Every client's ``key``, or None when no client gives it; an error when some do."""
        given = [key in c for c in self.clients]
        if not any(given):
            return None
        if not all(given):
            raise self.error(given.index(False), f"missing key {key} (given for other "
                                                 "clients: give it for every client or none)")
        return [c[key] for c in self.clients]

    def notes(self, family: str, unused=(), signal_used=False) -> list:
        """One sentence naming the keys of the file that ``family`` does not use (``unused``:
        keys of its schema that this call does not use either; ``signal_used``: the linear
        call uses the top-level signal, as along the rounds), or none."""
        keys = set(FAMILY_KEYS[family]) - set(unused)
        ignored = sorted({k for c in self.clients for k in c} - keys - {"name", "id", "se"})
        if self.signal is not None and family == "linear" and not signal_used:
            ignored.append("signal")
        if not ignored:
            return []
        return [f"{self.where}: {', '.join(ignored)} ignored (not used by the {family} model"
                + (" or this method" if unused else "") + ")"]

    def uses_d(self, spectrum=None, sized: bool = True) -> bool:
        """Whether a dimension d given beside this file is used: the file gives its own
        (checked against it), a client gives ``n`` (turned into gamma = d / n) or, ``sized``
        (the linear family), ``spectrum`` (the clients' default) or a client's SPEC is
        ``powerlaw:`` or ``file:`` (d sizes or checks their eigenvalues)."""
        specs = [spectrum] + self.spectra()
        return self.d is not None or any("n" in c for c in self.clients) or (
            sized and any(spec_uses_d(s) for s in specs))

    def spectra(self, default=None) -> list:
        """Every client's SPEC (``default`` for a client that gives none; None there when
        ``default`` is None)."""
        return [c.get("spectrum", default) for c in self.clients]


def default_spectrum_used(clients, spec, who: str, name: str = "--spectrum") -> None:
    """ValueError when ``spec`` (the covariance of the clients that give none: ``--spectrum``,
    ``Federation.from_file(spectrum=...)``) is given but every client of ``clients`` gives its
    own: it applied to none, silently."""
    if spec is not None and spec != "" and clients and all("spectrum" in c for c in clients):
        shown = spec if isinstance(spec, str) else type(spec).__name__
        raise ValueError(f"{name} {shown}: {who} gives its own spectrum, so it would apply "
                         "to none (it sets the covariance of the clients that give none); "
                         "leave it out")


def read(path, option: str | None = None, *, versioned: bool | None = None,
         ranges=None) -> FederationFile:
    """Read and check the federation file ``path`` (module docstring).

    Parameters
    ----------
    path : str or path-like
    option : str, optional
        The command-line option that named the file, for the messages (``--federation``).
    versioned : bool, optional
        True: only the versioned object is accepted; False: only a bare list; None: either.
    ranges : dict, optional
        A model family's ranges, key -> ``(low, high, why)`` (``why`` names it; logistic:
        ``riskcalc.cli.logistic.file_ranges``), else ``riskcalc._validate.RANGES``'s.

    Returns
    -------
    FederationFile

    Raises
    ------
    ValueError
        One line naming the file, the client and the key (module docstring).
    OSError
        The file cannot be opened.
    """
    if versioned is not None:   # versioned="yes" (or "no") was read as True
        versioned = flag("versioned (None: either)", versioned)
    try:
        path = user_path(path)
    except TypeError:
        raise ValueError(f"{option or 'path'} must be a file path (a str or os.PathLike), got "
                         f"{type(path).__name__}") from None
    if not path.strip():    # was ": No such file or directory", naming nothing
        raise ValueError(f"{option or 'path'} needs a file name, got an empty one")
    where = f"{option} {path}" if option else str(path)
    data = load(path, where, max_bytes=MAX_BYTES, max_depth=MAX_DEPTH,
                what="a federation file (about 200,000 clients)",
                nesting="object, clients list, client, se")
    if isinstance(data, dict):
        if versioned is False:
            raise ValueError(f"{where}: expected a JSON list of client objects, got an object")
        return _object(data, path, where, ranges)
    if versioned:
        got = "a bare list (read by --clients-file)" if isinstance(data, list) else _kind(data)
        raise ValueError(f"{where}: expected the federation object {{\"{FORMAT_KEY}\": "
                         f"{VERSION}, \"clients\": [...]}} listing ALL clients, got {got}")
    if not isinstance(data, list) or not data or not all(isinstance(c, dict) for c in data):
        raise ValueError(f"{where}: expected a non-empty JSON list of client objects, or the "
                         f"federation object {{\"{FORMAT_KEY}\": {VERSION}, \"clients\": "
                         "[...]}")
    probe, seen = FederationFile(path, False, None, None, tuple(data), where), {}
    clients = tuple(_client(probe, j, c, _base(path), seen, ranges) for j, c in enumerate(data))
    return FederationFile(path, False, None, None, clients, where)


def from_object(data: dict, where: str) -> FederationFile:
    """Check the federation object ``data`` (already in memory, e.g. ``riskcalc estimate``'s)
    as ``read`` checks a file's; ``where`` names it in the messages; ``file:`` SPECs are
    relative to the working directory."""
    if not isinstance(data, dict):
        raise ValueError(f"{where}: expected the federation object, got {_kind(data)}")
    return _object(data, os.path.join(os.getcwd(), "-"), where)


def _object(data, path, where, ranges=None):
    """The versioned object (``ranges``: ``read``'s)."""
    probe = FederationFile(path, True, None, None, (), where)
    if FORMAT_KEY not in data:
        raise ValueError(f"{where}: expected a non-empty JSON list of client objects, or the "
                         f"federation object {{\"{FORMAT_KEY}\": {VERSION}, \"clients\": "
                         f"[...]}}; this object has no \"{FORMAT_KEY}\" key")
    check_keys(probe, None, data, TOP_KEYS, "top-level")
    version = data[FORMAT_KEY]
    if isinstance(version, np.integer):     # as every count of from_object's dict takes it
        version = int(version)
    if type(version) is not int:
        raise ValueError(f"{where}: \"{FORMAT_KEY}\" must be the integer {VERSION}, got "
                         + (f"{version!r}" if isinstance(version, NonFinite)
                            else f"{version!r} ({_kind(version)})"))
    if version != VERSION:
        raise ValueError(f"{where}: format version {version} is not supported (this fedrisk "
                         f"reads version {VERSION})")
    d = None if "d" not in data else check_integer(probe, None, "d", data["d"], 1)
    if d is not None and d > MAX_EIGENVALUES:
        raise probe.error(None, f"d = {d} is larger than {MAX_EIGENVALUES:g}, the most "
                                "eigenvalues a spectrum may have")
    signal = None if "signal" not in data else check_number(probe, None, "signal", data["signal"])
    clients = data.get("clients")
    if not isinstance(clients, list) or not clients:
        raise probe.error(None, "\"clients\" must be a non-empty list of client objects, got "
                                + ("nothing" if clients is None else
                                   "an empty list" if clients == [] else _kind(clients)))
    for k in ("estimate", "federation"):
        if k in data and not isinstance(data[k], (dict, list)):
            raise probe.error(None, f"{k} must be an object or a list (written by riskcalc "
                                    f"estimate), got {_kind(data[k])}")
    probe = FederationFile(path, True, d, signal, tuple(clients), where)
    base = _base(path)
    seen = {}
    out = tuple(_client(probe, j, c, base, seen, ranges) for j, c in enumerate(clients))
    for key, why in (("name", "are named {!r}: names must be unique (a --target names one "
                              "client)"),
                     ("id", "have id {!r}: ids must be unique (the data's client id, one per "
                            "client; a client listed twice counts twice)")):
        seen_values = {}
        for c in out:           # ids were not checked: a client copied twice was taken
            if key in c:
                # Two names that print alike ('é' as one code point or as e and an accent)
                # were two clients, listed under one name.
                value, first = _nfc(c[key]), seen_values.get(_nfc(c[key]), c[key])
                if value in seen_values and first != c[key]:
                    raise probe.error(None, f"two clients are named {ascii(first)} and "
                                            f"{ascii(c[key])}, one name in two Unicode forms: "
                                            "names must be unique (a --target names one "
                                            "client)")
                if value in seen_values:
                    raise probe.error(None, "two clients " + why.format(c[key]))
                seen_values[value] = c[key]
    return FederationFile(path, True, d, signal, out, where)


def _nfc(name):
    """A client name in Unicode's composed form (NFC); anything else as it is."""
    return unicodedata.normalize("NFC", name) if isinstance(name, str) else name


def _base(path):
    """The folder ``file:`` SPECs of the file ``path`` are relative to: its own (a bare list's
    were left relative to the working directory, so another folder's file of the same name was
    read, silently); None (the working directory) for a pipe such as /dev/stdin. A symbolic
    link's own folder, not its target's: the folder the user names the file in, where a shell
    there would read the same relative path (a missing file's error says so)."""
    return os.path.dirname(os.path.abspath(path)) if os.path.isfile(path) else None


def _client(probe, j, c, base, seen, ranges=None):
    """One client object, checked (``base``: the folder ``file:`` SPECs are relative to; None
    for a bare list, whose SPECs keep their meaning; ``seen``: the SPECs checked already,
    ``check_spec``'s; ``ranges``: ``read``'s)."""
    if not isinstance(c, dict):
        raise probe.error(j, f"must be an object, got {_kind(c)}")
    check_keys(probe, j, c, CLIENT_KEYS, "client")
    if probe.versioned and ("gamma" in c) == ("n" in c):
        raise probe.error(j, "give exactly one of gamma (d / n) and n (with the file's d), "
                             f"got {'both' if 'gamma' in c else 'neither'}")
    out = {}
    for key, value in c.items():
        if key in _NUMBERS:
            out[key] = check_number(probe, j, key, value, ranges)
        elif key == "n":
            out[key] = check_integer(probe, j, key, value, 1)
        elif key == "id":
            # The data's client id as riskcalc estimate keeps it, an int64 (a JSON integer is
            # exact; ids past 2^53 were written by estimate and refused here, by advise --data).
            out[key] = check_integer(probe, j, key, value, -2 ** 63, 2 ** 63 - 1)
        elif key == "name":
            if not isinstance(value, str) or not value.strip():
                raise probe.error(j, f"name must be a non-empty string, got {value!r}")
            if not value.isprintable():     # was taken: a line break split advise's rows
                raise probe.error(j, "name must be printable (no line breaks, tabs or control "
                                     f"codes: it is printed in tables), got {value!r}")
            if value != value.strip():
                # --target strips its text: --target ' a' chose the client named 'a', silently.
                raise probe.error(j, "name must not begin or end with spaces (--target J "
                                     f"names a client without them), got {value!r}")
            out[key] = value
        elif key == "spectrum":
            out[key] = check_spec(probe, j, value, base, seen)
        elif key == "se":
            out[key] = check_se(probe, j, value)
    return out
