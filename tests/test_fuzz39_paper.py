"""Issue 32, fuzz39 (paper): what this fuzz found, each test failing before."""

from paper_checks import CLAIMS
from paper_checks.report import read_seconds


def test_every_claim_has_a_recorded_full_time():
    """F1: ``full_seconds.json`` lacked the full-mode times of seven claims
    (001.thm42.local-order-scale, 001.eq4.prox-sign, 001.thm43.iapgd-katyusha and four of paper
    004's exact-limit checks): ``riskcalc check --full`` counted each at the median of the
    others in its time estimate and its advice on what to leave out."""
    missing = sorted(set(CLAIMS) - set(read_seconds()))
    assert missing == []


def test_thm44_below_mu_is_an_erratum_no_method_attains():
    """F2: paper 001's Thm 4.4 (and Sec. 2) state AL2SGD+'s O(sqrt(min{L~, lam}/mu) log 1/eps)
    communications with no relation between lam and mu; below mu no method attains it (two
    instances differing in client 2's data: at lam = 1e-6 mu and eps = r/10 every method
    needs >= 0.9 expected rounds, the printed order is 0.032). Recorded as an erratum with the
    corrected (1 + sqrt(min{L~, lam}/mu)) log 1/eps, its exponent mutant rejected."""
    from paper_checks.core import Config
    from paper_checks.numbered import RESULTS
    from paper_checks.sensitivity import sensitivity

    claim = CLAIMS["001.thm44.below-mu"]
    out = claim.check(Config(), claim.seed)
    assert out.verdict == "erratum-harmless"
    assert out.transcription[0] == "depends"
    ev = out.evidence
    assert min(ev["rounds_lower"]) >= 0.9 and ev["printed"][3] < 0.05
    [rec] = sensitivity([claim])
    assert rec["sensitive"] and rec["mutant_verdict"] == "fails"
    assert any("001.thm44.below-mu" in row[5] for row in RESULTS if row[1] == "Theorem 4.4")


PROOF_CLAIMS = {"004.lemma7.proof-steps": "holds", "004.thm2.proof-steps": "holds",
                "004.eq100.q-factor": "erratum-harmless",
                "004.thm2.proof-conditions": "holds", "004.cor1.proof-steps": "holds",
                "004.eq123.prox-argument": "erratum-harmless"}


def test_paper_004_proof_steps_are_graded_and_reject_their_mutants():
    """F3: the 127 numbered proof steps were listed, not graded. Paper 004's App. B steps
    (93)-(96), (98)-(101), (104), (106)-(114), (115)-(118), (119)-(123) now have checks, each
    rejecting its mutants (a coefficient made stronger fails at the step's tight point); two
    are errata of the proof text: (100)'s q lacks (1 - eta mu_l)^K, so (101) could never hold
    as printed; (123)'s last line bounds the prox's difference by itself times L_w^2."""
    from paper_checks.sensitivity import sensitivity

    claims = [CLAIMS[c] for c in PROOF_CLAIMS]
    records = sensitivity(claims)
    assert {r["id"]: r["verdict"] for r in records} == PROOF_CLAIMS
    assert all(r["sensitive"] and r["mutant_verdict"] == "fails" for r in records), records
    assert len(records) == 11


def test_each_lemma7_step_rejects_its_own_mutant():
    """F3: under each mutant the step whose coefficient it changes fails at its tight point:
    Young's gamma/eps_g (93) and L_g gamma^2/2 (95) divided by 100, mu_g/2 (94) times 100,
    (96)'s gamma^3 L_g times 1.5 (its identity with the combined lines)."""
    import numpy as np

    from paper_checks.core import _ACTIVE, Mutant
    from paper_checks.p004_proofs import _lemma7_steps, _Quadratic, _tight_points

    rng = np.random.default_rng(3)
    q = _Quadratic(rng)
    gamma, eps_g = 0.5 / q.L_g, 0.7 * q.mu_g
    points = _tight_points(q, rng, gamma, eps_g)
    expected = {"upper": {"93", "95"}, "lower": {"94"}, "equality": {"96="}}
    for role, steps in expected.items():
        token = _ACTIVE.set(Mutant(role))
        try:
            failed = {k for k, (w, d) in points.items()
                      if _lemma7_steps(q, w, d, gamma, eps_g)[k] < -1e-9}
            w, d = points["93"]
            failed |= {"96="} if _lemma7_steps(q, w, d, gamma, eps_g)["96="] > 1e-9 else set()
        finally:
            _ACTIVE.reset(token)
        assert failed == steps, role


