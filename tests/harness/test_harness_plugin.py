"""The pytest entry points, run in real pytest sessions (pytester): one test per check with
readable ids, the base class, expected failures, options, JUnit properties, and the terminal
summary, also under ``-n 2``."""

from __future__ import annotations

import re
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

pytest_plugins = ["pytester"]

SUITE = '''
import pytest
from hypothesis import strategies as st
import conformance
from conformance import Subject
from reference.serializers import LongSerializer, StringSerializer

LONGS = Subject(LongSerializer(), st.integers(-2**63, 2**63 - 1))


class DropsLast(StringSerializer):
    def serialize(self, value, target):
        super().serialize(value[:-1] if value else value, target)


@conformance.parametrize_checks(LONGS, checks=("roundtrip",))
def test_longs(conformance_result):
    assert conformance_result.status == "passed", conformance_result


@conformance.parametrize_checks("broken", checks=("roundtrip.bit_exact", "roundtrip.sequence"),
                                expected_failures={"roundtrip.sequence": "known"})
def test_broken():
    pass


@pytest.fixture
def broken():
    return Subject(DropsLast(), st.text())


class TestStrings(conformance.SerializerConformance):
    subject = Subject(StringSerializer(), st.text())
    conformance_checks = ("roundtrip", "snapshot")


class TestFromFixture(conformance.SerializerConformance):
    conformance_checks = ("roundtrip.api_valid", "roundtrip.create_instance", "roundtrip.bit_exact")

    @pytest.fixture
    def subject(self):
        return Subject(LongSerializer(), st.integers(0, 5))
'''


def outcomes(result):
    return result.parseoutcomes()


def test_one_test_per_check_with_readable_ids(pytester):
    pytester.makepyfile(test_suite=SUITE)
    result = pytester.runpytest("--collect-only", "-q", "-p", "no:cacheprovider")
    text = result.stdout.str()
    for test_id in ("test_longs[roundtrip.bit_exact]", "test_longs[roundtrip.copy_serialized]",
                    "test_broken[roundtrip.sequence]", "TestStrings::test_conformance[snapshot.restore]",
                    "TestFromFixture::test_conformance[roundtrip.bit_exact]"):
        assert test_id in text, f"got collection:\n{text}\nshould list {test_id}"
    assert "test_longs[backends.history]" not in text, "got a backends test, should only collect roundtrip"


def test_results_summary_and_junit_properties(pytester):
    pytester.makepyfile(test_suite=SUITE)
    junit = pytester.path / "junit.xml"
    result = pytester.runpytest("-p", "no:cacheprovider", "-v", "--conformance-examples", "15",
                                f"--junitxml={junit}")
    counts = outcomes(result)
    # test_broken: bit_exact fails for real, sequence is an expected failure (skipped as a
    # prerequisite failure, so it is skipped rather than xfailed).
    assert counts.get("failed") == 1, f"got {counts}, should have exactly the one real failure"
    assert "TestFromFixture::test_conformance[roundtrip.bit_exact] PASSED" in result.stdout.str(), (
        "got no passing test for the fixture-given subject, should have one"
    )
    text = result.stdout.str()
    assert "roundtrip.bit_exact [roundtrip]: reading back what serialize wrote got ''" in text, text
    assert "smallest failing example: '0'" in text, f"got:\n{text}\nshould show the shrunk example"
    assert re.search(r"^=+ conformance =+$", text, re.M), f"got:\n{text}\nshould have a conformance section"
    assert "DropsLast(): NOT CERTIFIED" in text, f"got:\n{text}\nshould summarise the broken subject"
    assert "StringSerializer(): CERTIFIED" in text, f"got:\n{text}\nshould summarise the good subject"
    tree = ET.parse(junit)
    props = {(p.get("name"), p.get("value")) for p in tree.iter("property")}
    assert ("conformance_check", "roundtrip.bit_exact") in props, f"got properties {sorted(props)[:10]}"
    assert ("conformance_status", "failed") in props, f"got properties {sorted(props)[:10]}"


