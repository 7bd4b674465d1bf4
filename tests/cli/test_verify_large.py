"""`manage.py verify` on pull requests of thousands of findings: it verifies and prints its report
on either database, however many evidence items the report has to read back."""
import io
import json

import pytest
from django.core.management import call_command

from findings.models import Evidence, Finding, Verification
from reviews.models import Commit, PinnedCommit, PullRequest, Repository
from tests.gitrepo import GitRepoBuilder

pytestmark = pytest.mark.django_db

SOURCE = "".join(f"value_{n} = {n}\n" for n in range(1, 41))


@pytest.fixture
def repo(tmp_path, settings):
    settings.RECHECK_ALLOW_LOCAL_REPOSITORIES = True
    builder = GitRepoBuilder(tmp_path)
    builder.reviewed = builder.write("src/values.py", SOURCE).write("README", "hello\n").commit("reviewed")
    return builder


def large_pull_request(repo, findings: int) -> PullRequest:
    """`findings` findings of one small evidence item each: a snippet, a path or a note in turn."""
    repository = Repository.objects.create(slug="acme/large", clone_url=str(repo.path))
    pull_request = PullRequest.objects.create(repository=repository, number=1, title="Large")
    commit = Commit.objects.create(repository=repository, sha=repo.reviewed, resolved=True)
    PinnedCommit.objects.create(pull_request=pull_request, commit=commit, role="reviewed")
    rows = Finding.objects.bulk_create(
        Finding(pull_request=pull_request, number=n, kind="blocker" if n % 2 else "cleanup", title=f"Finding {n}")
        for n in range(1, findings + 1)
    )
    evidence = []
    for finding in rows:
        line = finding.number % 40 + 1
        kind = ("snippet", "path", "note")[finding.number % 3]
        evidence.append(
            Evidence(
                finding=finding, position=0, kind=kind, commit=commit,
                path="" if kind == "note" else ("src/values.py" if kind == "snippet" else "README"),
                start_line=line if kind == "snippet" else None, end_line=line if kind == "snippet" else None,
                # Snippet text left out, as a bundle may: verification reads it from the repository.
                text="A note." if kind == "note" else "", expect="exists" if kind == "path" else "",
            )
        )
    Evidence.objects.bulk_create(evidence, batch_size=1000)
    return pull_request


@pytest.mark.parametrize("findings", [1000, 5000])
def test_a_pull_request_of_thousands_of_findings_verifies_and_prints_its_report(repo, findings):
    pull_request = large_pull_request(repo, findings)
    out = io.StringIO()
    call_command("verify", "acme/large", "1", "--commit", repo.reviewed, "--json", stdout=out)
    report = json.loads(out.getvalue())
    assert report["commit"] == repo.reviewed
    assert [item["number"] for item in report["findings"]] == list(range(1, findings + 1))
    verdicts = {item["number"]: item["verdict"] for item in report["findings"]}
    assert verdicts[3] == "present" and verdicts[1] == "present" and verdicts[2] == "unverifiable"
    snippet = report["findings"][2]["evidence"][0]
    assert (snippet["kind"], snippet["state"], snippet["path"], snippet["start_line"]) == (
        "snippet", "holds", "src/values.py", 4
    )
    assert Verification.objects.filter(finding__pull_request=pull_request).count() == findings
    assert not Evidence.objects.filter(kind="snippet", text="").exists()


def test_the_table_of_a_thousand_findings_is_printed_too(repo):
    large_pull_request(repo, 1000)
    out = io.StringIO()
    call_command("verify", "acme/large", "1", stdout=out)
    lines = out.getvalue().splitlines()
    assert lines[0] == f"acme/large#1 at {repo.reviewed}"
    assert sum(1 for line in lines if "present" in line) == 667


def test_snippet_texts_read_on_first_verification_are_stored_a_batch_per_statement(repo):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from findings.services.verification.run import pull_request_verify
    from reviews.mirrors import repository_fetch

    pull_request = large_pull_request(repo, 4500)  # 1,500 snippets without their text
    commit = Commit.objects.get(sha=repo.reviewed)
    repository_fetch(repository=pull_request.repository)
    with CaptureQueriesContext(connection) as queries:
        verifications = pull_request_verify(pull_request=pull_request, commit=commit, fetch=False)
    assert {v.verdict for v in verifications} == {"present", "unverifiable"}
    updates = [q["sql"] for q in queries.captured_queries if q["sql"].startswith('UPDATE "findings_evidence"')]
    assert 1 <= len(updates) <= 4  # a batch of at least 499 rows per statement, never one per item
    texts = dict(Evidence.objects.filter(kind="snippet").values_list("finding__number", "text"))
    assert len(texts) == 1500 and texts[3] == "value_4 = 4" and texts[39] == "value_40 = 40"


def test_re_verifying_replaces_thousands_of_results_in_a_few_statements(repo):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from findings.services.verification.run import pull_request_verify
    from reviews.mirrors import repository_fetch

    pull_request = large_pull_request(repo, 3000)
    commit = Commit.objects.get(sha=repo.reviewed)
    repository_fetch(repository=pull_request.repository)
    pull_request_verify(pull_request=pull_request, commit=commit, fetch=False)
    with CaptureQueriesContext(connection) as queries:
        pull_request_verify(pull_request=pull_request, commit=commit, fetch=False)
    # Batches of hundreds of rows a statement (SQLite takes 999 parameters), never one per row.
    assert len(queries.captured_queries) < 100
