"""Cross-check with Avro Java itself (avro-1.12 jar, as shipped with pyspark, and a JDK).

``tests/data/avro_corpus/java/AvroCompatCheck.java`` is compiled at test time and runs Java's
``SchemaCompatibility`` and resolving reader over every corpus pair and over generated
evolutions. Checked: Java's verdict (Java's rules alone, without the project's full-name rule),
its incompatibility kinds and locations (Java reports a named type used twice at its first
location, so those pairs compare kinds only), and, for compatible pairs, that the bytes our
``migrate_state`` writes equal what Java writes after reading the old bytes (maps compared as
dicts: Java reads them into a HashMap), except where a pair documents ``java_bytes``, and bytes
promoted to a string that are not UTF-8: Java keeps them raw, the reference writes what Java's
``Utf8.toString()`` shows for them (U+FFFD; ``reference/serializers/_avro.py``'s one deliberate
difference), so Java's bytes are compared as they show.
"""

from __future__ import annotations

import glob
import importlib.util
import json
import os
import shutil
import struct
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st
from test_avro_corpus import PAIRS, _java_verdict, decode  # beside this file (pytest puts it on sys.path)

import strategies.avro as _avro
from reference import DataInputView, DataOutputView, SerializationError
from reference.serializers import AvroSerializer as _AvroSerializer
from reference.serializers._avro_compat import check_compatibility


def AvroSerializer(schema: Any) -> _AvroSerializer:  # noqa: N802 - Avro Java reads Avro's binary encoding
    return _AvroSerializer(schema, encoding="binary")


pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("avro-java")]

SOURCE = Path(__file__).resolve().parent.parent / "data" / "avro_corpus" / "java" / "AvroCompatCheck.java"
JARS = ("avro-1.*.jar", "jackson-core-*.jar", "jackson-databind-*.jar", "jackson-annotations-*.jar", "slf4j-api-*.jar")


def _classpath() -> str | None:
    override = os.environ.get("AVRO_JAVA_CLASSPATH")
    if override:
        return override
    spec = importlib.util.find_spec("pyspark")  # locates the jars without importing pyspark
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        found = [sorted(glob.glob(os.path.join(location, "jars", pattern))) for pattern in JARS]
        if all(found):
            return os.pathsep.join(jars[-1] for jars in found)
    return None


@pytest.fixture(scope="module")
def run_java(tmp_path_factory: pytest.TempPathFactory) -> Any:
    classpath = _classpath()
    if classpath is None:
        pytest.skip("Avro Java cross-check skipped: no avro jar (pyspark's jars or AVRO_JAVA_CLASSPATH)")
    javac, java = shutil.which("javac"), shutil.which("java")
    if javac is None or java is None:
        pytest.skip("Avro Java cross-check skipped: needs a JDK (javac and java on PATH)")
    build = tmp_path_factory.mktemp("avro-java")
    subprocess.run([javac, "-d", str(build), "-cp", classpath, str(SOURCE)], check=True, capture_output=True)

    def run(pairs: list[tuple[str, Any, Any, bytes | None]]) -> dict[str, list[str]]:
        listing = build / "pairs.tsv"
        listing.write_text(
            "".join(
                f"{key}\t{json.dumps(writer)}\t{json.dumps(reader)}\t{data.hex() if data is not None else ''}\n"
                for key, writer, reader, data in pairs
            ),
            encoding="utf-8",
        )
        done = subprocess.run(
            [java, "-cp", os.pathsep.join([str(build), classpath]), "AvroCompatCheck", str(listing)],
            check=True, capture_output=True, text=True, timeout=300,
        )
        return {line.split("\t")[0]: line.split("\t")[1:] for line in done.stdout.splitlines()}

    return run


def _migrated(writer: Any, reader: Any, data: bytes) -> bytes:
    old, new = AvroSerializer(writer), AvroSerializer(reader)
    target = DataOutputView()
    new.snapshot_configuration().migrate_state(old, new, DataInputView(data), target)
    return target.getvalue()


def _unordered(value: Any) -> Any:
    """Exact (floats by bits) with dict entries sorted: map order is not part of the value."""
    if isinstance(value, float):
        return ("float", struct.pack(">d", value))
    if isinstance(value, dict):
        return ("dict", tuple(sorted((k, _unordered(v)) for k, v in value.items())))
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(_unordered(v) for v in value))
    return (type(value).__name__, value)