def test_summary_under_xdist(pytester):
    pytester.makepyfile(test_suite=SUITE)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-n", "2", "--conformance-examples", "10",
                                           "-k", "broken or FromFixture")
    text = result.stdout.str()
    assert "DropsLast(): NOT CERTIFIED (0 passed, 1 failed, 1 skipped" in text, f"got:\n{text}\nshould summarise across workers"
    # FromFixture: roundtrip.api_valid, roundtrip.create_instance, roundtrip.bit_exact
    assert "LongSerializer(): CERTIFIED (3 passed, 0 failed" in text, f"got:\n{text}"
    counts = outcomes(result)
    assert counts == {"failed": 1, "passed": 3, "skipped": 1}, f"got {counts}"


def test_a_session_leaves_no_scratch_directory(pytester, monkeypatch, tmp_path):
    """The runners a session's tests share write savepoints into scratch directories; the
    session's end removes them, in each xdist worker too."""
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setenv("TMPDIR", str(temp))
    pytester.makepyfile(test_scratch='''
import conformance
from hypothesis import strategies as st
from reference.serializers import LongSerializer

LONGS = conformance.Subject(LongSerializer(), st.integers(-2**63, 2**63 - 1))


@conformance.parametrize_checks(LONGS, checks=("backends.history", "backends.fresh_process"))
def test_longs(conformance_result):
    assert conformance_result.status == "passed", conformance_result
''')
    for options in ((), ("-n", "2")):
        result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--conformance-examples", "5", *options)
        assert outcomes(result).get("passed", 0) >= 2, f"got {outcomes(result)}: {result.stdout.str()[-2000:]}"
        left = sorted(p.name for p in temp.iterdir() if p.name.startswith("conformance-"))
        assert not left, f"got {left} left in the temporary directory after a session {options}, should be none"


def test_unknown_expected_failure_ids_are_a_collection_error(pytester):
    pytester.makepyfile(test_typo='''
from hypothesis import strategies as st
import conformance
from reference.serializers import LongSerializer

@conformance.parametrize_checks(conformance.Subject(LongSerializer(), st.integers(0, 9)),
                                expected_failures={"roundtrip.bit_exakt": "typo"}, checks=("roundtrip.api_valid",))
def test_x():
    pass
''')
    result = pytester.runpytest("-p", "no:cacheprovider")
    text = result.stdout.str()
    assert result.ret != 0, f"got exit {result.ret}, should fail collection"
    assert "UnknownCheckError" in text and "did you mean 'roundtrip.bit_exact'" in text, f"got:\n{text}"


def test_options_are_in_their_own_group(pytester):
    result = pytester.runpytest("--help")
    text = result.stdout.str()
    assert "serializer conformance harness:" in text, "got no conformance option group in --help"
    for option in ("--conformance-examples", "--conformance-profile", "--conformance-seed",
                   "--conformance-backend", "--conformance-spark"):
        assert option in text, f"got --help without {option}"


