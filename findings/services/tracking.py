"""Following a pull request's head as it is pushed again: from the forge's ref (beat's tracking)
or from a webhook. Both record a head through `pull_request_record_head`."""
from dataclasses import dataclass

from django.db import transaction

from access.audit import writes
from core.errors import RecheckError
from engine.git.history import is_ancestor
from findings.models import VerificationRun
from findings.services.follow_ups.opening import follow_ups_open_on_merge
from findings.services.runs import verification_run_request, verification_runs_supersede
from findings.selectors.findings import pull_request_is_verified_at
from reviews.mirrors import repository_fetch, repository_reader
from reviews.models import Commit, PinnedCommit, PullRequest
from reviews.services import commit_get_or_create, pull_request_pin_commit


# Why recording a head checks no person: the forge reports it (a webhook checked by its signature,
# or beat's tracking), and the run it queues is recorded by verification_run_request.
FORGE = "the forge reports a new head (a signed webhook, or beat's tracking)"


@dataclass(frozen=True)
class HeadRecorded:
    """What recording a head did: whether it pinned a new commit, and the run that will verify it
    (`queued` when this call created the run; an earlier run still under way is returned too)."""

    pull_request: PullRequest
    commit: Commit
    pinned: bool
    run: VerificationRun | None
    queued: bool
    superseded: tuple[int, ...] = ()

    def describe(self) -> str:
        sha, reference = self.commit.short_sha, self.pull_request.reference
        if self.queued:
            replaced = f" It supersedes queued run(s) {', '.join(map(str, self.superseded))}." if self.superseded else ""
            return f"Pinned {sha} as head of {reference}; verification run {self.run.pk} queued.{replaced}"
        if self.run is not None:
            return f"{sha} of {reference} is already being verified (run {self.run.pk}); nothing more queued."
        return f"{sha} of {reference} is already pinned and verified; nothing queued."

    def as_dict(self) -> dict:
        return {"pull_request": self.pull_request.reference, "head": self.commit.sha, "queued": self.queued,
                "run": self.run.pk if self.run else None, "superseded": list(self.superseded),
                "detail": self.describe()}


@writes("pull_request.head", system=FORGE)
def pull_request_track_head(*, pull_request: PullRequest) -> dict:
    """Fetch the PR's head ref; a head not pinned yet is pinned as `head` and verified."""
    result = repository_fetch(repository=pull_request.repository, pr_number=pull_request.number)
    if not result.pr_head:
        return {"pull_request": pull_request.reference, "head": None, "queued": False,
                "detail": "The forge publishes no head ref for this pull request."}
    if pull_request.state == PullRequest.State.OPEN and _merged(pull_request, result.pr_head):
        # No webhook told us: the head is on the default branch, so the pull request was merged
        # (the forge keeps its head ref). Its follow-ups are checked at the branch's head.
        opened = follow_ups_open_on_merge(pull_request=pull_request)
        return {"pull_request": pull_request.reference, "head": result.pr_head, "queued": False,
                "detail": f"{pull_request.reference} was merged into {pull_request.repository.default_branch}; "
                          f"{len(opened)} follow-up(s) opened."}
    return pull_request_record_head(pull_request=pull_request, sha=result.pr_head).as_dict()


def _merged(pull_request: PullRequest, head: str) -> bool:
    """Whether `head` is in the history of the repository's default branch, behind its tip. A head
    that is the tip itself is not taken for a merge: a branch pushed as the default branch's
    head and opened as a pull request from there looks the same until something lands after it."""
    try:
        with repository_reader(pull_request.repository) as reader:
            branch = reader.resolve(f"refs/heads/{pull_request.repository.default_branch}")
            head = reader.resolve(head)
            return head != branch and is_ancestor(reader, head, branch)
    except RecheckError:
        return False


@writes("pull_request.head", system=FORGE)
@transaction.atomic
def pull_request_record_head(*, pull_request: PullRequest, sha: str, note: str = "") -> HeadRecorded:
    """Pin `sha` as the PR's head and queue its verification, once per head: a head that is
    verified already, or being verified, queues nothing, however often it is reported (webhook
    redeliveries, replays under new delivery ids, beat and webhook reporting the same push).

    A burst of pushes verifies the newest head: its run supersedes the runs still queued for the
    heads before it (`verification_runs_supersede`). A head pinned earlier and reported again is
    verified if it is not yet (a push back to it, or a late redelivery), superseding nothing newer."""
    commit = commit_get_or_create(repository=pull_request.repository, sha=sha)
    _, pinned = pull_request_pin_commit(
        pull_request=pull_request, commit=commit, role=PinnedCommit.Role.HEAD, note=note or "pushed"
    )
    run = None
    superseded: list[int] = []
    if pinned or not pull_request_is_verified_at(pull_request, commit):
        # The head comes from the forge (a signed delivery, or the fetched head ref): no second check.
        run = verification_run_request(pull_request=pull_request, commit_sha=commit.sha, commit_known=True)
        if run.created:
            superseded = verification_runs_supersede(run=run)
    return HeadRecorded(pull_request, commit, pinned, run, queued=bool(run and run.created),
                        superseded=tuple(superseded))
