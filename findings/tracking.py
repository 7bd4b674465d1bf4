"""Following a pull request's head as it is pushed again."""
from django.db import transaction

from findings.runs import verification_run_request
from reviews.mirrors import repository_fetch
from reviews.models import PinnedCommit, PullRequest
from reviews.services import commit_get_or_create, pull_request_pin_commit


def pull_request_track_head(*, pull_request: PullRequest) -> dict:
    """Fetch the PR's head ref; a head not pinned yet is pinned as `head` and verified."""
    result = repository_fetch(repository=pull_request.repository, pr_number=pull_request.number)
    if not result.pr_head:
        return {"pull_request": pull_request.reference, "head": None, "queued": False,
                "detail": "The forge publishes no head ref for this pull request."}
    return pull_request_record_head(pull_request=pull_request, sha=result.pr_head)


@transaction.atomic
def pull_request_record_head(*, pull_request: PullRequest, sha: str, note: str = "") -> dict:
    """Pin `sha` as the PR's head and queue its verification, once per head."""
    commit = commit_get_or_create(repository=pull_request.repository, sha=sha)
    _, created = pull_request_pin_commit(
        pull_request=pull_request, commit=commit, role=PinnedCommit.Role.HEAD, note=note or "pushed"
    )
    run = verification_run_request(pull_request=pull_request, commit_sha=commit.sha) if created else None
    return {"pull_request": pull_request.reference, "head": commit.sha, "queued": created,
            "run": run.pk if run else None}
