"""Issue 32, fuzz36 (docs): what this fuzz found, each test failing before."""

import pathlib
import re

import numpy as np
import pytest

import riskcalc
from tests.helpers import run_cli

DOCS = pathlib.Path(__file__).resolve().parents[1] / "docs"


def _verbs(capsys):
    """The subcommands ``riskcalc --help`` lists."""
    code, out, _ = run_cli(["--help"], capsys)
    assert code == 0
    listing = out.split("COMMAND\n", 2)[-1].split("\noptions:")[0]
    return re.findall(r"^    ([a-z][a-z-]+) ", listing, flags=re.M)


def test_cli_page_lists_every_verb(capsys):
    """F1: docs/cli.rst's table of verbs ("one subcommand per task") had 8 rows for the 10
    verbs of ``riskcalc --help``: advise and estimate were missing."""
    verbs = _verbs(capsys)
    assert len(verbs) == 10 and "advise" in verbs and "estimate" in verbs
    table = (DOCS / "cli.rst").read_text().split("Synopsis")[0]
    assert [v for v in verbs if f"* - ``{v}``" not in table] == []


def _help_options(verb, capsys):
    """The options of ``riskcalc VERB --help`` (bounds: not its bound parameters, which
    ``bounds --list`` documents per bound)."""
    code, out, _ = run_cli([verb, "--help"], capsys)
    assert code == 0
    out = out.split("bound parameters")[0]
    return set(re.findall(r"^  (--[a-z][a-z0-9_-]*)", out, flags=re.M))


def test_every_help_option_is_documented(capsys):
    """F2: ``--global-step`` (predict, compare) was named nowhere in README.md or docs/*.rst;
    every option of every verb's --help now is."""
    text = (DOCS.parent / "README.md").read_text() + "".join(
        p.read_text() for p in sorted(DOCS.glob("*.rst")))
    missing = {verb: sorted(o for o in _help_options(verb, capsys) if o not in text)
               for verb in _verbs(capsys)}
    assert {v: m for v, m in missing.items() if m} == {}


def test_global_step_help_gives_algorithm_1_default(capsys):
    """F2: --global-step's help gave FedAvg's server move and 'default 1' for every method;
    for fedprox (Algorithm 1) the move is w - g lam sum_j p_j (w - v_j) and the default
    1 / lam (predict fedprox --lam 0.7 prints global_step = 1.4285714285714286)."""
    code, out, _ = run_cli(["predict", "--help"], capsys)
    assert code == 0
    assert "default 1 / lam" in " ".join(out.split("--global-step G")[-1].split()[:40])


def test_cli_page_counts_the_fuzz_table_right():
    """F3: docs/cli.rst said tests/test_cli_fuzz.py "holds 91 such inputs"; its table has
    196. A count the page states must be the table's."""
    from tests.test_cli_fuzz import BAD

    stated = re.findall(r"test_cli_fuzz.py`` holds (\d+)", (DOCS / "cli.rst").read_text())
    assert all(int(n) == len(BAD) for n in stated)


def test_logistic_page_names_the_cli_fedavg_centre(capsys):
    """F4: docs/logistic.rst said "Finite M is not covered, and the command line offers only
    the oracle centre", though ``--centre fedavg`` answers on the command line (centre_scale
    0.8379194, alpha E[sigmoid'(alpha Z)] = E[sigmoid'(sqrt(2) Z)] by Gauss-Hermite) and
    finite M is ``--clients M`` (docs/logistic_finite_clients.rst)."""
    code, out, _ = run_cli(["predict", "rtfa", "--model", "logistic", "--gamma", "1",
                            "--signal", "1", "--r", "1", "--lam", "0.1", "--centre", "fedavg"],
                           capsys)
    assert code == 0 and "centre_scale = 0.83791940688" in out
    text = " ".join((DOCS / "logistic.rst").read_text().split())
    assert "offers only the oracle centre" not in text and "--centre fedavg" in text


