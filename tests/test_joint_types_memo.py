"""``joint_spectrum``'s memo of a list of SPEC strings (its keys and types remembered whole,
``riskcalc.linear.engine.joint_spectrum._types``): the types of a remembered list equal those
keyed one by one, the list is told apart from a reordered one, and a caller's change to the
returned types does not reach the next call."""

import numpy as np

from riskcalc.linear.engine import joint_spectrum as js


def test_remembered_types_equal_the_keyed_ones():
    specs = ["two-point:1,4,0.5", " Scaled:2", "two-point:4,1,0.5", "scaled:2"] * 3
    first = js.joint_spectrum(specs, 50)
    assert tuple(specs) in js._TYPES
    again = js.joint_spectrum(list(specs), 50)
    np.testing.assert_array_equal(first.types, [0, 1, 2, 1] * 3)
    np.testing.assert_array_equal(again.types, first.types)
    again.types[:] = 7                                  # the caller's copy only
    np.testing.assert_array_equal(js.joint_spectrum(specs, 50).types, [0, 1, 2, 1] * 3)
    other = js.joint_spectrum(specs[::-1], 50)          # another order: other types
    np.testing.assert_array_equal(other.types, [0, 1, 0, 2] * 3)
    # Each client's eigenvalues on the joint atoms (the atoms' order may differ).
    np.testing.assert_array_equal(np.sort(other.values[other.types], axis=1),
                                  np.sort(first.values[first.types][::-1], axis=1))
    # A list holding an eigenvalue array is keyed one by one (not remembered whole).
    mixed = js.joint_spectrum([[1.0, 4.0], "two-point:1,4,0.5"])
    np.testing.assert_array_equal(mixed.types, [0, 1])
