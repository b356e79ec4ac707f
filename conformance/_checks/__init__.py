"""The built-in check families; importing this package registers them."""

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
