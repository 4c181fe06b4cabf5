"""Running a selection of claims and shaping the results (the JSON contract of ``riskcalc check``).

Each claim's check runs on its own seed (``Claim.seed``), so results do not depend on which
other claims run, in which order, or on the number of worker processes.
"""

from __future__ import annotations

import difflib
import json
import math
import sys
import time
from pathlib import Path

from joblib import delayed
from tqdm.auto import tqdm

from montecarlo.runner.tasks import parallel_results
from montecarlo.runner.threads import small_blas
from paper_checks.core import CLAIMS, PAPERS, Claim, Config, jsonable
from riskcalc._validate import flag, one_of, positive_int


def select(paper: str | None = None, claim_ids=None) -> list:
    """Claims of ``paper`` (``003``, ``000``, ``004``, ``001``; ``002`` means ``000``) and/or
    with the given ids: in the order of ``claim_ids`` when given (a repeated id once), else
    in catalogue order. ValueError for unknown ones, for ids of another paper than ``paper``
    and for an empty list of ids (``None`` selects every claim)."""
    named = paper       # as given, for the messages ('--paper 002' was told "of paper 000")
    if paper == "002":
        paper = "000"   # the HTML text of the same paper
    if paper is not None and not one_of(paper, PAPERS):
        raise ValueError(f"paper must be one of {', '.join(PAPERS)} (or 002); got {paper!r}")
    chosen = [c for c in CLAIMS.values() if paper is None or c.paper_id == paper]
    if isinstance(claim_ids, str):     # one id (was read as its characters, each unknown)
        claim_ids = [claim_ids]
    elif isinstance(claim_ids, (bytes, bytearray)):
        # Was read as its byte values: "unknown claim id(s): 48, 48, 49, ..." (fuzz42 report F4)
        raise ValueError(f"claim_ids must be a claim id (a str) or a list of them, got "
                         f"{claim_ids!r:.60}")
    elif claim_ids is not None:
        # Read once: a generator was used up by the check of unknown ids, and then nothing was
        # selected; 3 was a TypeError, an array of two ids "truth value ... ambiguous".
        try:
            claim_ids = list(claim_ids)
        except TypeError:
            raise ValueError(f"claim_ids must be a claim id or a list of them, got "
                             f"{claim_ids!r:.60}") from None
    if claim_ids == []:     # was every claim (minutes), as if no id had been given
        raise ValueError("claim_ids is empty: give at least one claim id, or None for every "
                         "claim")
    if claim_ids:
        unknown = [i for i in claim_ids if not one_of(i, CLAIMS)]
        if unknown:
            # Quoted: an empty or blank id ('--claim ""') was printed as nothing at all.
            text = str(unknown[0]).strip()
            near = ([i for i in CLAIMS if text and i.startswith(text)][:3]
                    or difflib.get_close_matches(text, list(CLAIMS), n=1))
            hint = f"did you mean {' or '.join(map(repr, near))}? " if near else ""
            parts = [i.strip() for i in text.split(",")]
            if len(parts) > 1 and all(one_of(i, CLAIMS) for i in parts):
                # '--claim A,B' was told "did you mean 'B'?", one of the two it asked for.
                hint = ("a claim id holds no comma: give each alone, --claim "
                        + " --claim ".join(parts) + " (in Python a list); ")
            raise ValueError(f"unknown claim id(s): {', '.join(map(repr, unknown))} ({hint}see "
                             "riskcalc check --list)")
        keep, asked = {c.id for c in chosen}, list(dict.fromkeys(claim_ids))
        other = [i for i in asked if i not in keep]
        if other:           # were dropped silently when some ids were of the paper
            what = (f"none of the claims {', '.join(other)} is" if len(other) == len(asked)
                    else f"the claims {', '.join(other)} are not")
            alias = "the same paper as 000; " if named == "002" else ""
            raise ValueError(f"{what} of paper {named} ({alias}a claim id starts with its "
                             "paper)")
        chosen = [CLAIMS[i] for i in asked]
    return chosen


def _run_one(claim, quick: bool) -> dict:
    start = time.perf_counter()
    try:
        # One BLAS thread per check, in this process as in the workers: a second OpenBLAS
        # thread busy-waits against the other worker (measured: 003.thm2.mp-closed-form full
        # 3.9 s with one thread, 24-79 s threaded with the other core busy), and the verdicts
        # then do not depend on --jobs down to the last bit.
        with small_blas():
            out = claim.check(Config(quick), claim.seed)
        verdict, summary, evidence, corrected = (out.verdict, out.summary, out.evidence,
                                                 out.corrected)
        transcription = out.transcription or (None, None)
    except Exception as exc:  # a broken route is reported, never hidden, and never the paper's
        verdict, corrected = "check error", None
        summary = f"check raised {type(exc).__name__}: {exc}"
        evidence = {"error": f"{type(exc).__name__}: {exc}"}
        transcription = (None, None)
    seconds = time.perf_counter() - start
    return {"id": claim.id, "paper": claim.paper, "location": claim.location,
            "statement": claim.statement, "kind": claim.kind, "verdict": verdict,
            "evidence": jsonable({**evidence, "summary": summary,
                                  "mode": Config(quick).mode, "seconds": round(seconds, 2)}),
            "corrected": corrected, "transcription": transcription[0],
            "transcription_note": transcription[1]}


