"""The PR's pages say how the last verification run ended, a failure with its real cause, until
a later run ends: a real repository that becomes unreachable, then reachable again."""
import re

import pytest

from findings.models import VerificationRun
from findings.services.runs import verification_run_begin
from findings.services.verification.run import verification_run_execute
from reviews.services import commit_get_or_create
from tests.findings.decision_data import fetched_review

pytestmark = pytest.mark.django_db


def run_at(pull_request, sha) -> VerificationRun:
    commit = commit_get_or_create(repository=pull_request.repository, sha=sha)
    run = verification_run_begin(pull_request=pull_request, commit=commit)
    verification_run_execute(run=run)
    run.refresh_from_db()
    return run


def text_of(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).strip()


def test_an_unreachable_repository_is_the_cause_shown_until_a_later_run_ends(client, tmp_path):
    review = fetched_review(tmp_path)
    repo = review.repo
    pushed = repo.write("README.md", "pushed\n").commit("pushed again")
    moved = repo.path.with_name("moved-away")
    repo.path.rename(moved)

    failed = run_at(review.pull_request, pushed)
    assert failed.status == "failed"
    assert "could not be fetched" in failed.message and "no commit" not in failed.message.lower()

    for url in (review.pull_request.get_absolute_url(), review.pull_request.get_absolute_url() + "blockers/"):
        page = text_of(client.get(url).content.decode())
        assert f"The last verification failed at {pushed[:8]}" in page
        assert "the repository could not be fetched" in page and "no commit" not in page.lower()

    moved.rename(repo.path)
    done = run_at(review.pull_request, pushed)
    assert done.status == "done"
    page = text_of(client.get(review.pull_request.get_absolute_url()).content.decode())
    assert "The last verification failed" not in page
    assert f"Last verified at {pushed[:8]}" in page


def test_evidence_recorded_at_a_commit_the_mirror_lacks_blames_the_fetch_when_it_failed(client, tmp_path):
    """The mirror has the new head but not an older commit the evidence was recorded at (it
    was never fetched): while the repository is unreachable that is the cause, not the SHA."""
    from findings.models import Evidence, EvidenceResult
    from reviews.models import Commit

    review = fetched_review(tmp_path)
    elsewhere = Commit.objects.create(repository=review.pull_request.repository, sha="a1b2c3d4" * 5, resolved=True)
    Evidence.objects.filter(finding=review.still_there).update(commit=elsewhere)
    review.repo.path.rename(review.repo.path.with_name("moved-away"))
    run_at(review.pull_request, review.fix)
    detail = EvidenceResult.objects.filter(evidence__finding=review.still_there, verification__commit__sha=review.fix)
    assert all("could not be fetched" in result.detail for result in detail)
