"""Files on disk as the checks compare them."""

from __future__ import annotations

import os

__all__ = ["file_tree"]


def file_tree(path: str | os.PathLike[str]) -> dict[str, bytes]:
    """Every file under ``path`` (relative name -> bytes): two calls compare equal exactly when
    nothing under ``path`` was added, removed or changed (e.g. a savepoint left untouched)."""
    root = os.fspath(path)
    found = {}
    for directory, _, files in os.walk(root):
        for name in files:
            file = os.path.join(directory, name)
            with open(file, "rb") as handle:
                found[os.path.relpath(file, root)] = handle.read()
    return found
