"""The built-in check families; importing this package registers them, except the families
loaded only on request (``ON_REQUEST``), which the registry imports when a run needs them."""

from . import (  # noqa: F401
    _api,
    _backends,
    _domain,
    _migration,
    _roundtrip,
    _sizes,
    _snapshot,
    _upgrade,
    _verdicts,
    _versioning,
)

#: The families imported only on request: family -> the module that registers its checks (and
#: declares its scheduling, ``registry.declare_family``). The spark family needs a Spark
#: master; the table family certifies table subjects.
ON_REQUEST = {"spark": "conformance._checks.spark", "table": "conformance._checks.table"}
