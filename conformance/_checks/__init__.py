"""The built-in check families, one module per family (``roundtrip``, ``snapshot``,
``versioning``, ``migration``, ``backends``; ``spark`` and ``table`` are loaded on request);
importing this package registers the first five. ``_support`` holds what the checks assert with.
"""

from . import backends, migration, roundtrip, snapshot, versioning  # noqa: F401
