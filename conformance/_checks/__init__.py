"""The built-in check families, one module per family (``roundtrip``, ``snapshot``,
``versioning``, ``migration``, ``backends``, ``spark``, ``table``). Importing this package
registers the first five; the others are loaded on request (``ON_REQUEST``), which the registry
imports when a run needs them. ``_support`` holds what the checks assert with.
"""

from . import backends, migration, roundtrip, snapshot, versioning  # noqa: F401

#: The families imported only on request: family -> the module that registers its checks (and
#: declares its scheduling, ``registry.declare_family``). The spark family needs a Spark
#: master; the table family certifies table subjects.
ON_REQUEST = {"spark": "conformance._checks.spark", "table": "conformance._checks.table"}
