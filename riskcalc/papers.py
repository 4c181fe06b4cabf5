"""The papers fedrisk implements and checks, and how outputs cite them.

Outputs (``riskcalc predict``'s header, ``riskcalc bounds``, figure captions) cite a paper by
its authors and year with the theorem or equation (``cite("003", "Thm 2")`` is
"Cheng, Chadha & Duchi (2023), Thm 2"); the text files the implementation was read from
(``file``, under ``../shared/papers/``) are listed in the documentation's paper index. Years
and venues are those of paper 004's bibliography; paper 004 itself is an anonymous submission
under double-blind review (its latest reference is from 2024).
"""

from __future__ import annotations

from dataclasses import dataclass

from riskcalc._validate import one_of


@dataclass(frozen=True)
class Paper:
    """One source paper.

    Attributes
    ----------
    id : str
        The number of its text file (``"003"``), used throughout the code and the checks.
    authors : tuple of str
        Family names, in the paper's order (``("Anonymous",)`` for a blind submission).
    year : str
        Year of publication (empty when unpublished).
    title, venue, file : str
        Title, where it appeared, and the text file under ``../shared/papers/``.
    """

    id: str
    authors: tuple
    year: str
    title: str
    venue: str
    file: str

    @property
    def short(self) -> str:
        """Authors and year: "Cheng, Chadha & Duchi (2023)"."""
        names = self.authors
        who = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " & " + names[-1]
        return f"{who} ({self.year or 'under review'})"


PAPERS: dict[str, Paper] = {p.id: p for p in (
    Paper("003", ("Cheng", "Chadha", "Duchi"), "2023",
          "Federated asymptotics: a model to compare federated learning algorithms",
          "AISTATS 2023", "003_4b976ddf5225c17e.txt"),
    Paper("000", ("Chen", "Zheng", "Long", "Su"), "2023",
          "Minimax estimation for personalized federated learning: an alternative between "
          "FedAvg and local training?", "JMLR 24(262)", "000_7ff2ed2592df3b60.txt"),
    Paper("001", ("Hanzely", "Hanzely", "Horvath", "Richtarik"), "2020",
          "Lower bounds and optimal algorithms for personalized federated learning",
          "NeurIPS 2020", "001_352374a3e1e3397e.txt"),
    Paper("004", ("Anonymous",), "",
          "The effect of personalization in FedProx: a fine-grained analysis on statistical "
          "accuracy and communication efficiency", "submission under double-blind review",
          "004_98172ed3646eef14.txt"),
)}


def cite(paper_id: str, where: str = "") -> str:
    """How outputs cite paper ``paper_id`` at ``where``.

    Parameters
    ----------
    paper_id : str
        A key of ``PAPERS`` ("000", "001", "003", "004").
    where : str
        Theorem, equation or section ("Thm 2", "eqs. 6 and 8"), appended after a comma.

    Returns
    -------
    str
        E.g. "Cheng, Chadha & Duchi (2023), Thm 2".

    Examples
    --------
    >>> cite("001", "Thm 3.1")
    'Hanzely, Hanzely, Horvath & Richtarik (2020), Thm 3.1'
    """
    # one_of: a list was "TypeError: unhashable type"; where=5 was printed as ", 5" and
    # where=None dropped silently (fuzz41 paper F11).
    if not one_of(paper_id, PAPERS):
        raise ValueError(f"paper_id must be one of {', '.join(PAPERS)}; got {paper_id!r}")
    if not isinstance(where, str):
        raise ValueError(f"where must be a string (a theorem, equation or section), got "
                         f"{where!r}")
    short = PAPERS[paper_id].short
    return f"{short}, {where}" if where else short
