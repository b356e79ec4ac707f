"""Three traps a new author fell into, each closed:

1. ``is_immutable_type`` and ``length`` are read-only properties of ``reference.TypeSerializer``;
   one written as a plain method fails ``roundtrip.api_valid`` with one sentence saying so and
   how to fix it (``@property``), and the checks it blocks are summarised.
2. Skips read as one line per reason (``skipped N: reason``) by default, in the CLI and the
   pytest plugin's summary; ``-v`` lists them one per line. The certificate keeps every check.
3. A run whose selected checks were all skipped certifies nothing, so it is not certified
   (``Report.certified``), unless ``RunConfig(allow_all_skipped=True)`` /
   ``--allow-all-skipped`` says so.
"""

from __future__ import annotations

import json
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import strategies as st

from conformance import RunConfig, RunConfigError, Subject, check_serializer
from conformance._engine.render import render_report
from conformance.cli import main
from reference import types as t
from reference.serializers import ListSerializer, LongSerializer

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[2]
LONGS = st.integers(-(2**63), 2**63 - 1)
FAST = ["--examples", "5", "--seed", "7", "--backend", "heap"]

TARGETS = textwrap.dedent('''
    from hypothesis import strategies as st
    from conformance import Subject
    from reference.serializers import LongSerializer

    LONGS = st.integers(-2**63, 2**63 - 1)


    class ImmutableAsMethod(LongSerializer):
        def is_immutable_type(self):
            return True


    PLAIN = Subject(LongSerializer(), LONGS)
    METHOD = Subject(ImmutableAsMethod(), LONGS)
''')


class ImmutableAsMethod(LongSerializer):
    def is_immutable_type(self):  # the trap: a method where TypeSerializer has a property
        return True


class LengthAsMethod(LongSerializer):
    def length(self):
        return 8


class BothAsMethods(LongSerializer):
    def is_immutable_type(self):
        return True

    def length(self):
        return 8


class ImmutableAsProperty(LongSerializer):
    @property
    def is_immutable_type(self) -> bool:
        return True


@pytest.fixture
def targets(tmp_path, monkeypatch):
    (tmp_path / "trap_targets.py").write_text(TARGETS)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("trap_targets", None)
    yield tmp_path
    sys.modules.pop("trap_targets", None)


def _api_valid(serializer):
    report = check_serializer(Subject(serializer, LONGS),
                              RunConfig(examples=5, seed=7, backends=("heap",), checks=("roundtrip.api_valid",)))
    return report["roundtrip.api_valid"]


# -- 1. a property written as a method -------------------------------------------------------

@pytest.mark.parametrize(("serializer", "names"), [
    (ImmutableAsMethod(), ["is_immutable_type"]),
    (LengthAsMethod(), ["length"]),
    (BothAsMethods(), ["is_immutable_type", "length"]),
])
def test_a_property_written_as_a_method_fails_api_valid_in_one_sentence_naming_the_fix(serializer, names):
    result = _api_valid(serializer)
    assert result.status == "failed", f"got {result.status}, should fail roundtrip.api_valid"
    message = result.message
    for name in names:
        assert name in message, f"got {message!r}, should name {name}"
    assert "@property" in message and "method" in message, (
        f"got {message!r}, should say it is a method and that @property fixes it")
    assert "\n" not in message and message.count(". ") == 0, f"got {message!r}, should be one sentence"
    assert type(serializer).__name__ in message, f"got {message!r}, should name the class that defines it"
    harness = [frame for frame in result.trace if "conformance" + "/" in frame.replace("\\", "/")]
    assert not harness, f"got trace {result.trace}, should show no frame of the harness for its own finding"


class _MutableLongs(LongSerializer):
    """Longs said to be mutable: true of no long, but safe (copy() then copies)."""

    @property
    def is_immutable_type(self) -> bool:
        return False


class _ImmutableLists(ListSerializer):
    """Lists said to be immutable: copy() then hands out the very list the state holds."""

    @property
    def is_immutable_type(self) -> bool:
        return True


@pytest.mark.parametrize(("serializer", "schema", "status"), [
    (_MutableLongs(), t.LongType(), "passed"),
    (LongSerializer(), t.LongType(), "passed"),
    (_ImmutableLists(LongSerializer()), t.ListType(t.LongType()), "failed"),
    (ListSerializer(LongSerializer()), t.ListType(t.LongType()), "passed"),
], ids=["yours, conservative", "the reference's", "yours, lists said immutable", "the reference's list"])
def test_is_immutable_type_is_held_to_the_schema(serializer, schema, status):
    values = st.lists(LONGS) if isinstance(schema, t.ListType) else LONGS
    report = check_serializer(Subject(serializer, values, schema=schema),
                              RunConfig(examples=5, seed=7, backends=("heap",), checks=("roundtrip.api_valid",)))
    result = report["roundtrip.api_valid"]
    assert result.status == status, f"got {result.status} ({result.message}), should be {status}"
    if status == "failed":
        assert "is_immutable_type is True, should be False" in result.message, f"got {result.message!r}"


