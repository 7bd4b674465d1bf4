"""SARIF export: valid against the official 2.1.0 schema, one result per open finding."""
import json

import jsonschema
import pytest

from findings.exchange.sarif import finding_fingerprint, pull_request_sarif, repository_uri_of, sarif_dump
from engine.reports.sarif import SARIF_SCHEMA_PATH
from findings.models import EvidenceResult, Verification
from reviews.models import Repository
from tests.factories import EvidenceFactory, EvidenceResultFactory, VerificationFactory
from tests.findings.exchange_data import build_review

pytestmark = pytest.mark.django_db

# The OASIS schema vendored with the report reader, which validates uploads against it.
SCHEMA = json.loads(SARIF_SCHEMA_PATH.read_text())


def validate(log: dict) -> None:
    # The schema declares draft-04; it is also checked with Draft 7 as the project's validator.
    for validator in (jsonschema.Draft4Validator, jsonschema.Draft7Validator):
        validator.check_schema(SCHEMA)
        validator(SCHEMA, format_checker=validator.FORMAT_CHECKER).validate(log)


def results_by_rule(log: dict) -> dict:
    return {result["ruleId"]: result for result in log["runs"][0]["results"]}


def test_the_shipped_schema_is_the_official_one():
    assert SCHEMA["id"] == "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
    assert SCHEMA["properties"]["version"]["enum"] == ["2.1.0"]


def test_the_export_is_valid_sarif_2_1_0():
    review = build_review()
    log = json.loads(sarif_dump(pull_request_sarif(pull_request=review.pull_request)))
    validate(log)


def test_the_schema_check_would_catch_a_broken_log():
    review = build_review()
    log = pull_request_sarif(pull_request=review.pull_request)
    log["runs"][0]["results"][0]["level"] = "blocker"
    with pytest.raises(jsonschema.ValidationError):
        validate(log)


def test_there_is_one_result_and_one_rule_per_open_finding():
    review = build_review()
    log = pull_request_sarif(pull_request=review.pull_request)
    run = log["runs"][0]
    assert list(results_by_rule(log)) == ["recheck/4108/1", "recheck/4108/2", "recheck/4108/4", "recheck/4108/5"]
    assert [rule["id"] for rule in run["tool"]["driver"]["rules"]] == list(results_by_rule(log))
    assert all(run["tool"]["driver"]["rules"][result["ruleIndex"]]["id"] == result["ruleId"]
               for result in run["results"])


def test_blockers_are_errors_and_cleanups_notes():
    review = build_review()
    results = results_by_rule(pull_request_sarif(pull_request=review.pull_request))
    assert results["recheck/4108/1"]["level"] == "error"
    assert results["recheck/4108/4"]["level"] == "note"


def test_the_message_is_the_title_and_the_summary():
    review = build_review()
    results = results_by_rule(pull_request_sarif(pull_request=review.pull_request))
    assert results["recheck/4108/1"]["message"]["text"] == "The pin is off main — CI refuses it."


def test_a_location_is_where_the_evidence_holds_at_the_latest_verified_commit():
    review = build_review()
    result = results_by_rule(pull_request_sarif(pull_request=review.pull_request))["recheck/4108/1"]
    assert result["locations"][0]["physicalLocation"] == {
        "artifactLocation": {"uri": "src/stream/loader.py"}, "region": {"startLine": 47, "endLine": 49},
    }
    assert result["properties"]["verdict"] == "present"


def test_without_a_holding_result_the_location_is_the_evidence_or_the_finding():
    review = build_review()
    results = results_by_rule(pull_request_sarif(pull_request=review.pull_request))
    # The pattern is a glob, which is no file: the finding's own location stands in.
    assert results["recheck/4108/2"]["locations"][0]["physicalLocation"] == {
        "artifactLocation": {"uri": "src/generic_sft.py"}, "region": {"startLine": 259, "endLine": 259},
    }
    # Not verified at head: where the snippet was recorded.
    assert results["recheck/4108/5"]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "src/audio.py"
    assert "locations" not in results["recheck/4108/4"]


def test_a_file_the_evidence_says_is_missing_is_not_a_location():
    review = build_review()
    missing = EvidenceFactory(finding=review.note_only, position=1, kind="path", commit=review.reviewed,
                              path="CHANGELOG.md", expect="missing", start_line=None, end_line=None, text="")
    verification = review.note_only.verifications.get()
    EvidenceResultFactory(verification=verification, evidence=missing, path="CHANGELOG.md", start_line=None,
                          end_line=None)
    result = results_by_rule(pull_request_sarif(pull_request=review.pull_request))["recheck/4108/4"]
    assert "locations" not in result


def test_the_revision_is_the_latest_verified_commit():
    review = build_review()
    provenance = pull_request_sarif(pull_request=review.pull_request)["runs"][0]["versionControlProvenance"]
    assert provenance == [{"repositoryUri": "https://github.com/acme/loader", "revisionId": review.head.sha}]


def test_fingerprints_do_not_change_when_the_evidence_moves():
    review = build_review()
    before = results_by_rule(pull_request_sarif(pull_request=review.pull_request))["recheck/4108/1"]
    Verification.objects.filter(finding=review.moved).delete()
    verification = VerificationFactory(finding=review.moved, commit=review.head, verdict="present")
    EvidenceResultFactory(verification=verification, evidence=review.moved.evidence.get(), path="src/elsewhere.py",
                          start_line=300, end_line=302, state=EvidenceResult.State.HOLDS)
    after = results_by_rule(pull_request_sarif(pull_request=review.pull_request))["recheck/4108/1"]
    assert after["locations"] != before["locations"]
    assert after["partialFingerprints"] == before["partialFingerprints"]
    assert after["partialFingerprints"]["recheckFinding/v1"] == finding_fingerprint(review.pull_request, review.moved)


def test_fingerprints_differ_between_findings_and_pull_requests():
    review = build_review()
    results = results_by_rule(pull_request_sarif(pull_request=review.pull_request))
    fingerprints = {result["partialFingerprints"]["recheckFinding/v1"] for result in results.values()}
    assert len(fingerprints) == len(results)


@pytest.mark.parametrize(
    ("clone_url", "uri"),
    [
        ("https://example.com/a/b.git", "https://example.com/a/b.git"),
        ("git@github.com:acme/loader.git", "ssh://git@github.com/acme/loader.git"),
        ("/srv/git/sample.git", "file:///srv/git/sample.git"),
    ],
)
def test_a_repository_without_a_web_url_is_named_by_its_clone_url_as_a_uri(clone_url, uri):
    assert repository_uri_of(Repository(slug="a/b", clone_url=clone_url)) == uri


def test_a_review_never_verified_still_exports_valid_sarif():
    review = build_review()
    Verification.objects.all().delete()
    log = pull_request_sarif(pull_request=review.pull_request)
    validate(log)
    # Then the newest pin names the revision.
    assert log["runs"][0]["versionControlProvenance"][0]["revisionId"] == review.head.sha
    assert "verdict" not in results_by_rule(log)["recheck/4108/1"]["properties"]


def test_paths_are_written_as_uri_references():
    review = build_review()
    review.unverified.evidence.update(path="docs/a guide#1.md")
    result = results_by_rule(pull_request_sarif(pull_request=review.pull_request))["recheck/4108/5"]
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "docs/a%20guide%231.md"
