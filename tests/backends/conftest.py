"""Fixtures shared by the backend tests: savepoints on tmpfs, and the three backend kinds."""

from backend_support import backend_kind, tmp_path  # noqa: F401  (fixtures, registered by import)