def test_min_norm_pooled_model_is_pointed_to():
    """F5: docs/finite_clients.rst listed the min-norm global model for pooled N < d as not
    implemented, "which no method's parameters carry today"; FedAvg's rounds take the centre's
    norm (``signal``) and their T = inf from w = 0 is that model (2 clients at gamma 3: the
    same at K = 1 and K = 3, the joint interpolant being every K's fixed point)."""
    kw = dict(gamma=[3.0, 3.0], r=1.0, sigma=0.5, signal=1.0, rounds=[np.inf], step_size=0.1)
    one = riskcalc.rounds_limit("fedavg", local_steps=1, **kw).risk
    three = riskcalc.rounds_limit("fedavg", local_steps=3, **kw).risk
    assert np.all(np.isfinite(one)) and np.allclose(one, three, rtol=1e-9)
    text = " ".join((DOCS / "finite_clients.rst").read_text().split())
    assert "no method's parameters carry" not in text and "--rounds inf" in text


SHIFT = dict(gamma=[3.0, 3.0], r=1.0, sigma=0.5, signal=1.0, rounds=[np.inf],
             spectra=["two-point:1,2,0.5", "two-point:2,1,0.5"], step_size=0.05)


def test_rounds_page_pooled_below_d_under_shift_is_covered():
    """F6: docs/rounds.rst said Algorithm 1 with finite K and pooled N < d is "still refused
    under covariate shift", and that FedAvg with K = 1 under shift does not cover pooled
    N <= d; both answer (2 clients at gamma 3, anti-aligned two-point covariances; T = inf
    the pooled min-norm interpolant, the same for FedAvg K = 1 and Algorithm 1 K = 2)."""
    fedavg = riskcalc.rounds_limit("fedavg", local_steps=1, **SHIFT).risk
    alg1 = riskcalc.rounds_limit("pfedme", local_steps=2, lam=0.5, **SHIFT).risk
    assert np.all(np.isfinite(fedavg)) and np.all(np.isfinite(alg1))
    assert np.allclose(fedavg, alg1, rtol=1e-6)
    text = " ".join((DOCS / "rounds.rst").read_text().split())
    assert "still refused under covariate shift" not in text
    assert "Not covered: pooled N <= d" not in text


def test_near_pooled_threshold_under_a_spectrum_names_gamma():
    """F7: README says rounds near pooled N = d under a spectrum are refused; the refusal of
    FedAvg K = 3 at gamma (2.001, 2.001) (N / d = 0.9995) under atoms (1, 1.01) blamed the
    spectrum and advised "give a spectrum of a narrower range", which cannot help; it now
    names gamma and the threshold (the spectrum's range stays the cause far from it)."""
    kw = dict(r=1.0, sigma=0.5, signal=1.0, rounds=[5], local_steps=3, step_size=0.1)
    with pytest.raises(ValueError, match=r"^gamma: .* sum_j 1/gamma_j = 0\.9995 is near 1"):
        riskcalc.rounds_limit("fedavg", gamma=[2.001, 2.001], spectrum="two-point:1,1.01,0.5",
                              **kw)
    with pytest.raises(ValueError, match=r"^spectrum: .* narrower range"):
        riskcalc.rounds_limit("fedavg", gamma=[2.1, 2.1], spectrum="two-point:1e-4,1,0.5", **kw)


def test_tables_page_names_the_logistic_frame_columns():
    """F8: docs/tables.rst said LogisticResult.to_frame() gives "the four limits"; it has six
    (risk, sigma_risk, cosine, cosine_uncentred, test_logloss, test_error), each now named."""
    pytest.importorskip("pandas")
    frame = riskcalc.logistic_limit(gamma=1.0, signal=1.0, r=1.0, lam=0.5).to_frame()
    limits = ["risk", "sigma_risk", "cosine", "cosine_uncentred", "test_logloss", "test_error"]
    assert set(limits) <= set(frame.columns)
    text = (DOCS / "tables.rst").read_text()
    line = text.split("logistic_limit(")[0].rsplit("# one row:", 1)[1]
    assert "four limits" not in line and all(c in line for c in limits)


def test_figures_page_names_the_theory_figures():
    """F9: docs/figures.rst's list of what ``riskcalc figures`` regenerates left out paper
    004's four figures on the linear model along the rounds and paper 000's Fig. 1 with exact
    minimizers (in ``figures --list`` and the gallery, one example a figure); it now names every
    one."""
    ids = [p.stem.split("_", 2)[2].replace("_", "-")        # tests/test_docs.py: the registry
           for p in (DOCS / "gallery").rglob("plot_*.py")]
    theory = [i for i in ids if i.endswith("-theory") or "rounds" in i]
    assert len(theory) == 6
    source = (DOCS / "figures.rst").read_text().split(".. command-output::")[0]
    assert [i for i in theory if f"``{i}``" not in source] == []


