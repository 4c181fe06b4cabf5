"""Exceptions raised by the theory layer."""


class SolverError(RuntimeError):
    """A fixed point or root of an implicit equation could not be found to tolerance.

    Raised instead of returning an unconverged value: the equations of ``riskcalc`` have unique
    roots inside known brackets, so a failure means the inputs are beyond floating point reach.
    """
