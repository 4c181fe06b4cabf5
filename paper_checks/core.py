"""The claim catalogue's building blocks: claims, verdicts, run configuration, the registry.

A *claim* is one checkable statement of a paper (a theorem, an equation, a stated comparison,
an experiment's qualitative conclusion). Its check function computes evidence from independent
routes (formula against simulation with error bars, formula against mpmath, bound against
simulated scaling) and returns an ``Outcome``: a verdict, the evidence, a one-line summary of
the key numbers and, for an erratum, the corrected statement.

Verdicts
--------
A verdict judges a claim in the scope the paper states it (its model, its experiment, its
problem class), and separates what is wrong from what is only loose:

``holds``
    the statement as printed agrees with the evidence within the stated tolerance;
``loose``
    the statement as printed is true in its stated scope, but weaker than what the evidence
    shows (a valid but non-sharp bound, an optimality that rests on the choice of problem
    class); ``corrected`` gives the sharp form;
``erratum-harmless``
    the printed form is wrong (a typo, a swapped word, a constant) but no conclusion of the
    paper changes: the result is used only up to constants, or the theorem's own statement is
    right and only its proof text is not; ``corrected`` gives the right form;
``erratum``
    the printed form is wrong and it matters: a formula gives wrong numbers, a bound is
    violated, a condition or rate is false as stated; the evidence rejects it and accepts the
    corrected one given in ``corrected``;
``fails``
    the claim does not hold in its stated scope, and no correction of the transcription makes
    it hold;
``not checkable``
    no numerical evidence is possible in the claim's scope (private data, a constant never
    given, an experiment whose assumptions the paper's setup violates); the reason is the
    summary;
``finding``
    not a verdict on the paper: a result of this toolkit outside the scope of any claim (e.g.
    in the paper's linear model where the claim is about real data), recorded with its numbers
    under an id ``PAPER.finding.SLUG``.
``check error``
    not a verdict on the paper: the check itself raised (a fault of this toolkit); the
    exception is the summary, and ``riskcalc check`` exits with status 1.

What an erratum rests on
------------------------
The papers are read from text extracted from their PDFs, which loses superscripts (squares,
inverses), primes, the extent of radicals and some words. Every ``erratum`` and
``erratum-harmless`` therefore states its ``transcription``: ``independent`` when it holds
whatever the lost symbols were (it rests on words, on a formula the check re-derives under
every plausible reading, on a table or on code), ``depends`` when it rests on the extracted
text, with a sentence naming what the original PDF must show for the erratum to stand.

Sensitivity (mutation) testing
------------------------------
Every comparison of a check with what the paper states goes through one seam, ``stated(value,
role)``: the stated value (a limit, a bound, an exponent) comes back unchanged in an ordinary
run, and as its mutant when ``paper_checks.sensitivity`` runs the check against a deliberately
wrong statement. A claim declares the roles it states (``mutants=``): ``equality`` (a limit or
identity, mutant x1.5), ``upper`` (an upper bound, mutant /100), ``lower`` (a lower bound, mutant
x100), ``exponent`` (a rate's exponent, mutant +0.5). An erratum passes its CORRECTED form
through the seam (the printed one is already rejected). A check rejects a mutant when its
verdict changes; a claim is sensitive when it rejects all of its mutants.
"""

from __future__ import annotations

import contextvars
import sys
import zlib
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from riskcalc._validate import flag

VERDICTS = ("holds", "loose", "erratum-harmless", "erratum", "fails", "not checkable",
            "finding", "check error")
