"""Exceptions raised by the theory layer."""


class SolverError(RuntimeError):
    """A fixed point or root of an implicit equation could not be found to tolerance.

    Raised instead of returning an unconverged value: the equations of ``riskcalc`` have unique
    roots inside known brackets, so a failure means the inputs are beyond floating point reach.
    """


class IntegrandOverflow(SolverError):
    """A spectral integral whose integrand leaves the floating point range (overflow, or a
    contour sum dominated by rounding). Past the stability edge of gradient descent this is a
    diverged value, which callers report as infinite; anywhere else it is a failure."""


class IllConditioned(SolverError):
    """The equations have their root, but at these inputs double precision cannot resolve it
    to the risks' accuracy (an ill-conditioned Jacobian): refused rather than answered with
    silently wrong digits. ``riskcalc.advise`` skips a pipeline refused this way, saying why."""


class Stop(BaseException):
    """Control flow, like KeyboardInterrupt: a deadline that stops the work in flight (the
    command line's ``OutOfTime``). No boundary that turns failures into errors (the plugin
    boundary, ``riskcalc.plugins.guard``) may take it for a failure of the code it stopped."""