def test_development_layout_names_every_package():
    """F10: docs/development.rst's Layout ("a formula is found from its paper in one step")
    had no riskcalc/linear/dynamics/ (the whole of training along the rounds); every package
    folder of riskcalc/, riskcalc/linear/ and montecarlo/ is now in it."""
    root = DOCS.parent
    layout = (DOCS / "development.rst").read_text().split("The layers import")[0]
    folders = [p.parent for top in ("riskcalc", "riskcalc/linear", "montecarlo")
               for p in (root / top).glob("*/__init__.py")]
    assert len(folders) >= 12
    assert sorted(f.name for f in folders if f"  {f.name}/ " not in layout) == []


def test_exactness_table_covers_every_limit_page():
    """F11: docs/exactness.rst ("what is exact, what is derived here, how each is checked")
    had no row for training along the rounds (:doc:`rounds`) and named neither the finite-M
    nor the spectrum logistic pages; its table now links every page of a limit."""
    text = (DOCS / "exactness.rst").read_text()
    pages = ["finite_clients", "finite_clients_linear", "covariate_shift", "finite_steps",
             "rounds", "logistic", "logistic_finite_clients", "logistic_spectrum", "bounds"]
    assert [p for p in pages if f":doc:`{p}`" not in text] == []


def _unresolved(page):
    """The dotted ``riskcalc.*`` / ``montecarlo.*`` names of ``page`` that name nothing."""
    import importlib

    bad = []
    for name in sorted(set(re.findall(r"``((?:riskcalc|montecarlo)(?:\.[A-Za-z_]\w*)+)",
                                      (DOCS / page).read_text()))):
        parts = name.split(".")
        for i in range(len(parts), 0, -1):
            try:
                obj = importlib.import_module(".".join(parts[:i]))
            except ImportError:
                continue
            for part in parts[i:]:
                obj = getattr(obj, part, None)
            break
        if obj is None:
            bad.append(name)
    return bad


def test_safety_page_names_resolve():
    """F12: docs/safety.rst said client weights default to samples in
    ``montecarlo.Setting``, which does not exist (``montecarlo.linear.instances.Setting``,
    whose weights and 100 clients the page describes, as getting_started names it)."""
    from montecarlo.linear.instances import Setting

    assert (Setting(d=10).weights, Setting(d=10).clients) == ("samples", 100)
    assert _unresolved("safety.rst") == []


def test_advise_does_not_offer_centre(capsys):
    """F13: advise --help offered --centre {oracle,fedavg} ("infinitely many clients"), and
    every use was refused, one refusal contradicting the other: '--centre applies to --model
    logistic only' without it, '--centre does not apply to --model logistic' with it (advise
    ranks at the federation's finite M). advise no longer takes it; predict does."""
    fed = str(DOCS / "examples" / "federation.json")
    code, out, _ = run_cli(["advise", "--help"], capsys)
    assert code == 0 and "--centre" not in out
    for model in (["--model", "logistic", "--signal", "1"], []):
        code, _, err = run_cli(["advise", "--federation", fed, *model, "--centre", "fedavg"],
                               capsys)
        assert code == 2 and err.strip() == "error: unrecognized arguments: --centre fedavg"
    code, out, _ = run_cli(["predict", "--help"], capsys)
    assert "--centre" in out