#: One line per verdict: the legend printed under ``riskcalc check`` and in REPORT.md.
LEGEND = {
    "holds": "the printed statement agrees with independent evidence, in its stated scope",
    "loose": "true as printed but weaker than the evidence shows (the sharp form is given)",
    "erratum-harmless": "the printed form is wrong (typo, constant, proof text), no "
                        "conclusion of the paper changes (the corrected form is given)",
    "erratum": "the printed form is wrong and it matters (the corrected form is given)",
    "fails": "the statement does not hold in its scope, and no correction makes it hold",
    "not checkable": "no numerical evidence is possible in its scope (the reason is given)",
    "finding": "a result of this toolkit outside any claim's scope: not a verdict on the "
               "paper",
    "check error": "the check itself raised: a fault of this toolkit, not a verdict on the "
                   "paper (the exception is given)",
}
#: What an accusation rests on, in words (``Outcome.transcription``).
RESTS_ON = {
    "depends": "the accusation assumes the extracted text is faithful",
    "independent": "it holds whatever symbols the text extraction lost",
}
# The verdicts that carry a corrected (or sharp) form, most serious last.
CORRECTED = ("loose", "erratum-harmless", "erratum")
# The verdicts that accuse the paper of an error: they state what they rest on.
ERRATA = ("erratum-harmless", "erratum")
TRANSCRIPTION = ("independent", "depends")
KINDS = ("exact limit", "closed-form identity", "inequality", "rate up to constants",
         "algorithmic convergence", "qualitative experimental claim")
PAPERS = {
    "003": "003_4b976ddf5225c17e.txt",
    "000": "000_7ff2ed2592df3b60.txt",
    "004": "004_98172ed3646eef14.txt",
    "001": "001_352374a3e1e3397e.txt",
}


#: The mutant of each role: (name, how the stated value is changed).
MUTANTS = {
    "equality": ("x1.5", lambda v: v * 1.5),
    "upper": ("/100", lambda v: v / 100.0),
    "lower": ("x100", lambda v: v * 100.0),
    "exponent": ("+0.5", lambda v: v + 0.5),
}


@dataclass
class Mutant:
    """The mutant active during one sensitivity run; ``hits`` counts the seam's uses."""

    role: str
    hits: int = 0

    @property
    def name(self) -> str:
        return f"{self.role} {MUTANTS[self.role][0]}"


_ACTIVE = contextvars.ContextVar("paper_checks_mutant", default=None)


def stated(value, role: str):
    """The seam of every check: what the paper states, as the check compares it.

    Parameters
    ----------
    value : float or ndarray
        The stated quantity (a limit, a bound, an exponent: the paper's, or for an erratum the
        corrected form's).
    role : {"equality", "upper", "lower", "exponent"}
        What kind of statement it is.

    Returns
    -------
    ``value`` itself, or, while ``paper_checks.sensitivity`` runs a mutant of this role, the
    mutated value (``MUTANTS``).
    """
    if role not in MUTANTS:
        raise ValueError(f"role must be one of {tuple(MUTANTS)}, got {role!r}")
    active = _ACTIVE.get()
    if active is None or active.role != role:
        return value
    active.hits += 1
    return MUTANTS[role][1](value)


@dataclass(frozen=True)
class Config:
    """Sizes of a run: ``quick`` (CI, a few minutes on 2 cores) or full (larger d, more reps).

    Every check reads its sizes through ``pick(quick_value, full_value)`` so that the two runs
    differ only in sample sizes, never in what is checked or in the tolerances' form.
    """

    quick: bool = True

    def __post_init__(self):
        flag("quick", self.quick)      # Config(quick="no") picked the quick sizes

    def pick(self, quick_value, full_value):
        return quick_value if self.quick else full_value

    @property
    def mode(self) -> str:
        return "quick" if self.quick else "full"


@dataclass
class Outcome:
    """What a check returns.

    Attributes
    ----------
    verdict : str
        One of ``VERDICTS``.
    summary : str
        The key numbers in one line (what the table prints).
    evidence : dict
        Every number the verdict rests on (JSON-serializable after ``jsonable``).
    corrected : str or None
        For the verdicts of ``CORRECTED``: the corrected (or, for ``loose``, sharp) statement.
    transcription : (str, str) or None
        For the verdicts of ``ERRATA``: ``(kind, note)``, ``kind`` one of ``TRANSCRIPTION``
        and ``note`` the sentence naming what the original PDF must show (see above).
    """

    verdict: str
    summary: str
    evidence: dict = field(default_factory=dict)
    corrected: str | None = None
    transcription: tuple | None = None

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}, got {self.verdict!r}")
        if (self.verdict in CORRECTED) != (self.corrected is not None):
            raise ValueError(f"the verdicts {CORRECTED}, and only they, carry a corrected form")
        if (self.verdict in ERRATA) != (self.transcription is not None):
            raise ValueError(f"the verdicts {ERRATA}, and only they, state their transcription")
        if self.transcription is not None:
            kind, note = self.transcription
            if kind not in TRANSCRIPTION or not note:
                raise ValueError(f"transcription must be (one of {TRANSCRIPTION}, a sentence "
                                 f"naming what the PDF must show), got {self.transcription!r}")


