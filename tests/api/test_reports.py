"""POST /api/repos/{owner}/{name}/commits/{sha}/reports/: a CI job sends the report of a commit with
a token scoped to its repository, as curl and recheck-gate send it."""
import pytest

from access.models import AuditEntry
from findings.models import CheckReport, ReportedTest
from tests.factories import RepositoryFactory
from tests.personas import api_client, member_of, user_with_role
from tests.reports import calc_repository, pytest_junit, ruff_sarif

pytestmark = pytest.mark.django_db


@pytest.fixture
def calc(tmp_path):
    return calc_repository(tmp_path)


@pytest.fixture
def ci(calc):
    """A CI job's token: reports:write, limited to acme/calc, of a reviewer there."""
    user = member_of(calc, user_with_role("no_role", username="ci-bot"), "reviewer")
    return api_client(user, scopes=("reports:write",), repositories=(calc,))


def url(repository, sha, **query) -> str:
    params = "&".join(f"{key}={value}" for key, value in query.items())
    return f"/api/repos/{repository.slug}/commits/{sha}/reports/?{params}"


def test_a_ci_job_sends_pytest_s_junit_report_and_sending_it_again_changes_nothing(calc, ci, tmp_path):
    body = pytest_junit(calc.repo.path, tmp_path / "junit.xml")
    sent = ci.post(url(calc, calc.repo.sha, check="unit-tests", url="https://ci.example.com/7"), body,
                   content_type="application/xml")
    assert sent.status_code == 201, sent.json()
    answer = sent.json()
    assert {key: answer[key] for key in ("commit", "check", "conclusion", "format", "tests", "tests_failed",
                                         "source", "url", "created")} == {
        "commit": calc.repo.sha, "check": "unit-tests", "conclusion": "failure", "format": "junit", "tests": 4,
        "tests_failed": 2, "source": "upload", "url": "https://ci.example.com/7", "created": True,
    }
    again = ci.post(url(calc, calc.repo.sha, check="unit-tests", url="https://ci.example.com/7"), body,
                    content_type="text/xml")
    assert again.status_code == 200 and again.json()["id"] == answer["id"] and not again.json()["created"]
    assert CheckReport.objects.count() == 1 and ReportedTest.objects.count() == 4
    assert AuditEntry.objects.get(action="report.record", outcome="done").actor.username == "ci-bot"


def test_a_sarif_log_and_a_bare_conclusion_are_sent_the_same_way(calc, ci):
    sarif = ci.post(url(calc, calc.repo.sha[:12], check="lint"), ruff_sarif(calc.repo.path, "config/soak.py"),
                    content_type="application/sarif+json")
    assert sarif.status_code == 201 and (sarif.json()["format"], sarif.json()["results"]) == ("sarif", 1)
    bare = ci.post(url(calc, calc.repo.sha, check="submodule-fast-forward", conclusion="failure"))
    assert bare.status_code == 201 and (bare.json()["format"], bare.json()["conclusion"]) == ("", "failure")


@pytest.mark.parametrize(
    ("query", "body", "status", "field"),
    [
        ({"check": "unit-tests"}, b'<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><testsuite/>', 400, "file"),
        ({"check": "unit-tests"}, b"<testsuite><testcase", 400, "file"),
        ({"check": "lint"}, b'{"version": "2.1.0"}', 400, "file"),
        ({"check": "unit%07tests", "conclusion": "failure"}, b"", 400, "check"),
        ({"check": "unit-tests"}, b"", 400, "conclusion"),
        ({"check": "unit-tests", "conclusion": "green"}, b"", 400, "conclusion"),
    ],
)
def test_a_report_that_cannot_be_kept_is_refused_naming_the_part_and_nothing_is_kept(calc, ci, query, body, status,
                                                                                       field):
    answer = ci.post(url(calc, calc.repo.sha, **query), body, content_type="application/xml")
    assert answer.status_code == status, answer.json()
    assert [error["field"] for error in answer.json()["errors"]] == [field]
    assert not CheckReport.objects.exists()


def test_a_report_for_a_commit_the_repository_does_not_have_is_a_404_on_commit(calc, ci):
    answer = ci.post(url(calc, "f" * 40, check="unit-tests", conclusion="failure"))
    assert answer.status_code == 404 and answer.json()["errors"][0]["field"] == "commit"
    assert "Nothing was kept" in answer.json()["detail"] and not CheckReport.objects.exists()


def test_a_report_over_the_limit_is_a_413_naming_the_limit(calc, ci, monkeypatch):
    from api.views import reports

    monkeypatch.setattr(reports, "MAX_REPORT_BYTES", 1024)
    answer = ci.post(url(calc, calc.repo.sha, check="unit-tests"), b"<testsuite>" + b" " * 4096 + b"</testsuite>",
                     content_type="application/xml")
    assert answer.status_code == 413 and "over 1,024 bytes" in answer.json()["detail"]
    assert not CheckReport.objects.exists()


def test_a_token_of_another_repository_or_without_the_scope_is_refused(calc, tmp_path):
    other = RepositoryFactory(slug="acme/other")
    user = member_of(calc, user_with_role("no_role", username="ci-bot"), "reviewer")
    elsewhere = api_client(user, scopes=("reports:write",), repositories=(other,), name="other")
    assert elsewhere.post(url(calc, calc.repo.sha, check="t", conclusion="failure")).status_code == 404
    verify_only = api_client(user, scopes=("verify",), name="verify")
    refused = verify_only.post(url(calc, calc.repo.sha, check="t", conclusion="failure"))
    assert refused.status_code == 403 and "reports:write" in refused.json()["detail"]
    reader = member_of(calc, user_with_role("no_role", username="rita"), "reader")
    refused = api_client(reader, scopes=("reports:write",), name="rita").post(
        url(calc, calc.repo.sha, check="t", conclusion="failure"))
    assert refused.status_code == 403
    assert not CheckReport.objects.exists()
