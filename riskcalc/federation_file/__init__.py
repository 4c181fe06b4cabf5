"""The federation file (DESIGN.md, "Contracts added in the fourth round"): one reader for
every verb and for ``riskcalc.Federation.from_file``.

Modules: ``reader`` (the format, ``read``, ``from_object``, ``FederationFile``; the format's
description in its docstring), ``checks`` (the checks of each value). The JSON layer under
them is ``riskcalc.json_strict``. The public names are imported here:
``riskcalc.federation_file.read`` as before the package.
"""

from riskcalc.federation_file.reader import (MAX_BYTES, VERSION, FederationFile,
                                             default_spectrum_used, from_object, read)

__all__ = ["MAX_BYTES", "VERSION", "FederationFile", "default_spectrum_used", "from_object",
           "read"]