def _strings_as_bytes(schema: Any) -> Any:
    """``schema`` with every string as bytes: what reads a string that may not be UTF-8."""
    if schema == "string" or (isinstance(schema, dict) and schema.get("type") == "string"):
        return "bytes"
    if isinstance(schema, list):
        return [_strings_as_bytes(branch) for branch in schema]
    if isinstance(schema, dict):
        return {k: ([{**f, "type": _strings_as_bytes(f["type"])} for f in v] if k == "fields"
                    else _strings_as_bytes(v) if k in ("items", "values", "type") else v)
                for k, v in schema.items()}
    return schema


def _as_java_shows(reader: Any, java_bytes: bytes) -> bytes:
    """Java's record of ``reader`` as the reference writes what Java's strings show: read with
    its strings as bytes, promoted back to strings (malformed UTF-8 as U+FFFD)."""
    return _migrated(_strings_as_bytes(reader), reader, java_bytes)


def _compare(key: str, writer: Any, reader: Any, data: bytes | None, java: list[str], *, expected: str | None,
             locations: bool, bytes_differ: bool) -> None:
    if java[0].startswith("ERROR"):
        assert expected == "error", f"got Java's {java[0]}, should be {expected} [{key}]"
        return
    verdict = java[0].lower()
    ours = check_compatibility(reader, writer, full_names=False)
    assert verdict == ("incompatible" if ours else "compatible"), f"got ours {ours}, should be Java's {verdict} [{key}]"
    if expected is not None:
        assert verdict == expected, f"got Java's {verdict}, should be the corpus' {expected} [{key}]"
    theirs = sorted(tuple(item.split("@", 1)) for item in java[1].split("|") if item)
    mine = sorted((i.kind.upper(), i.location) for i in ours)
    if locations:
        assert mine == theirs, f"got {mine}, should be Java's {theirs} [{key}]"
    else:
        assert {k for k, _ in mine} == {k for k, _ in theirs}, f"got kinds {mine}, should be Java's {theirs} [{key}]"
    if data is None or java[2] == "-":
        return
    if check_compatibility(reader, writer):
        # Only the project's full-name rule refuses it (module docstring of _avro_compat): the
        # reference migrates no data Java would read.
        assert all(i.kind in ("name_mismatch", "missing_union_branch") for i in check_compatibility(reader, writer)), (
            f"got {check_compatibility(reader, writer)}, should be only the project's full-name rule [{key}]")
        return
    java_bytes, our_bytes = bytes.fromhex(java[2]), _migrated(writer, reader, data)
    new = AvroSerializer(reader)
    if bytes_differ:
        assert our_bytes != java_bytes, f"got the same bytes as Java, should differ as the pair notes; drop the note [{key}]"
    elif our_bytes != java_bytes:
        try:
            java_value = new.from_bytes(java_bytes)
        except SerializationError as exc:
            if "not UTF-8" not in str(exc) and "UnicodeDecodeError" not in str(exc):
                raise
            shown = _as_java_shows(reader, java_bytes)
            assert our_bytes == shown, f"got {our_bytes.hex()}, should be Java's {java[2]} as it shows ({shown.hex()}) [{key}]"
            return
        ours_value = new.from_bytes(our_bytes)
        assert _unordered(ours_value) == _unordered(java_value) and "map" in json.dumps(new.schema), (
            f"got {our_bytes.hex()} ({ours_value!r}), should be Java's {java[2]} ({java_value!r}) [{key}]"
        )


def test_corpus_agrees_with_avro_java(run_java: Any) -> None:
    pairs = []
    for group, pair in PAIRS:
        data = AvroSerializer(pair["writer"]).to_bytes(decode(pair["datum"])) if "datum" in pair else None
        pairs.append((f"{group}/{pair['id']}", pair["writer"], pair["reader"], data))
    java = run_java(pairs)
    for (key, writer, reader, data), (_, pair) in zip(pairs, PAIRS, strict=True):
        _compare(
            key, writer, reader, data, java[key], expected=_java_verdict(pair),
            locations="memoizes" not in pair.get("note", ""), bytes_differ="java_bytes" in pair,
        )