def test_coverage_json_counts_equations_and_proof_steps_beside_results(capsys):
    """F4 (d): ``coverage --json`` counted the results only (its keys are pinned); each
    paper's row now also has ``with_equations`` (the 43 claim equations added) and
    ``proof_steps`` (listed, graded)."""
    import json

    from paper_checks.coverage import main

    assert main(["--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"003", "000", "004", "001"}
    assert out["004"]["proof_steps"]["listed"] == 103
    assert out["004"]["proof_steps"]["graded"] >= 29
    assert sum(r["proof_steps"]["listed"] for r in out.values()) == 127
    for row in out.values():
        assert {"full", "partial", "none"} == set(row["with_equations"])
        assert row["with_equations"]["full"] >= row["full"]


def test_errata_without_a_mutant_now_declare_one_and_reject_it():
    """F5 (d): four errata declared no mutant, so nothing showed their checks would reject a
    wrong corrected form. Two of paper 004 now pass theirs through the seam and reject it:
    eq. (75)'s corrected bracket 128 kappa^2 (x1.5, checked at R = 0 and R = 0.3), App. C's
    bound gamma < 1/L_g (x1.5: eq. (12) has no K beyond 1/L_g). Left: 000's Lemma 7 word swap
    (test_paper_checks_sensitivity keeps it as the example of a claim without a mutant) and
    004.sec61.statistical-error (separability, an LP: no formula to mutate)."""
    from paper_checks.sensitivity import _claim_records

    [rec] = _claim_records("004.eq75.kappa-dropped", quick=True)
    assert rec["sensitive"] and rec["mutant"] == "equality x1.5", rec
    # 004.appC.global-step runs the authors' code (0.2 s): its seam alone, without the runs
    claim = CLAIMS["004.appC.global-step"]
    assert claim.mutants == ("equality",)
    # the claims left without a mutant: two errata and four that are no verdict on a formula
    # (a finding, not checkable, a qualitative statement of paper 003's Sec. 5)
    # (000's Lemma 7 word swap declares its turning point since fuzz42 bounds F7)
    assert {c.id for c in CLAIMS.values() if not c.mutants} == {
        "004.sec61.statistical-error", "003.sec5.steps-monotone",
        "003.finding.steps-early-stopping", "003.sec5.experiments", "004.fig3.adaptive-lambda"}


def test_al2sgd_rounds_order_is_not_below_one_round_per_log(capsys):
    """F6: below lam = mu ``al2sgd_complexity`` gave the printed rounds_order sqrt(lam/mu)
    log 1/eps (0.245 at lam = mu/8, eps = 0.5; 1e-3 log 1/eps at lam = 1e-6 mu), an order no
    method attains (F2). It is max{1, sqrt(min{L~, lam}/mu)} log 1/eps now: within x2 of the
    corrected (1 + sqrt(min/mu)) log 1/eps, the printed order where lam >= mu."""
    import math

    import pytest

    from riskcalc import minimax as mm
    from tests.helpers import run_cli

    out = mm.al2sgd_complexity(4, 4, [0.5, 4e-6, 4, 16], 1, 0.5)["rounds_order"]
    assert list(out) == pytest.approx([math.log(2)] * 4, rel=1e-15)
    assert mm.al2sgd_complexity(1e4, 1, 100, 1, 1e-6)["rounds_order"] == \
        pytest.approx(10 * math.log(1e6), rel=1e-15)
    code, out, err = run_cli(["bounds", "al2sgd_complexity", "--L_tilde", "4", "--mu", "4",
                              "--lam", "0.5", "--m", "1", "--eps", "0.5"], capsys)
    assert code == 0 and "rounds_order=0.693147" in out


def test_running_a_claims_module_as_a_script_says_how_to_run_it(capsys):
    """F7: ``python -m paper_checks.p001`` (a new user's first try at one paper's checks) was
    a "ValueError: duplicate claim id" traceback: the package registers the module's claims,
    then the script registers them again. It is one error line naming ``riskcalc check``, exit
    2, and the catalogue is unchanged."""
    import runpy
    import warnings

    import pytest

    before = dict(CLAIMS)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)      # runpy: already imported
        with pytest.raises(SystemExit) as exc:
            runpy.run_module("paper_checks.p004_conditions", run_name="__main__")
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ") and "riskcalc check" in err
    assert CLAIMS == before


def test_check_help_does_not_call_the_full_sizes_the_committed_reports(capsys):
    """F8: ``riskcalc check --help`` said --full runs "the committed report's sizes"; the
    committed REPORT.md is a quick run (its first line says so, and the quick estimate reads
    its times), so a user wanting to reproduce it was sent to a half-hour run."""
    from paper_checks.report import REPORT
    from tests.helpers import run_cli

    assert "Mode: **quick**" in REPORT.read_text()[:400]
    code, out, _ = run_cli(["check", "--help"], capsys)
    text = " ".join(out.split())
    assert code == 0 and "committed report's sizes" not in text
    assert "the committed one is a quick run" in text


def test_select_refuses_ids_of_another_paper_and_an_empty_list(capsys):
    """F9: ``riskcalc check --paper 004 --claim 004.eq100.q-factor --claim 001.thm44.below-mu``
    dropped the 001 claim the user asked for without a word (only when every id was of
    another paper did it refuse), and ``paper_checks.select(None, [])`` selected every claim
    (133: minutes of checks) as if no id had been given. Both are refused now, in
    ``select`` (the command line's own test of the all-other-papers case is gone)."""
    import pytest

    from paper_checks import select
    from tests.helpers import run_cli

    code, out, err = run_cli(["check", "--paper", "004", "--claim", "004.eq100.q-factor",
                              "--claim", "001.thm44.below-mu", "--list"], capsys)
    assert code == 2 and out == ""
    assert err == ("error: the claims 001.thm44.below-mu are not of paper 004 (a claim id "
                   "starts with its paper)\n")
    with pytest.raises(ValueError, match="claim_ids is empty"):
        select(None, [])
    with pytest.raises(ValueError, match="the claims 001.thm44.below-mu are not of paper 004"):
        select("004", ["001.thm44.below-mu", "004.eq100.q-factor"])
    assert [c.id for c in select("000", ["000.lemma7.mu0"])] == ["000.lemma7.mu0"]


def test_paper_003_thm1_proof_steps_are_graded():
    """F10: paper 003's proof steps (19)-(20) (Thm 1's proof: the weighted global model and
    FTFA's client model written through theta*, the noise and S_i^+ S_i) were listed, not
    graded; now each line is checked against weighted least squares and the closest
    interpolant (S_i singular for n_i < d), its noise terms' 1/n_j x1.5 rejected."""
    from paper_checks.equations import proof_step_counts
    from paper_checks.sensitivity import _claim_records

    [rec] = _claim_records("003.thm1.proof-steps", quick=True)
    assert rec["verdict"] == "holds" and rec["sensitive"], rec
    assert proof_step_counts()["003"] == {"listed": 5, "graded": 2}
