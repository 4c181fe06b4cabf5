"""Issue 32, fuzz38 (quad): what this fuzz found, each test failing before."""

import numpy as np

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
