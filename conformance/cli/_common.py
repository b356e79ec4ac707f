"""What every subcommand shares: exit statuses, the usage error, the one ``module:attribute``
loader, ``--import``, ``--seed``, ``--json FILE`` (``-`` for standard output) and
``--old-row-type`` (``conformance savepoint check`` and ``conformance migrate`` of a Flink
savepoint: the old job's row type of a flink-core Row state, whose Flink snapshot keeps no field
names), given as ``UID/STATE=NAME[:TYPE],NAME[:TYPE],...`` (the operator uid up to the first
``/``; field names in the row's order; TYPE one of ``OLD_ROW_FIELD_TYPES``, all or none given:
without types the savepoint's field types are taken) or as ``MODULE:ATTR`` naming ``{operator
uid: {state name: RowSerializer, reference.types.RowType or [field names]}}``; repeatable.

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
    "add_seed", "add_import", "json_target", "positive_int", "write_json", "add_old_row_type",
    "load_old_row_types", "OLD_ROW_FIELD_TYPES", "failed_status",
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
    outside importlib and this project's packages, which a module's ``Subject(...)`` calls into;
    else the innermost outside importlib; a SyntaxError's own file and line)."""
    from .._engine.runner import is_library_file

    if isinstance(exc, SyntaxError) and exc.filename:
        return f" at {exc.filename}:{exc.lineno}"
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if "importlib" not in f.filename]
    own = [f for f in frames if not is_library_file(f.filename)]
    frames = own or frames
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


#: ``--old-row-type`` field types: the name a user types -> the reference serializer's name.
OLD_ROW_FIELD_TYPES = {
    "string": "StringSerializer", "long": "LongSerializer", "int": "IntSerializer", "short": "ShortSerializer",
    "byte": "ByteSerializer", "boolean": "BooleanSerializer", "double": "DoubleSerializer",
    "float": "FloatSerializer", "bytes": "BytesSerializer",
}


def savepoint_format(path: str) -> str:
    """``"flink"`` or ``"state-conformance"`` for the savepoint at ``path``, told apart by its
    files (``reference.savepoint.savepoint_kind``). A path that holds neither (a parent folder,
    an empty or missing one, a file other than Flink's ``_metadata``) or that the store refuses
    is a ``UsageError`` saying so and to give the savepoint's directory, before anything else is
    judged."""
    from reference import StateError
    from reference.savepoint import SavepointFormatError, savepoint_kind

    try:
        return savepoint_kind(path)
    except SavepointFormatError as exc:
        raise UsageError(f"SAVEPOINT {exc}") from None
    except StateError as exc:  # the store's own error (a file given, a store refusing access)
        raise UsageError(f"SAVEPOINT {path}: {exc}; give the savepoint's directory") from None
    except (OSError, ValueError):
        return "state-conformance"


def add_operator_uid(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--operator-uid", action="append", default=[], metavar="OLD=NEW",
        help="Flink savepoints: the operator OLD (its uid, or its 32-hex-digit id) is the new job's operator "
             "NEW (a uid, or an id for an operator without one), e.g. when the SQL planner numbered its "
             "uids anew (migrate moves its state there); --serializers then names it NEW; repeatable")


def load_operator_uids(values: list[str]) -> dict[str, str]:
    """``{old: new}`` from the ``--operator-uid OLD=NEW`` values."""
    out: dict[str, str] = {}
    for text in values:
        old, eq, new = text.partition("=")
        if not old or not eq or not new:
            raise UsageError(f"--operator-uid {text!r} must be OLD=NEW (the savepoint's operator uid or 32-hex-digit "
                             "id, the new job's uid or id), e.g. --operator-uid 4_deduplicate=10_deduplicate")
        if old in out:
            raise UsageError(f"--operator-uid: operator {old!r} is given twice")
        out[old] = new
    return out


def add_old_row_type(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--old-row-type", action="append", default=[], metavar="UID/STATE=NAME[:TYPE],...|MODULE:ATTR",
        help="Flink savepoints: the old job's field names of a flink-core Row state (Flink's row "
             "snapshot keeps none, so they are f0..fN otherwise), for the FLIP-527 rules by name, e.g. "
             "enrich/totals=id,amount or enrich/totals=id:string,amount:double (types: "
             f"{', '.join(OLD_ROW_FIELD_TYPES)}); or MODULE:ATTR naming {{uid: {{state: RowSerializer, "
             "RowType or [names]}}}; repeatable")


def _inline_old_row(text: str) -> tuple[str, str, Any]:
    from reference import serializers

    target, _, fields = text.partition("=")
    uid, slash, state = target.partition("/")
    if not uid or not slash or not state or not fields:
        raise UsageError(f"--old-row-type {text!r} must be UID/STATE=NAME[:TYPE],... (e.g. "
                         "enrich/totals=id:string,amount:double) or MODULE:ATTR")
    parts = [f.strip() for f in fields.split(",")]
    typed = [":" in p for p in parts]
    if any(typed) and not all(typed):
        raise UsageError(f"--old-row-type {text!r}: give a type for every field or for none")
    names = [p.partition(":")[0] for p in parts]
    if any(not n for n in names) or len(set(names)) != len(names):
        raise UsageError(f"--old-row-type {text!r}: field names must be non-empty and distinct, got {names}")
    if not any(typed):
        return uid, state, names
    fields_out = []
    for part in parts:
        name, _, type_name = part.partition(":")
        serializer = OLD_ROW_FIELD_TYPES.get(type_name.strip().lower())
        if serializer is None:
            raise UsageError(f"--old-row-type {text!r}: field {name!r} has type {type_name!r}; the types are "
                             f"{', '.join(OLD_ROW_FIELD_TYPES)} (use MODULE:ATTR for any other row type)")
        fields_out.append((name, getattr(serializers, serializer)(), True))
    return uid, state, serializers.RowSerializer(fields_out)


def load_old_row_types(values: Iterable[str] | None) -> dict[str, dict[str, Any]] | None:
    """``{operator uid: {state name: old row type}}`` from the ``--old-row-type`` values (see the
    module docstring); None when none was given."""
    from collections.abc import Mapping

    values = list(values or ())
    if not values:
        return None
    out: dict[str, dict[str, Any]] = {}
    for text in values:
        if "=" in text:
            uid, state, row = _inline_old_row(text)
            found: Any = {uid: {state: row}}
        else:
            found = import_object(text, "--old-row-type")
            if callable(found) and not isinstance(found, type):
                found = found()
            if not isinstance(found, Mapping) or not all(isinstance(v, Mapping) for v in found.values()):
                raise UsageError(f"--old-row-type {text}: should name {{operator uid: {{state name: row type}}}}, "
                                 f"got {type(found).__name__}")
        for uid, states in found.items():
            for state, row in states.items():
                if state in out.setdefault(str(uid), {}):
                    raise UsageError(f"--old-row-type: operator {uid!r}, state {state!r} is given twice")
                out[str(uid)][state] = row
    return out


def failed_status(exc: Exception) -> int:
    """The exit status of an error a migration or a Spark job raised: 1 for a refusal or a
    failed job, 2 for unusable input or a Spark that cannot start."""
    from reference import SnapshotFormatError, StateMigrationError
    from reference.savepoint import SavepointFormatError

    from ..spark import SerializerShippingError, SparkJobError, SparkSessionError

    if isinstance(exc, (SavepointFormatError, SnapshotFormatError, SparkSessionError)):
        return UNUSABLE
    if isinstance(exc, (StateMigrationError, SparkJobError, SerializerShippingError)):
        return VIOLATION
    return UNUSABLE