def test_getting_started_says_which_results_have_what():
    """F14: docs/getting_started.rst said "Every result carries notes, diagnostics and
    to_frame()"; rounds_limit's RoundsLimit has neither notes nor to_frame, and the finite-M
    logistic results report iterations and residual, not diagnostics. The page now says which
    results carry what, and each claim holds."""
    pytest.importorskip("pandas")
    results = [riskcalc.limit("rtfa", gamma=2.0, r=1.0, sigma=0.5, lam=0.5),
               riskcalc.clients_limit("rtfa", gamma=[2.0, 0.5], r=1.0, sigma=0.5, lam=0.5),
               riskcalc.steps_limit("ftfa", gamma=2.0, r=1.0, sigma=0.5, steps=[1],
                                    step_size=0.2),
               riskcalc.logistic_limit(gamma=1.0, signal=1.0, r=1.0, lam=0.5)]
    assert all(hasattr(r, "notes") and hasattr(r, "diagnostics") and len(r.to_frame())
               for r in results)
    rounds = riskcalc.rounds_limit("fedavg", gamma=[2.0, 0.5], r=1.0, sigma=0.5, signal=1.0,
                                   rounds=[1], local_steps=1, step_size=0.1)
    text = " ".join((DOCS / "getting_started.rst").read_text().split())
    assert hasattr(rounds, "diagnostics") and "Every result carries" not in text
    assert hasattr(rounds, "to_frame") != ("no ``notes`` or ``to_frame()`` yet" in text)


def test_authors_settings_are_not_called_simulate_presets(capsys):
    """F15: docs/figures.rst and ``simulate --list`` called the authors' setups of paper 004
    ``AUTHORS_PRESETS`` ('paper004-authors', ...) presets, but ``riskcalc simulate
    paper004-authors`` refuses (not a preset); both now say the p004 figures run them."""
    code, _, err = run_cli(["simulate", "paper004-authors", "--out", "x.csv"], capsys)
    assert code == 2 and "preset must be one of" in err
    code, out, _ = run_cli(["simulate", "--list"], capsys)
    assert code == 0 and "not presets of simulate" in " ".join(out.split())
    text = " ".join((DOCS / "figures.rst").read_text().split())
    assert "not presets of ``riskcalc simulate``" in text


def test_shift_infinite_limit_across_a_wide_span_answers():
    """F16: FTFA under covariate shift, gamma (2, 1), spectra two-point:1,1e6,0.5 and identity:
    client 1's ridgeless variance is infinite (the interpolation threshold, +inf by the docs),
    and the wide-span scale check took inf - inf as its gap: refused as IllConditioned "moves
    them by nan relative". It answers now, continuous with gamma_1 = 1 -/+ 1e-4 (client 0:
    2373.87, 2374.37)."""
    res = riskcalc.clients_limit("ftfa", gamma=[2.0, 1.0], r=1.0, sigma=0.5,
                                 spectra=["two-point:1,1e6,0.5", "identity"])
    assert np.isinf(res.risk[1]) and res.risk[0] == pytest.approx(2374.1174278, rel=1e-8)


@pytest.mark.parametrize("cov", [dict(spectrum="two-point:1,4,0.5"),
                                 dict(spectra=["two-point:1,4,0.5", "identity"])])
def test_rtfa_at_lam_0_with_a_client_at_gamma_1_is_ftfa(cov):
    """F17: RTFA at lam = 0 is FTFA; with a client at gamma = 1 under a spectrum (shared or
    shifted) clients_limit raised the engine's "a projection block (eta = 0) needs gamma > 1
    and a positive shift; got gamma = 1", where FTFA and Sigma = I answer (that client's
    variance +inf, the documented threshold). It answers FTFA's numbers now."""
    kw = dict(gamma=[2.0, 1.0], r=1.0, sigma=0.5, **cov)
    rtfa = riskcalc.clients_limit("rtfa", lam=0.0, **kw)
    ftfa = riskcalc.clients_limit("ftfa", **kw)
    assert np.isinf(rtfa.risk[1]) and rtfa.bias[1] == 0.0
    assert rtfa.risk[0] == pytest.approx(ftfa.risk[0], rel=1e-9)


def test_advise_digits_is_not_called_a_gallery_example():
    """F18: docs/advise.rst called docs/examples/advise_digits.py "the gallery example"; the
    gallery (docs/conf.py: examples_dirs "gallery") does not hold it (it needs scikit-learn,
    the ``examples`` extra); the page now says how to run it."""
    assert not list((DOCS / "gallery").rglob("*advise_digits*"))
    text = " ".join((DOCS / "advise.rst").read_text().split())
    assert "The gallery example ``docs/examples/advise_digits.py``" not in text
    assert "python docs/examples/advise_digits.py" in text