def test_a_property_override_still_passes_api_valid():
    result = _api_valid(ImmutableAsProperty())
    assert result.status == "passed", f"got {result.status}: {result.message}, should pass with @property"


def test_the_checks_a_method_property_blocks_are_summarised_in_one_line(targets, capsys):
    out_json = targets / "method.json"
    assert main(["certify", "trap_targets:METHOD", *FAST, "--json", str(out_json)]) == 1
    out = capsys.readouterr().out
    checks = json.loads(out_json.read_text())["checks"]
    blocked = [c for c in checks if c["status"] == "skipped"]
    assert len(blocked) > 20 and all(c["message"] == "prerequisite roundtrip.api_valid did not pass"
                                     for c in blocked), f"got {blocked[:3]}..., should all be blocked by api_valid"
    assert f"  skipped {len(blocked)}: prerequisite roundtrip.api_valid did not pass" in out, f"got:\n{out}"
    assert "skipped roundtrip.bit_exact" not in out, f"got:\n{out}\nshould not list each blocked check"
    lines = out.strip().splitlines()
    assert len(lines) <= 5, f"got {len(lines)} lines:\n{out}\nshould be the verdict, the failure, one skip line, the seed"
    assert sum("@property" in line for line in lines) == 1, f"got:\n{out}\nshould say @property once"


# -- 2. skips summarised ---------------------------------------------------------------------

@dataclass
class _Result:
    id: str
    family: str
    status: str
    message: str = ""
    example: str | None = None
    expected_failure: str | None = None
    trace: list[str] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return self.status == "failed"

    @property
    def passed(self) -> bool:
        return self.status == "passed"


@dataclass
class _Report:
    subject: str
    results: list[_Result]
    seed: int | None = 1
    certified: bool = True
    strict_failures: list[str] = field(default_factory=list)
    nothing_certified: str | None = None
    declared_skipped: list[str] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        return {s: sum(r.status == s for r in self.results) for s in ("passed", "failed", "skipped", "xfailed")}


NO_GOLDEN = "no golden directory (Subject(golden=...))"
REPORT = _Report("s", [
    _Result("roundtrip.bit_exact", "roundtrip", "passed"),
    _Result("roundtrip.key_determinism", "roundtrip", "skipped", "not a key serializer"),
    *[_Result(f"versioning.c{i}", "versioning", "skipped", NO_GOLDEN) for i in range(5)],
])


def test_the_renderer_shows_one_line_per_skip_reason_by_default():
    text = render_report(REPORT)
    assert "  skipped 5: no golden directory (Subject(golden=...))" in text.splitlines()[2], f"got:\n{text}"
    assert "  skipped 1: not a key serializer" in text, f"got:\n{text}"
    assert "versioning.c0" not in text, f"got:\n{text}\nshould not list the five checks one by one"
    assert len(text.splitlines()) == 3, f"got:\n{text}\nshould be the verdict and one line per reason"


def test_the_renderer_lists_every_skip_when_verbose():
    text = render_report(REPORT, verbose=True)
    for i in range(5):
        assert f"  skipped versioning.c{i}: {NO_GOLDEN}" in text, f"got:\n{text}"
    assert "  skipped roundtrip.key_determinism: not a key serializer" in text, f"got:\n{text}"


def test_the_cli_summarises_skips_and_lists_them_with_verbose(targets, capsys):
    argv = ["certify", "trap_targets:PLAIN", *FAST, "--check", "roundtrip", "--check", "versioning"]
    short, long = targets / "short.json", targets / "long.json"
    assert main([*argv, "--json", str(short)]) == 0
    out = capsys.readouterr().out
    assert "  skipped 8: no golden directory" in out, f"got:\n{out}\nshould count the eight versioning skips once"
    assert "skipped versioning.upgrade_records:" not in out, f"got:\n{out}\nshould not list each skip by default"
    for flag in ("-v", "--verbose"):
        assert main([*argv, flag, "--json", str(long)]) == 0
        out = capsys.readouterr().out
        assert "  skipped versioning.upgrade_records: no golden directory" in out, f"got:\n{out}\nshould list with {flag}"
        assert "  skipped roundtrip.key_determinism: not a key serializer" in out, f"got:\n{out}"
    from conformance._engine.registry import all_checks

    selected = {c.id for c in all_checks() if c.family in ("roundtrip", "versioning")}
    for path in (short, long):
        statuses = {c["id"]: c["status"] for c in json.loads(path.read_text())["checks"]}
        assert statuses.get("versioning.upgrade_records") == "skipped" and set(statuses) == selected, (
            f"got {sorted(statuses)}, should keep every selected check in the certificate: {sorted(selected)}")


PLUGIN_SUITE = '''
from hypothesis import strategies as st
import conformance
from conformance import Subject
from reference.serializers import LongSerializer


class TestLongs(conformance.SerializerConformance):
    subject = Subject(LongSerializer(), st.integers(-2**63, 2**63 - 1))
    conformance_checks = ("roundtrip.api_valid", "versioning")
'''


