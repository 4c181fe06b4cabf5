"""Results as tables: LimitResult, Comparison and sweep rows as pandas DataFrames (the optional
extra ``frames``)."""

import sys

import numpy as np
import pytest

import riskcalc
from montecarlo.compare import compare
from montecarlo.linear.instances import Setting
from montecarlo.sweep import sweep

pd = pytest.importorskip("pandas")


def test_limit_frame_has_one_row_per_parameter_point():
    res = riskcalc.limit("rtfa", gamma=[1.5, 2.0, 4.0], r=1.0, sigma=0.5, lam=[[0.1], [1.0]])
    frame = res.to_frame()
    assert frame.shape[0] == 6
    assert list(frame.columns) == ["method", "gamma", "sigma", "r", "lam", "bias", "variance",
                                   "risk", "route"]
    for _, row in frame.iterrows():  # every row is the scalar limit at its parameters
        one = riskcalc.limit("rtfa", gamma=row.gamma, r=row.r, sigma=row.sigma, lam=row.lam)
        assert row.risk == pytest.approx(one.risk, rel=1e-12)
        assert row.bias == pytest.approx(one.bias, rel=1e-12)
    assert riskcalc.limit("ftfa", gamma=2.0, r=1.0, sigma=0.5).to_frame().shape == (1, 8)


def test_steps_limit_frame_and_spectrum_column():
    sp = riskcalc.Spectrum([1.0, 4.0], [0.5, 0.5])
    frame = riskcalc.steps_limit("ftfa", gamma=2.0, r=1.0, sigma=0.5, steps=[1, 20],
                                 step_size=0.1, spectrum=sp).to_frame()
    assert list(frame.steps) == [1, 20] and frame.spectrum.nunique() == 1


def test_comparison_and_sweep_frames():
    cmp = compare(riskcalc.ClientSpec("ftfa", gamma=2.0, r=1.0, sigma=0.5), Setting(d=100),
                  reps=3)
    frame = cmp.to_frame()
    assert list(frame.index) == ["bias", "variance", "risk"]
    assert frame.loc["risk", "predicted"] == 0.75
    assert frame.loc["risk", "simulated"] == cmp.summary["risk"]["mean"]
    rows = sweep("rtfa", gamma=[2.0], r=[1.0], sigma=[0.5], lam=[0.1, 1.0],
                 setting=Setting(d=100), reps=2)
    frame = rows.to_frame()
    assert frame.shape[0] == 2 and np.allclose(frame.lam, [0.1, 1.0])
    assert list(frame.columns) == list(rows[0])


def test_missing_pandas_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas now raises ImportError
    with pytest.raises(ImportError, match=r"fedrisk\[frames\]"):
        riskcalc.limit("ftfa", gamma=2.0, r=1.0, sigma=0.5).to_frame()