def checked_arguments(claims, quick, n_jobs) -> tuple[bool, int]:
    """``(quick, n_jobs)`` checked, and ``claims`` a list or tuple of ``Claim``, before any claim
    runs (``run_claims`` and ``paper_checks.sensitivity.sensitivity``): quick="no" ran the
    quick sizes, n_jobs=0 was taken and an id string was an AttributeError."""
    quick, n_jobs = flag("quick", quick), positive_int("n_jobs", n_jobs)
    bad = ([c for c in claims if not isinstance(c, Claim)]
           if isinstance(claims, (list, tuple)) else [claims])
    if bad:
        raise ValueError("claims must be a list of paper_checks.Claim (paper_checks.select("
                         f"paper, claim_ids) gives them), got {bad[0]!r:.60}")
    return quick, n_jobs


def finished(done) -> dict:
    """``done`` of ``run_claims`` and ``paper_checks.sensitivity.sensitivity``: a dict filled
    in place, or None for a new one (a list or a string was a TypeError after the first claim
    ran; fuzz42 report F5)."""
    if done is None:
        return {}
    if not isinstance(done, dict):
        raise ValueError(f"done must be a dict {{claim id: its result}} or None, got "
                         f"{done!r:.60}")
    return done


def run_claims(claims, *, quick: bool = True, n_jobs: int = 1, progress: bool = False,
               done=None) -> list:
    """Run ``claims`` and return one dict per claim, in order: ``{"id", "paper", "location",
    "statement", "kind", "verdict", "evidence", "corrected", "transcription",
    "transcription_note"}``; ``evidence["summary"]`` holds the key numbers and
    ``evidence["seconds"]`` the time taken; ``transcription`` is ``"independent"`` or
    ``"depends"`` for an erratum (``paper_checks.core``), with ``transcription_note`` naming what
    the original PDF must show, and None for other verdicts. ``progress`` shows a bar on
    stderr. The workers are those of ``montecarlo.runner.tasks.parallel_results``: a Ctrl-C stops
    them all and raises ``KeyboardInterrupt`` here. ``done``, optional: ``{claim id: result}``,
    filled in place as each claim finishes; the claims already in it are not run again (a
    stopped ``python -m paper_checks.report`` keeps it to resume)."""
    quick, n_jobs = checked_arguments(claims, quick, n_jobs)
    progress, done = flag("progress", progress), finished(done)
    todo = [c for c in claims if c.id not in done]
    with tqdm(total=len(todo), desc="claims", file=sys.stderr, disable=not progress,
              leave=False) as bar:
        # Longest-first would balance better; as they finish, so that a stop keeps them all.
        for res in parallel_results((delayed(_run_one)(c, quick) for c in todo),
                                    n_jobs=n_jobs if len(todo) > 1 else 1):
            done[res["id"]] = res
            bar.update(1)
    return [done[c.id] for c in claims]


def partial_path(out) -> Path:
    """Where a stopped run keeps its finished claims and sensitivity records (``--resume``)."""
    return Path(str(out) + ".partial.json")


def resumed(path: Path, mode: str) -> dict:
    """The finished work a stopped run of ``mode`` kept in ``path`` (ValueError if none)."""
    try:
        kept = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise ValueError(f"--resume: no run to resume in {path} ({exc})") from None
    if not isinstance(kept, dict) or kept.get("mode") != mode:
        raise ValueError(f"--resume: {path} is not a stopped {mode} run of this report "
                         f"(mode {kept.get('mode') if isinstance(kept, dict) else None!r}): "
                         "rerun without --resume")
    # Its parts as main writes them: {"mode": "quick"} alone was a KeyError, a list of claims
    # a ValueError after the estimate, an unknown id counted as done (fuzz42 report F6).
    seconds, claims, records = (kept.get(k) for k in ("seconds", "claims", "sensitivity"))
    whole = (set(kept) == {"mode", "seconds", "claims", "sensitivity"}
             and type(seconds) in (int, float) and 0 <= seconds < math.inf
             and isinstance(claims, dict) and isinstance(records, dict)
             and set(claims) | set(records) <= set(CLAIMS)
             and all(isinstance(r, dict) and r.get("id") == i for i, r in claims.items())
             and all(isinstance(r, list) for r in records.values()))
    if not whole:
        raise ValueError(f"--resume: {path} is not as a stopped run of this report writes it "
                         "(mode, seconds, claims, sensitivity of known claim ids): rerun "
                         "without --resume")
    return kept
