"""Every check family loaded before any test runs: the pytester tests run pytest sessions in
this process and restore ``sys.modules`` after each, so a module first imported inside one is
imported anew by the next, while the check registry (kept, with its record of the families it
loaded) holds the first copy's functions and classes: an enum member of one copy is not the
other's, and later tests in the process would see checks bound to modules no longer current."""

import reference.table  # noqa: F401
from conformance._engine.registry import load_families

load_families(spark=True, table=True)
