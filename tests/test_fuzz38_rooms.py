"""Issue 32, fuzz38 (rooms): what this fuzz found, each test failing before."""

import pickle

import numpy as np

import riskcalc


def test_a_rounds_limit_pickles_and_its_lazy_parts_answer_after():
    # F1 (session 37's leftover): RoundsLimit held closures (its own models and
    # personalizations, solved on first use): pickle.dumps raised "Can't pickle local object"
    # (a result sent between processes: joblib, dask). Now the lazy parts are solved again
    # after unpickling, to the same values.
    res = riskcalc.rounds_limit("pfedme", gamma=[0.5, 1.5], r=[1, 1], sigma=[0.5, 0.5],
                                signal=1.0, rounds=[1, 5], local_steps=np.inf, lam=1.0)
    back = pickle.loads(pickle.dumps(res))
    assert back == res
    np.testing.assert_array_equal(back.personalized_risk(lam=0.5),
                                  res.personalized_risk(lam=0.5))
    again = pickle.loads(pickle.dumps(back))     # after its lazy part ran
    np.testing.assert_array_equal(again.personalized_risk(lam=0.3),
                                  res.personalized_risk(lam=0.3))