def test_the_plugin_summary_summarises_skips_unless_pytest_is_verbose(pytester):
    pytester.makepyfile(test_suite=PLUGIN_SUITE)
    text = pytester.runpytest("-p", "no:cacheprovider", "--conformance-examples", "5").stdout.str()
    assert "  skipped 8: no golden directory" in text, f"got:\n{text}\nshould count the eight skips once"
    assert "skipped versioning.upgrade_records:" not in text, f"got:\n{text}\nshould not list each skip"
    text = pytester.runpytest("-p", "no:cacheprovider", "--conformance-examples", "5", "-v").stdout.str()
    assert "  skipped versioning.upgrade_records: no golden directory" in text, f"got:\n{text}\nshould list with -v"


# -- 3. a run that certifies nothing ---------------------------------------------------------

def test_a_run_whose_selected_checks_all_skipped_is_not_certified():
    report = check_serializer(Subject(LongSerializer(), LONGS),
                              RunConfig(examples=5, seed=7, backends=("heap",), checks=("versioning",)))
    assert report.results and all(r.status == "skipped" for r in report.results), (
        f"got {[(r.id, r.status) for r in report.results]}, should all skip without a golden directory")
    assert report.certified is False, "got certified, should not certify a run in which nothing passed"
    n = len(report.results)
    reasons = [p for p in report.strict_failures if f"all {n} selected checks were skipped" in p]
    assert len(reasons) == 1 and "nothing was certified" in reasons[0] and "no golden directory" in reasons[0], (
        f"got strict failures {report.strict_failures}, should say all {n} checks were skipped and why")
    assert "allow_all_skipped=True" in reasons[0], f"got {reasons[0]!r}, should say how to accept it"
    text = report.summary()
    assert "NOT CERTIFIED" in text and f"all {n} selected checks were skipped" in text, f"got:\n{text}"


def test_allow_all_skipped_opts_out_and_is_recorded():
    report = check_serializer(Subject(LongSerializer(), LONGS),
                              RunConfig(examples=5, seed=7, backends=("heap",), checks=("versioning",),
                                        allow_all_skipped=True))
    assert report.certified is True and not report.strict_failures, (
        f"got certified={report.certified}, {report.strict_failures}, should certify when allowed")
    assert report.to_json()["options"]["allow_all_skipped"] is True, f"got {report.to_json()['options']}"


def test_allow_all_skipped_is_validated():
    with pytest.raises(RunConfigError, match=r"RunConfig\(allow_all_skipped='yes'\): should be True or False"):
        RunConfig(allow_all_skipped="yes")


def test_a_run_of_expected_failures_and_skips_only_is_not_certified():
    # api_valid listed as an expected failure blocks every other check: nothing was tested.
    report = check_serializer(Subject(ImmutableAsMethod(), LONGS),
                              RunConfig(examples=5, seed=7, backends=("heap",), checks=("roundtrip",),
                                        expected_failures={"roundtrip.api_valid": "known"}))
    assert report["roundtrip.api_valid"].status == "xfailed" and not report.failures, f"got {report.counts()}"
    assert report.certified is False, "got certified, should not certify a run in which no check passed"
    n = len(report.results)
    assert any(f"none of the {n} selected checks passed" in p and "nothing was certified" in p
               for p in report.strict_failures), f"got {report.strict_failures}"


def test_one_passing_check_is_enough_to_certify():
    report = check_serializer(Subject(LongSerializer(), LONGS),
                              RunConfig(examples=5, seed=7, backends=("heap",),
                                        checks=("roundtrip.api_valid", "versioning")))
    assert report.certified and report.counts()["passed"] == 1, f"got {report.counts()}, should certify"


def test_one_skipped_check_reads_in_the_singular():
    report = check_serializer(Subject(LongSerializer(), LONGS),
                              RunConfig(examples=5, seed=7, backends=("heap",), checks=("versioning.golden",)))
    reason = report.nothing_certified
    assert reason is not None and reason.startswith("the 1 selected check was skipped:"), (
        f"got {reason!r}, should say 'the 1 selected check was skipped'")


def test_the_cli_exits_1_with_the_reason_and_the_certificate_validates(targets, capsys):
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((ROOT / "docs" / "certificate.schema.json").read_text(encoding="utf-8"))
    path = targets / "skipped.json"
    argv = ["certify", "trap_targets:PLAIN", *FAST, "--check", "versioning", "--json", str(path)]
    assert main(argv) == 1, "got exit 0, should be 1 when every selected check was skipped"
    out = capsys.readouterr().out
    assert "NOT CERTIFIED" in out and "all 8 selected checks were skipped" in out, f"got:\n{out}"
    data = json.loads(path.read_text())
    jsonschema.validate(data, schema)
    assert data["certified"] is False and data["options"]["allow_all_skipped"] is False, f"got {data}"
    assert main([*argv, "--allow-all-skipped"]) == 0, "got exit 1, should certify with --allow-all-skipped"
    data = json.loads(path.read_text())
    jsonschema.validate(data, schema)
    assert data["certified"] is True and data["options"]["allow_all_skipped"] is True, f"got {data}"