@dataclass(frozen=True)
class Claim:
    """One checkable claim of a paper.

    Attributes
    ----------
    id : str
        Stable identifier ``PAPER.LOCATION.SLUG`` (e.g. ``003.thm2.isotropic-variance``).
    paper : str
        The paper's file in ``/work/shared/papers``.
    location : str
        Theorem / equation / section.
    statement : str
        The claim in words (as the paper means it).
    kind : str
        One of ``KINDS``.
    check : callable
        ``check(cfg: Config, seed: int) -> Outcome``; ``seed`` is ``Claim.seed``.
    mutants : tuple of str
        The roles (``MUTANTS``) of what the check passes through ``stated``: the sensitivity
        run replaces each in turn by its mutant.
    """

    id: str
    paper: str
    location: str
    statement: str
    kind: str
    check: Callable
    mutants: tuple = ()

    @property
    def paper_id(self) -> str:
        return self.id.split(".", 1)[0]

    @property
    def seed(self) -> int:
        """The claim's own seed: a hash of its id, so adding or reordering claims changes no
        other claim's random numbers."""
        return zlib.crc32(self.id.encode())


CLAIMS: dict[str, Claim] = {}


def claim(id: str, *, location: str, statement: str, kind: str, mutants=()):
    """Register the decorated ``check(cfg, seed) -> Outcome`` as claim ``id``; ``mutants``
    names the roles its statement passes through ``stated``."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    bad = [r for r in mutants if r not in MUTANTS]
    if bad:
        raise ValueError(f"mutants must be among {tuple(MUTANTS)}, got {bad}")
    paper = PAPERS[id.split(".", 1)[0]]

    def deco(fn):
        if fn.__module__ == "__main__":
            # python -m paper_checks.p001: the package registered the module's claims already,
            # so this second registration was a "duplicate claim id" traceback
            print(f"error: the module of claim {id} is a catalogue of claims, not a command: "
                  "run them with `riskcalc check --claim ID` or `--paper PAPER`",
                  file=sys.stderr)
            raise SystemExit(2)
        if id in CLAIMS:
            raise ValueError(f"duplicate claim id {id!r}")
        CLAIMS[id] = Claim(id, paper, location, " ".join(statement.split()), kind, fn,
                           tuple(mutants))
        return fn
    return deco


def jsonable(value):
    """Plain JSON values: numpy scalars/arrays to floats/lists, non-finite floats to strings."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        v = float(value)
        return v if np.isfinite(v) else str(v)
    if isinstance(value, np.ndarray):
        return jsonable(value.tolist())
    return value


def judge(ok: bool, summary: str, evidence: dict) -> Outcome:
    """``holds`` if ``ok`` else ``fails``."""
    return Outcome("holds" if ok else "fails", summary, evidence)


def judge_erratum(printed_rejected: bool, corrected_ok: bool, summary: str, evidence: dict,
                  corrected: str, level: str = "erratum", transcription=None) -> Outcome:
    """``level`` (one of ``CORRECTED``: ``erratum``, ``erratum-harmless`` or ``loose``, as the
    claim's check argues) when the evidence rejects the printed form and accepts the corrected
    one; ``holds`` if it cannot reject the printed form; ``fails`` if it rejects both.

    ``transcription`` (``(kind, note)``, see ``Outcome``) is required for the levels of
    ``ERRATA``: an erratum says whether it could be the text extraction's damage."""
    if level not in CORRECTED:
        raise ValueError(f"level must be one of {CORRECTED}, got {level!r}")
    if (level in ERRATA) != (transcription is not None):
        raise ValueError(f"the levels {ERRATA}, and only they, take a transcription")
    if printed_rejected and corrected_ok:
        return Outcome(level, summary, evidence, corrected, transcription)
    if not printed_rejected:
        return Outcome("holds", summary + " (printed form not rejected)", evidence)
    return Outcome("fails", summary + " (corrected form rejected too)", evidence)
