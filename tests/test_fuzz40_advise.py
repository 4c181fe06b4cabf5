"""Issue 32, fuzz40 (advise): what this fuzz found, each test failing before.

The area was advise's speed at 100-1000 clients (a speed task first: ``benchmarks/
bench_advise_decision.py`` checks the decisions against a baseline tree, and
``benchmarks/bench_advise_measured.txt`` holds the measurements); these tests pin the
mechanisms and the message fixed."""

import numpy as np
import pytest

from riskcalc.linear.engine.mp_quadrature import mp_expect
from riskcalc.linear.finite_clients import gradient
from riskcalc.linear.finite_clients.own import own_sources
from riskcalc.linear.finite_clients.own_objective import objective

H = 1e-30


@pytest.mark.parametrize("method, tuning", [("pfedme", 0.3), ("pfedme", 3.0),
                                            ("maml_fl", 0.2), ("maml_fl", 1.5)])
def test_own_jet_is_the_complex_steps_of_own_sources(method, tuning):
    """F1 (speed): the MAML-FL / pFedMe gradient took ``own_sources``' traces by three
    complex-step passes (~95% of a pFedMe gradient); ``_own_jet`` gives the traces and their
    partial derivatives in p_l, t_l, the tuning and g from one real pass. Each partial is
    the complex step of ``own_sources`` (and of G = tau((p phi + t)^-1)) to 1e-12 (both also
    agree with 30-digit mpmath differences of the traces, to 1.7e-15)."""
    gam = np.array([0.4, 0.9, 1.7, 2.6])
    p, t, g = np.array([0.3, 0.1, 0.4, 0.2]), np.array([0.5, 1.2, 0.8, 2.0]), 0.9
    jet = gradient._own_jet(method, gam, tuning, p, t, g, None)
    names = ("D", "var_b", "Eb", "Ev", "J0", "J1", "Jfv", "J4")

    def traces(p, t, tun, g):
        src = own_sources(method, gam, tun, p, t, g, own=np.zeros(4), count=np.ones(4))
        out = dict(zip(names[:4], src[:4]))
        out.update(zip(names[4:], src[4][[0, 1, 2, 5]]))
        f = objective(method, tun)[0]
        out["G"] = mp_expect(gam, lambda s, P, T: (1.0 / (P * f(s) + T),),
                             p[:, None], t[:, None])[0]
        return out

    base = dict(p=p.astype(complex), t=t.astype(complex), tun=complex(tuning), g=complex(g))
    for k, var in enumerate(("p", "t", "tun", "g")):
        moved = dict(base)
        moved[var] = moved[var] + 1j * H
        step = traces(moved["p"], moved["t"], moved["tun"], moved["g"])
        for name, value in step.items():
            if method == "maml_fl" and name in names[4:]:
                continue
            want = value.imag / H
            got = jet[name][1 + k]
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12 * np.max(
                np.abs(want)), err_msg=f"{name} d/d{var}")
            np.testing.assert_allclose(jet[name][0], value.real, rtol=1e-13)


def test_quadrature_extra_integrands_do_not_decide():
    """F1 (speed): ``mp_expect(..., decide=n)`` integrates the integrands beyond the first n
    on the rules the first n stop at (a derivative sharper than its value would otherwise
    take more nodes): the values are those of a call without the extras, bit for bit."""
    gam = np.array([0.3, 0.8, 1.5, 3.0])
    P, T = np.array([[0.4], [0.1], [0.3], [0.2]]), np.array([[0.05], [0.3], [0.02], [1.0]])
    alone = mp_expect(gam, lambda s, P, T: (1.0 / (s + T), P / (s + T) ** 2), P, T)
    both = mp_expect(gam, lambda s, P, T: (1.0 / (s + T), P / (s + T) ** 2,
                                           1.0 / (s + T) ** 6), P, T, decide=2)
    assert np.array_equal(both[:2], alone)


def test_advise_methods_empty_says_so():
    """F2: ``advise_logistic(fed, methods=[])`` (and ``advise``) said "got an empty name in
    []": an empty sequence has no name at all; the message says methods is empty and which
    pipelines it takes."""
    from riskcalc.advise import advise, federation
    from riskcalc.advise.logistic import LogisticFederation, advise_logistic

    fed = LogisticFederation(gamma=[0.5, 2.0], r=[0.5, 1.5], signal=1.0, global_lam=0.05)
    for call in (lambda m: advise_logistic(fed, methods=m),
                 lambda m: advise(federation.from_clients(
                     [{"gamma": 0.5, "r": 1.0, "sigma": 1.0}] * 2), methods=m)):
        for empty in ([], ()):
            with pytest.raises(ValueError, match=r"methods is empty: name at least one of "
                                                 r"fedavg, .*or leave methods out") as info:
                call(empty)
            assert "empty name" not in str(info.value)


@pytest.mark.parametrize("methods, said", [
    (5, "got int 5"), (b"fedavg", "got bytes b'fedavg'"), ({"fedavg": 1}, "got dict"),
    ([None], "as strings; got None (NoneType)"), ([b"ftfa"], "as strings; got b'ftfa'")])
def test_pipelines_reads_only_names(methods, said):
    """F3: ``advise(fed, methods=5)`` raised TypeError ('int' object is not iterable),
    ``methods=b"fedavg"`` refused the bytes' codes ("got 102, 101, 100, ..."), a dict was read
    as its keys and ``[None]`` as "an empty name": each is one ValueError naming what
    methods takes and what it got."""
    from riskcalc.advise import pipelines

    with pytest.raises(ValueError, match="methods must be among fedavg") as info:
        pipelines(methods)
    assert said in str(info.value)


def test_advise_rounds_range_is_the_command_lines():
    """F5: ``advise(rounds=3001)`` answered where ``riskcalc advise --rounds 3001`` is refused,
    and ``advise(rounds=0)`` named the range 1..9007199254740992 (``estimate_seconds`` too);
    both say 1..3000 now."""
    from riskcalc.advise import Federation, advise, estimate_seconds

    fed = Federation(gamma=[0.5, 2.0], r=[1.0, 0.5], sigma=[0.5, 1.0])
    for rounds in (0, 3001):
        for call in (lambda: advise(fed, methods="fedavg", rounds=rounds, signal=1.0),
                     lambda: estimate_seconds(fed, "fedavg", rounds)):
            with pytest.raises(ValueError, match=r"rounds must be an integer >= 1 and <= "
                                                 rf"3000, got {rounds}$"):
                call()
