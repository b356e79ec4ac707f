"""What every subcommand shares: exit statuses, the usage error, the one ``module:attribute``
loader, ``--import``, ``--seed`` and ``--json FILE`` (``-`` for standard output).

Exit statuses, the same for every subcommand: 0 certified (or done and clean), 1 a violation
was found, 2 the target, the input or the command line could not be used. A usage problem is
reported in one sentence before any work starts (a JSON path that cannot be written, a module
that cannot be imported, a check id that names nothing).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import traceback
from collections.abc import Iterable
from typing import Any

from .._engine.errors import ConformanceError, did_you_mean

__all__ = [
    "OK", "VIOLATION", "UNUSABLE", "UsageError", "import_object", "import_modules", "add_json",
    "add_seed", "add_import", "json_target", "positive_int", "write_json",
]

OK, VIOLATION, UNUSABLE = 0, 1, 2


class UsageError(ConformanceError):
    """The target, an input or an option cannot be used (exit status 2)."""


def _importable_here() -> None:
    """Like ``python -m``: the current directory is importable."""
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())


def _not_found(exc: ImportError, module_name: str) -> bool:
    """The module (or a package on its path) itself was not found, as opposed to an import that
    the module's own code makes failing."""
    missing = getattr(exc, "name", None)
    parts = module_name.split(".")
    return isinstance(exc, ModuleNotFoundError) and missing in {".".join(parts[:i]) for i in range(1, len(parts) + 1)}


def _raised_at(exc: BaseException) -> str:
    """`` at FILE:LINE``: where the importing module's own code raised (the innermost frame
    outside importlib; a SyntaxError's own file and line)."""
    if isinstance(exc, SyntaxError) and exc.filename:
        return f" at {exc.filename}:{exc.lineno}"
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if "importlib" not in f.filename]
    return f" at {frames[-1].filename}:{frames[-1].lineno}" if frames else ""


def _import(module_name: str, what: str) -> Any:
    _importable_here()
    if module_name.endswith(".py") or "/" in module_name or os.sep in module_name:
        dotted = module_name.removesuffix(".py").replace(os.sep, ".").replace("/", ".").strip(".")
        raise UsageError(f"{what}: {module_name!r} is a file path, should be a dotted module path "
                         f"importable from the current directory (e.g. {dotted!r})")
    try:
        return importlib.import_module(module_name)
    except ImportError as exc:
        if _not_found(exc, module_name):
            raise UsageError(f"{what}: cannot import {module_name!r} ({exc}); run from the directory "
                             "that contains it, or install it") from None
        raise UsageError(f"{what}: importing {module_name!r} raised {type(exc).__name__}: {exc}"
                         f"{_raised_at(exc)}; the module was found, its own import failed") from None
    except Exception as exc:  # the module itself raised while being imported
        raise UsageError(f"{what}: importing {module_name!r} raised {type(exc).__name__}: {exc}"
                         f"{_raised_at(exc)}") from None


def import_object(spec: str, what: str) -> Any:
    """The object named by ``module:attribute`` (dots in the attribute walk attributes)."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise UsageError(f"{what} {spec!r} must be 'module:attribute' (e.g. mypkg.serializers:SUBJECT)")
    obj = _import(module_name, f"{what} {spec!r}")
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            names = [n for n in dir(obj) if not n.startswith("_")]
            raise UsageError(f"{what} {spec!r}: {module_name} has no attribute {attr!r}"
                             f"{did_you_mean(part, names)}") from None
    return obj


def import_modules(names: Iterable[str] | None) -> None:
    """``--import MODULE`` (repeatable): modules that define the user's snapshot classes (or
    anything else a savepoint needs), imported before the work starts."""
    for name in names or ():
        _import(name, f"--import {name}")


def positive_int(text: str) -> int:
    """argparse type of a whole number >= 1."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"{n} must be at least 1")
    return n


def add_json(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument("--json", metavar="FILE", help=f"write {what} as JSON to FILE ('-': standard output)")


def add_seed(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--seed", type=int, metavar="N", help="hypothesis seed (default: random, printed)")


def add_import(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--import", dest="imports", action="append", metavar="MODULE", default=[],
                        help="import MODULE first, e.g. the module defining your snapshot classes (repeatable)")


def json_target(path: str | None) -> str | None:
    """Check up front that ``--json FILE`` can be written (its folder exists and is
    writable; FILE is not a folder), so a long run does not fail at its very end."""
    if path is None or path == "-":
        return path
    folder = os.path.dirname(os.path.abspath(path)) or "."
    if os.path.isdir(path):
        raise UsageError(f"--json {path}: is a directory; give a file name")
    if not os.path.isdir(folder):
        raise UsageError(f"--json {path}: the folder {folder} does not exist; create it or give another path")
    if not os.access(folder, os.W_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
        raise UsageError(f"--json {path}: cannot write there (permission denied); give another path")
    return path


def write_json(data: Any, path: str | None) -> None:
    if path is None:
        return
    from .._engine.report import dump

    try:
        dump(data, path)
    except OSError as exc:
        raise UsageError(f"--json {path}: cannot write it ({exc.strerror or exc})") from None


def evolution_hint(text: str, option: str) -> str:
    """``text`` telling a CLI user to pass ``--schema-evolution`` (not to set ``option``)."""
    hinted = text.replace(f"set the config option '{option}' to True", "pass --schema-evolution")
    return hinted if hinted != text else f"{text}; pass --schema-evolution to allow it"
