"""Cross-check with Avro Java itself (avro-1.12 jar, as shipped with pyspark, and a JDK).

``tests/data/avro_corpus/java/AvroCompatCheck.java`` is compiled at test time and runs Java's
``SchemaCompatibility`` and resolving reader over every corpus pair and over generated
evolutions. Checked: Java's verdict (Java's rules alone, without the project's full-name rule),
its incompatibility kinds and locations (Java reports a named type used twice at its first
location, so those pairs compare kinds only), and, for compatible pairs, that the bytes our
``migrate_state`` writes equal what Java writes after reading the old bytes (maps compared as
dicts: Java reads them into a HashMap), except where a pair documents ``java_bytes``.
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

from reference import DataInputView, DataOutputView
from reference.serializers import AvroSerializer
from reference.serializers._avro_compat import check_compatibility
from strategies import _avro

from test_avro_corpus import PAIRS, _java_verdict, decode  # beside this file (pytest puts it on sys.path)

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
    java_bytes, our_bytes = bytes.fromhex(java[2]), _migrated(writer, reader, data)
    new = AvroSerializer(reader)
    if bytes_differ:
        assert our_bytes != java_bytes, f"got the same bytes as Java, should differ as the pair notes; drop the note [{key}]"
    elif our_bytes != java_bytes:
        ours_value, java_value = new.from_bytes(our_bytes), new.from_bytes(java_bytes)
        assert _unordered(ours_value) == _unordered(java_value) and "map" in json.dumps(new.schema), (
            f"got {our_bytes.hex()} ({ours_value!r}), should be Java's {java[2]} ({java_value!r}) [{key}]"
        )


def test_corpus_agrees_with_avro_java(run_java: Any) -> None:
    pairs = []
    for group, pair in PAIRS:
        data = AvroSerializer(pair["writer"]).to_bytes(decode(pair["datum"])) if "datum" in pair else None
        pairs.append((f"{group}/{pair['id']}", pair["writer"], pair["reader"], data))
    java = run_java(pairs)
    for (key, writer, reader, data), (_, pair) in zip(pairs, PAIRS):
        _compare(
            key, writer, reader, data, java[key], expected=_java_verdict(pair),
            locations="memoizes" not in pair.get("note", ""), bytes_differ="java_bytes" in pair,
        )


def _generated(count: int) -> list[tuple[Any, Any, Any]]:
    """``count`` generated evolutions (old schema, new schema, an old value), reproducibly."""
    found: list[tuple[Any, Any, Any]] = []

    @st.composite
    def evolution(draw: Any) -> tuple[Any, Any, Any]:
        old = _avro._avro_type(draw(_avro.raw_avro_schemas(depth=2), label="schema"))
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
