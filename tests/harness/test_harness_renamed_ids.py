"""The check ids of the previous release that were renamed (prefix = family) are still accepted
everywhere an id is, each use telling the new id with a DeprecationWarning; reports carry the new
ids. (The zoo, tests/harness/zoo.py, still names some checks by their old ids: it passes through
these aliases too.)"""

from __future__ import annotations

import re
import warnings

import pytest
from hypothesis import strategies as st

from conformance import Subject, certify, check_serializer, parametrize_checks
from conformance._engine.registry import RENAMED, UnknownCheckError, all_checks, get_check, select
from reference.serializers import LongSerializer

#: Written out here, not read from the registry: what each old id must now be.
OLD_TO_NEW = {
    "api.valid": "roundtrip.api_valid",
    "api.create_instance": "roundtrip.create_instance",
    "domain.refused": "roundtrip.domain_refused",
    "domain.state_untouched": "backends.state_untouched",
    "upgrade.snapshot": "versioning.upgrade_snapshot",
    "upgrade.restore": "versioning.upgrade_restore",
    "upgrade.verdict": "versioning.upgrade_verdict",
    "upgrade.records": "versioning.upgrade_records",
    "upgrade.backends": "versioning.upgrade_backends",
}
OLD_PREFIXES = {
    "api": ["roundtrip.api_valid", "roundtrip.create_instance"],
    "domain": ["roundtrip.domain_refused", "backends.state_untouched"],
    "upgrade": ["versioning.upgrade_snapshot", "versioning.upgrade_restore", "versioning.upgrade_verdict",
                "versioning.upgrade_records", "versioning.upgrade_backends"],
}


def _sentence(old: str) -> str:
    return f"check id '{old}' is now '{OLD_TO_NEW[old]}'; the old id is accepted until the next release"


def test_the_alias_table_is_the_documented_one_and_names_registered_checks():
    assert RENAMED == OLD_TO_NEW, f"got {RENAMED}, should be {OLD_TO_NEW}"
    registered = {c.id: c for c in all_checks()}
    for old, new in OLD_TO_NEW.items():
        assert old not in registered, f"got {old!r} registered, should only be an alias of {new!r}"
        assert new in registered, f"got no check {new!r}, should be registered (the new id of {old!r})"
        assert registered[new].former_ids == (old,), f"got {registered[new].former_ids}, should be ({old!r},)"


@pytest.mark.parametrize("old", sorted(OLD_TO_NEW))
def test_an_old_id_selects_what_the_new_one_does_and_warns(old):
    checks = all_checks()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the new id: no warning at all
        by_new = [c.id for c in select(checks, [OLD_TO_NEW[old]])]
    with pytest.warns(DeprecationWarning, match=re.escape(_sentence(old))):
        by_old = [c.id for c in select(checks, [old])]
    assert by_old == by_new == [OLD_TO_NEW[old]], f"got {by_old} for {old!r} and {by_new} for the new id"
    with pytest.warns(DeprecationWarning, match=re.escape(_sentence(old))):
        assert get_check(old).id == OLD_TO_NEW[old]


@pytest.mark.parametrize("prefix", sorted(OLD_PREFIXES))
def test_an_old_prefix_selects_the_checks_it_selected_and_warns(prefix):
    with pytest.warns(DeprecationWarning, match=f"check id prefix '{prefix}' is now .*accepted until the next release"):
        got = [c.id for c in select(all_checks(), [prefix])]
    assert got == OLD_PREFIXES[prefix], f"got {got} for --check {prefix}, should be {OLD_PREFIXES[prefix]}"


def test_an_unknown_word_is_still_an_error_after_the_aliases():
    with pytest.raises(UnknownCheckError, match="upgrade.restores"):
        select(all_checks(), ["upgrade.restores"])


class _NoLength(LongSerializer):
    """Breaks roundtrip.api_valid only: a length of 0 bytes is neither -1 nor a byte count."""

    @property
    def length(self) -> int:
        return 0


def test_check_serializer_takes_old_ids_and_reports_new_ones():
    subject = Subject(_NoLength(), st.integers(0, 9))
    with pytest.warns(DeprecationWarning) as told:
        report = check_serializer(subject, examples=3, seed=1, checks=("api.valid",),
                                  expected_failures={"api.valid": "length 0 on purpose"})
    assert [r.id for r in report] == ["roundtrip.api_valid"], f"got {[r.id for r in report]}"
    result = report["roundtrip.api_valid"]
    assert result.status == "xfailed" and result.expected_failure == "length 0 on purpose", f"got {result}"
    sentences = {str(w.message) for w in told if str(w.message).startswith("check id")}
    assert sentences == {_sentence("api.valid")}, f"got {sentences}, should tell the new id"
    with pytest.warns(DeprecationWarning, match=re.escape(_sentence("api.valid"))):
        assert report["api.valid"] is result


def test_certify_takes_old_ids_and_tells_each_once_for_several_subjects():
    subjects = [Subject(LongSerializer(), st.integers(0, 9)), Subject(_NoLength(), st.integers(0, 9))]
    with warnings.catch_warnings(record=True) as told:
        warnings.simplefilter("always")
        reports = certify(subjects, examples=3, seed=1, backends=("heap",), checks=("api",),
                          expected_failures={"api.valid": "length 0 on purpose"}, jobs=1)
    got = [[(r.id, r.status) for r in report] for report in reports]
    assert got == [[("roundtrip.api_valid", "passed"), ("roundtrip.create_instance", "passed")],
                   [("roundtrip.api_valid", "xfailed"), ("roundtrip.create_instance", "skipped")]], f"got {got}"
    sentences = [str(w.message) for w in told
                 if w.category is DeprecationWarning and str(w.message).startswith("check id")]
    assert len(sentences) == 2 and _sentence("api.valid") in sentences, (
        f"got {sentences}, should tell the old prefix and the old expected-failure id once each")


def test_parametrize_checks_takes_old_ids_with_a_warning():
    subject = Subject(LongSerializer(), st.integers(0, 9))
    with pytest.warns(DeprecationWarning) as told:
        decorate = parametrize_checks(subject, {"upgrade.restore": "not recorded"}, checks=("api",))
    sentences = {str(w.message) for w in told if str(w.message).startswith("check id")}
    assert _sentence("upgrade.restore") in sentences and len(sentences) == 2, f"got {sentences}"
    assert {w.filename for w in told if str(w.message).startswith("check id")} == {__file__}, (
        f"got warnings pointing at {[w.filename for w in told]}, should point at the caller")

    def test_x(conformance_check_id):
        pass

    marks = [m for m in decorate(test_x).pytestmark if m.name == "parametrize"]
    got = list(marks[0].args[1])
    assert got == ["roundtrip.api_valid", "roundtrip.create_instance"], f"got {got}"
