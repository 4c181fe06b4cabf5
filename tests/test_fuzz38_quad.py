"""Issue 32, fuzz38 (quad): what this fuzz found, each test failing before."""

import numpy as np
import pytest

from tests.helpers import run_cli

#: tau of the seven traces of ``steps.identity._step_quadrature`` (FTFA, client 0 of gammas
#: [1, 2, 3], samples weights, 1e6 steps of 0.001) by a 30-digit mpmath evaluation of the
#: same Marchenko-Pastur integrals (tanh-sinh, split on the filter's scale 1 / (eta k)).
MPMATH_1E6 = [0.012615265987094888, 0.29513126629506621, 7.3584281501976188e-5,
              5.5039872213432289e-8, 1.5233385695169349e-5, 0.025214991880145381,
              20.405203438268541]


def test_many_small_steps_at_gamma_one_answer_as_mpmath_does():
    """F1: FTFA at gamma 1 with clients (Sigma = I) after 1e6 steps of 0.001 was refused with
    "fewer steps or a smaller step size answer" while 1e5 steps of 0.01 (the same product)
    answered: (1 - eta s)^k's rounding grew like k eps, beyond the rule's 1e-12. q^k is now
    exp(k log1p(-eta s)): the traces agree with a 30-digit mpmath evaluation."""
    from riskcalc.linear.finite_clients.identity import subordination
    from riskcalc.linear.steps.finite_clients import clients_steps_limit
    from riskcalc.linear.steps.identity import _step_quadrature

    gam = np.array([1.0, 2.0, 3.0])
    p, _, _, u, _ = subordination(gam, np.ones(3), "samples")
    J, own = _step_quadrature("ftfa", gam, p, u, np.zeros(3), np.array([10 ** 6]), 0.001,
                              np.array([0]))
    np.testing.assert_allclose([*J[:, 0], own[0]], MPMATH_1E6, rtol=1e-12, atol=1e-14)
    bias, var = clients_steps_limit("ftfa", gamma=[1.0] * 3, r=1.0, sigma=1.0,
                                    steps=10 ** 6, step_size=0.001)
    near, _ = clients_steps_limit("ftfa", gamma=[1.0] * 3, r=1.0, sigma=1.0,
                                  steps=10 ** 5, step_size=0.01)
    assert abs(bias - near) < 1e-7 and abs(bias - 0.0252210791) < 1e-9, (bias, near)


def test_compare_json_and_sweep_csv_have_no_relative_difference_below_the_rounding(
        tmp_path, capsys):
    """F2: ``compare ftfa --gamma 0.5 --clients-file [gamma 8] --global federated --steps 2000
    --step-size 0.3 --json`` had bias rel_diff 1.7e+33 (predicted 8.6e-50, simulated 1.5e-16:
    rounding) and the sweep CSV the same in bias_rel_diff, where the table prints n/a
    (fuzz38 steps2 F23): ``summarize`` now takes the risk's scale, null/empty there."""
    import json

    from montecarlo.compare import summarize

    out = summarize([[1e-15], [2e-15]], [1e-50], scale=[1.0])
    assert np.isnan(out["rel_diff"][0]) and out["inside"][0]
    kept = summarize([[1e-15], [2e-15]], [[1e-50, 1.0]], scale=[[np.inf, 2.0]])
    assert np.isfinite(kept["rel_diff"][0]).all(), kept      # no finite scale / above it
    path = tmp_path / "others.json"
    path.write_text('[{"gamma": 8, "r": 1, "sigma": 1}]')
    argv = ["ftfa", "--gamma", "0.5", "--r", "1", "--sigma", "1", "--d", "30", "--reps", "2",
            "--steps", "2000", "--step-size", "0.3", "--clients-file", str(path), "--global",
            "federated", "--no-progress"]
    code, text, err = run_cli(["compare", *argv, "--json"], capsys)
    rel = {q: v["rel_diff"] for q, v in json.loads(text)["comparison"].items()}
    assert code == 0 and rel["bias"] is None and abs(rel["risk"]) < 1, (rel, err)
    code, text, err = run_cli(["sweep", *argv, "--format", "csv"], capsys)
    row = dict(zip(*(line.split(",") for line in text.splitlines()[-2:])))
    assert code == 0 and row["bias_rel_diff"] == "" and row["risk_rel_diff"] != "", row


@pytest.mark.parametrize("lam", [1e300, 1e-300])
def test_per_client_steps_take_the_range_of_lam(lam):
    """F3: ``clients_steps_limit("rtfa", lam=1e300, ...)`` answered inf, inf (and 1e-300
    answered) where ``clients_limit``, ``steps_limit`` and the CLI refuse lam outside
    [1e-100, 1e100]."""
    from riskcalc.linear.steps.finite_clients import clients_steps_limit

    with pytest.raises(ValueError, match=r"lam must be 0 or lie in \[1e-100, 1e\+100\]"):
        clients_steps_limit("rtfa", gamma=[1.0, 2.0], r=1.0, sigma=1.0, lam=lam, steps=10,
                            step_size=0.001)


def test_many_tiny_steps_away_from_gamma_one_answer():
    """F1 (second input): gamma 2 with 3 clients after 1e12 steps of 9.007e-5 / 1e12 was
    refused as "quadrature did not converge ... (lam or u too small?)" (neither is: the
    power's rounding); it now answers as 1e9 steps of the same time do, to 1e-10."""
    from riskcalc.linear.steps.finite_clients import clients_steps_limit

    kw = dict(gamma=[2.0] * 3, r=1.0, sigma=1.0)
    t = 2 ** 53 * 1e-16
    far = clients_steps_limit("ftfa", steps=10 ** 12, step_size=t / 1e12, **kw)
    near = clients_steps_limit("ftfa", steps=10 ** 9, step_size=t / 1e9, **kw)
    np.testing.assert_allclose(far, near, rtol=1e-10)