def test_plugin_and_package_import_nothing_heavy():
    code = ("import sys, conformance.pytest_plugin, conformance; "
            "heavy = [m for m in ('pytest', 'pyspark', 'pyarrow', 'rocksdict', 'conformance._checks') if m in sys.modules]; "
            "print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]", f"got heavy imports {out}, should import none of them"


@pytest.mark.parametrize("profile", ["dev", "ci", "certify"])
def test_profiles_keep_hypothesis_ci_keys(profile):
    from hypothesis import settings

    from conformance._engine.profiles import profile_settings

    chosen = profile_settings(profile)
    assert chosen.deadline is None, f"got deadline {chosen.deadline} for {profile}, should be None"
    if profile == "ci":
        try:
            own = settings.get_profile("ci")
        except Exception:
            return
        import conformance._engine.profiles as _profiles

        parent = _profiles._hypothesis_ci()
        if parent is not None:
            assert chosen.derandomize == parent.derandomize and chosen.print_blob == parent.print_blob, (
                f"got {chosen}, should keep hypothesis' ci keys {parent}"
            )
        assert own is not None
    if profile == "certify":
        assert chosen.derandomize and chosen.max_examples >= 1000, f"got {chosen}"


def test_expected_failures_xfail_in_both_entry_points(pytester):
    pytester.makepyfile(test_xfail='''
from hypothesis import strategies as st
import conformance
from conformance import Subject
from reference.serializers import StringSerializer


class DropsLast(StringSerializer):
    def serialize(self, value, target):
        super().serialize(value[:-1] if value else value, target)


BROKEN = Subject(DropsLast(), st.text())


@conformance.parametrize_checks(BROKEN, expected_failures={"roundtrip.bit_exact": "known bug"},
                                checks=("roundtrip.api_valid", "roundtrip.bit_exact"))
def test_decorated():
    pass


class TestBase(conformance.SerializerConformance):
    subject = BROKEN
    conformance_checks = ("roundtrip.api_valid", "roundtrip.bit_exact")
    expected_failures = {"roundtrip.bit_exact": "known bug"}
''')
    result = pytester.runpytest("-p", "no:cacheprovider", "--conformance-examples", "10")
    counts = outcomes(result)
    assert counts.get("xfailed") == 2 and not counts.get("failed"), f"got {counts}, should xfail twice"
    # An expected failure does not block certification (a check that passed is what certifies);
    # the two entry points over one subject count each check once, as the CLI does.
    assert "test_xfail:BROKEN: CERTIFIED (1 passed, 0 failed, 0 skipped, 1 xfailed)" in result.stdout.str(), (
        f"got:\n{result.stdout.str()}\nshould count expected failures in the conformance summary"
    )


def test_table_conformance_runs_the_table_family_through_the_same_plugin(pytester):
    pytester.makepyfile(test_tables='''
from hypothesis import strategies as st
import conformance
from conformance import TableSubject
from reference.table import RemoteTable

TABLE = TableSubject(lambda read, write: RemoteTable(read, write), st.integers(0, 3), st.integers(0, 5),
                     st.integers(-2, 2), lambda value, update: value + update, name="remote")


class TestRemote(conformance.TableConformance):
    subject = TABLE
    conformance_checks = ("table.subject", "table.sequential")


@conformance.parametrize_checks(TABLE, checks=("table.nulls",))
def test_nulls(conformance_result):
    assert conformance_result.status == "passed"
''')
    # In process, the inner session cannot rewrite the asserts of modules the outer one imported
    # first; which those are depends on the tests an xdist worker ran before (it warned in the
    # broad run only), and says nothing of the plugin.
    result = pytester.runpytest("-p", "no:cacheprovider", "-v", "--conformance-examples", "3", "--conformance-seed", "5",
                                "-W", "ignore::pytest.PytestAssertRewriteWarning")
    text = result.stdout.str()
    counts = outcomes(result)
    assert counts == {"passed": 3}, f"got {counts}, should pass the three table checks:\n{text}"
    assert "TestRemote::test_conformance[table.sequential] PASSED" in text, text
    assert "remote: CERTIFIED (3 passed" in text, f"got:\n{text}\nshould summarise the table like a serializer"


def test_the_summary_counts_each_check_once_per_subject_named_as_the_cli_names_it(pytester):
    """A class and a decorator over one subject run each check once (one runner) and the
    summary counts it once, as `conformance certify` does; the subject is named by where it is
    defined, and a recording is noted once."""
    pytester.makepyfile(trade_subjects='''
        from hypothesis import strategies as st
        from conformance import Subject
        from reference.serializers import LongSerializer

        SUBJECT = Subject(LongSerializer(), st.integers(0, 9), golden="golden/long", release="1.0.0")
    ''', test_trades='''
        import conformance
        from trade_subjects import SUBJECT

        CHECKS = ("roundtrip.api_valid", "roundtrip.bit_exact", "versioning.golden")


        class TestTrades(conformance.SerializerConformance):
            subject = SUBJECT
            conformance_checks = CHECKS


        @conformance.parametrize_checks(SUBJECT, checks=CHECKS)
        def test_trades(conformance_result):
            assert conformance_result.status == "passed"
    ''')
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--conformance-examples", "10",
                                           "--conformance-update-golden")
    assert outcomes(result) == {"passed": 6}, f"got {outcomes(result)}, should run 3 checks in 2 ways"
    text = result.stdout.str()
    assert "trade_subjects:SUBJECT: CERTIFIED (3 passed, 0 failed, 0 skipped" in text, (
        f"got:\n{text}\nshould count each of the 3 checks once and name the subject trade_subjects:SUBJECT")
    assert text.count("recorded release 1.0.0") == 1, f"got:\n{text}\nshould note the recording once"
