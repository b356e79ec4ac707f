"""Every file under a savepoint path, as bytes: what tests and checks compare to prove a savepoint
was left untouched (a local directory or a URI, through ``locate``)."""

from __future__ import annotations

import os

from ._storage import locate

__all__ = ["file_tree"]


def file_tree(path: str | os.PathLike[str]) -> dict[str, bytes]:
    """Every file under ``path`` (relative name -> bytes), a local directory or a URI (see
    ``reference.savepoint.locate``): two calls compare equal exactly when nothing under
    ``path`` was added, removed or changed (e.g. a savepoint left untouched)."""
    where = locate(path)
    if where.remote:
        return {name: where.child(name).read_bytes() for name, _size, _mtime in where.files()}
    root = where.path
    found = {}
    for directory, _, files in os.walk(root):
        for name in files:
            file = os.path.join(directory, name)
            with open(file, "rb") as handle:
                found[os.path.relpath(file, root)] = handle.read()
    return found
