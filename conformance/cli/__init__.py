"""The ``conformance`` command: ``certify``, ``certify-table``, ``migrate``, ``verify`` and the
``savepoint`` group (``inspect``, ``export``, ``check``; ``_savepoint`` says how a subcommand
joins it).

Every subcommand behaves alike: the same exit statuses (0 certified or clean, 1 a violation
was found, 2 the target, the input or the command line could not be used; 141, as a command
killed by SIGPIPE, when standard output was closed before the end), the same options
spelled the same way (``--json FILE`` with ``-`` for standard output, ``--seed N``,
``--import MODULE``), the current directory importable, and a usage problem reported in one
sentence before any work starts. Subcommands parse their arguments and call library
functions (``conformance.certify``, ``conformance.spark``) that take plain parameters.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from . import _certify, _savepoint, _spark
from ._certify import load_serializer, load_table_subject, load_target
from ._common import OK, UNUSABLE, VIOLATION, UsageError, positive_int

#: The exit status when standard output was closed before the end (128 + SIGPIPE, as a shell
#: reports a command that signal stopped).
BROKEN_PIPE = 141

__all__ = ["main", "build_parser", "load_target", "load_serializer", "load_table_subject", "UsageError",
           "OK", "VIOLATION", "UNUSABLE", "positive_int"]


def version_line() -> str:
    """``conformance 0.1.0 (Python 3.11.7; hypothesis 6.100.0, ...)``: the versions a
    certificate records (``library_versions``), in one line."""
    from .._engine.runner import library_versions

    versions = library_versions()
    own = versions.pop("state-conformance", "(state-conformance not installed: run from a checkout)")
    python = versions.pop("python")
    libraries = ", ".join(f"{name} {version}" for name, version in versions.items())
    return f"conformance {own} (Python {python}; {libraries})"


class _VersionAction(argparse.Action):
    """``--version``: the line is computed only when asked (it reads installed metadata)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: object) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=str(kwargs.get("help")))

    def __call__(self, parser: argparse.ArgumentParser, namespace: object, values: object,
                 option_string: str | None = None) -> None:
        print(version_line())
        parser.exit(0)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="conformance",
        description="Certify state serializers and tables against Flink's serializer, snapshot and "
                    "migration semantics (and Samza's partial-update tables); migrate and verify "
                    "savepoints on Spark.",
    )
    parser.add_argument("--version", action=_VersionAction,
                        help="print this package's version, Python's and the key libraries' in one line, and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    _certify.add_parsers(sub)
    _spark.add_parsers(sub)
    _savepoint.add_parsers(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse: 2 for bad usage, 0 for --help
        return int(exc.code or 0)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return UNUSABLE
    try:
        return int(args.func(args))
    except UsageError as exc:
        print(f"conformance {args.command}: error: {exc}", file=sys.stderr)
        return UNUSABLE
    except BrokenPipeError:
        # The reader of standard output went away (``conformance ... | head``): stop quietly, as
        # a command killed by SIGPIPE does, without a traceback on the way out.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return BROKEN_PIPE


if __name__ == "__main__":
    sys.exit(main())