def _generated(count: int) -> list[tuple[Any, Any, Any]]:
    """``count`` generated evolutions (old schema, new schema, an old value), reproducibly."""
    found: list[tuple[Any, Any, Any]] = []

    @st.composite
    def evolution(draw: Any) -> tuple[Any, Any, Any]:
        old = _avro.avro_type_of(draw(_avro.raw_avro_schemas(depth=2), label="schema"))
        label = draw(st.sampled_from(_avro.change_labels(old)), label="change")
        new, _, _ = _avro.apply_change(draw, old, label)
        return old.schema, new.schema, draw(_avro.avro_values(old), label="value")

    @seed(20261121)
    @settings(max_examples=count, database=None, phases=[Phase.generate], deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(evolution())
    def collect(item: tuple[Any, Any, Any]) -> None:
        found.append(item)

    collect()
    return found


def test_generated_evolutions_agree_with_avro_java(run_java: Any) -> None:
    pairs = []
    for i, (old, new, value) in enumerate(_generated(300)):
        data = AvroSerializer(old).to_bytes(value)
        pairs += [(f"forward/{i}", old, new, data), (f"backward/{i}", new, old, None)]
    java = run_java(pairs)
    for key, writer, reader, data in pairs:
        _compare(key, writer, reader, data, java[key], expected=None, locations=True, bytes_differ=False)


# -- random pairs over a small vocabulary: names, namespaces and aliases that collide -----------
_NAMES = ("R", "S")
_NAMESPACES = (None, "a", "b")
_ALIASES = ("R", "S", "a.R", "b.S", "T")
_FIELDS = ("x", "y", "z")
_DEFAULTS = {"int": 1, "long": 2, "string": "s", "boolean": True, "double": 0.5, "null": None, "bytes": "\u00ff"}


@st.composite
def _vocabulary_schema(draw: Any, depth: int, used: set[str], enclosing: tuple[str, ...] = ()) -> Any:
    kinds = ["primitive", "enum", "fixed"] + (["record", "array", "map", "union"] if depth > 0 else [])
    if enclosing:
        kinds.append("recursion")
    kind = draw(st.sampled_from(kinds))
    if kind == "primitive":
        return draw(st.sampled_from(("int", "long", "float", "double", "string", "bytes", "boolean", "null")))
    if kind == "recursion":  # a reference to an enclosing record, optional so values are finite
        return ["null", draw(st.sampled_from(enclosing))]
    if kind in ("array", "map"):
        inner = draw(_vocabulary_schema(depth - 1, used, enclosing))
        return {"type": "array", "items": inner} if kind == "array" else {"type": "map", "values": inner}
    if kind == "union":
        branches: list[Any] = ["null"] if draw(st.booleans()) else []
        for option in draw(st.lists(st.sampled_from(("int", "long", "double", "string", "bytes", "named")), max_size=3, unique=True)):
            branches.append(draw(_vocabulary_schema(0, used, enclosing)) if option == "named" else option)
        seen: list[Any] = []
        for branch in branches:  # unions need distinct types: keep the first of each
            key = json.dumps(branch) if isinstance(branch, dict) else branch
            if isinstance(branch, list):
                continue
            if key not in [json.dumps(b) if isinstance(b, dict) else b for b in seen]:
                seen.append(branch)
        return seen or ["null"]
    name = draw(st.sampled_from(_NAMES + ("E", "F")))
    namespace = draw(st.sampled_from(_NAMESPACES))
    full = f"{namespace}.{name}" if namespace else name
    if full in used:
        return "int"  # names are unique within a schema
    used.add(full)
    out: dict[str, Any] = {"type": kind, "name": name}
    if namespace:
        out["namespace"] = namespace
    if draw(st.booleans()):
        out["aliases"] = draw(st.lists(st.sampled_from(_ALIASES), max_size=2, unique=True))
    if kind == "enum":
        out["symbols"] = draw(st.lists(st.sampled_from(("A", "B", "C")), min_size=1, unique=True))
        if draw(st.booleans()):
            out["default"] = draw(st.sampled_from(out["symbols"]))
        return out
    if kind == "fixed":
        out["size"] = draw(st.integers(1, 2))
        return out
    fields = []
    for field_name in draw(st.lists(st.sampled_from(_FIELDS), max_size=3, unique=True)):
        ftype = draw(_vocabulary_schema(depth - 1, used, (*enclosing, full)))
        field: dict[str, Any] = {"name": field_name, "type": ftype}
        if isinstance(ftype, str) and ftype in _DEFAULTS and draw(st.booleans()):
            field["default"] = _DEFAULTS[ftype]
        if draw(st.integers(0, 3)) == 0:
            field["aliases"] = draw(st.lists(st.sampled_from(_FIELDS), min_size=1, max_size=2, unique=True))
        fields.append(field)
    out["fields"] = fields
    return out


@st.composite
def _fresh_schema(draw: Any) -> Any:
    return draw(_vocabulary_schema(2, set()))  # a new name registry per schema


@st.composite
def _pair_with_value(draw: Any) -> tuple[Any, Any, Any]:
    writer, reader = draw(_fresh_schema()), draw(_fresh_schema())
    try:
        canonical = AvroSerializer(writer).schema
    except Exception:  # noqa: BLE001 - an unusable schema gets no value (and is checked below)
        return writer, reader, None
    return writer, reader, draw(_avro.schema_values(canonical))


def _random_pairs(count: int) -> list[tuple[Any, Any, Any]]:
    found: list[tuple[Any, Any, Any]] = []

    @seed(20261122)
    @settings(max_examples=count, database=None, phases=[Phase.generate], deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(_pair_with_value())
    def collect(pair: tuple[Any, Any, Any]) -> None:
        found.append(pair)

    collect()
    return found


def _java_refuses(key: str, writer: Any, reader: Any, error: str) -> None:
    """Java failed on the pair: an ambiguous field (Java's rules alone), or an enum or fixed
    read into a union with no branch of its full name (the project's rule, which Java's
    compatibility check lacks and its resolver applies to the data)."""
    java_rules = {i.kind for i in check_compatibility(reader, writer, full_names=False)}
    ours = [i for i in check_compatibility(reader, writer) if i.kind == "missing_union_branch" and "full name" in i.message]
    assert "ambiguous_field" in java_rules or ours, (
        f"got Java's {error}, should be an ambiguous field or a union without the writer's full name for us "
        f"[{key}: {writer} / {reader}]")


def test_enums_and_fixed_types_in_unions_match_by_full_name_as_avro_java_reads_them(run_java: Any) -> None:
    def named(kind: str, namespace: str | None, name: str = "E", aliases: tuple[str, ...] = ()) -> dict[str, Any]:
        shape = {"fixed": {"size": 2}, "enum": {"symbols": ["A", "B"]},
                 "record": {"fields": [{"name": "x", "type": "int"}]}}[kind]
        return {"type": kind, "name": name, **({"namespace": namespace} if namespace else {}), **shape,
                "aliases": list(aliases)}

    datum = {"fixed": b"\xc0\x80", "enum": b"\x02", "record": b"\x02"}
    cases = {}
    for kind in ("fixed", "enum", "record"):
        cases[f"{kind}/moved"] = (named(kind, None), named(kind, "a"), datum[kind])
        cases[f"{kind}/moved-in-union"] = (named(kind, None), ["null", named(kind, "a")], datum[kind])
        cases[f"{kind}/aliased-in-union"] = (named(kind, "b"), ["null", named(kind, "a", aliases=("b.E",))],
                                              datum[kind])
        cases[f"{kind}/kept-in-union"] = (named(kind, "a"), ["null", named(kind, "b", "F"), named(kind, "a")],
                                          datum[kind])
    pairs = [(key, writer, reader, data) for key, (writer, reader, data) in cases.items()]
    java = run_java(pairs)
    for key, writer, reader, data in pairs:
        answer = java[key]
        if answer[0].startswith("ERROR"):
            assert key.endswith("/moved-in-union") and not key.startswith("record"), (
                f"got Java's {answer[0]}, should read it [{key}]")
            _java_refuses(key, writer, reader, answer[0])
            verdict = AvroSerializer(reader).snapshot_configuration().resolve_schema_compatibility(
                AvroSerializer(writer).snapshot_configuration())
            assert verdict.is_incompatible(), f"got {verdict}, should be incompatible (Java fails on the data) [{key}]"
            continue
        if key.startswith("record/moved"):
            continue  # the project's full-name rule for records refuses what Java reads (documented)
        _compare(key, writer, reader, data, answer, expected=None, locations=True, bytes_differ=False)


def test_random_pairs_agree_with_avro_java(run_java: Any) -> None:
    pairs = []
    for i, (writer, reader, value) in enumerate(_random_pairs(600)):
        try:
            AvroSerializer(reader)
            data = AvroSerializer(writer).to_bytes(value)
        except Exception as exc:  # noqa: BLE001 - Java must refuse these too (checked below)
            if "is defined twice" in str(exc):
                # Deliberately stricter than Java: the Avro spec forbids redefining a name, but
                # Java's parser lets a second definition through when its Schema.equals deems
                # it equal (e.g. differing only in aliases or the enum default).
                continue
            pairs.append((f"unusable/{i}", writer, reader, None))
            continue
        pairs.append((f"pair/{i}", writer, reader, data))
        pairs.append((f"same/{i}", writer, writer, data))
    java = run_java(pairs)
    compatible = 0
    for key, writer, reader, data in pairs:
        answer = java[key]
        if key.startswith("unusable/"):
            # our parser refused one of them: Java must refuse it too
            assert answer[0].startswith("ERROR"), f"got Java's {answer}, should refuse a schema we refuse [{key}: {writer} / {reader}]"
            continue
        if answer[0].startswith("ERROR"):
            _java_refuses(key, writer, reader, answer[0])
            continue
        compatible += answer[0] == "COMPATIBLE" and key.startswith("pair/")
        _compare(key, writer, reader, data, answer, expected=None, locations=True, bytes_differ=False)
    assert compatible >= 50, f"got {compatible} compatible random (different) pairs, should be enough to test resolution"
