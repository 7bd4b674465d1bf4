"""What Recheck does with the GitHub events that concern its check: a re-run asked for on GitHub,
a merge queue's group, a closed pull request, and the App's installations.

The webhook endpoint has checked the signature and claimed the delivery; each handler here reads
the few fields it needs and says what it did in one sentence. Payloads are read field by field
rather than validated whole against GitHub's schema: GitHub adds fields and events faster than
any model of them, and a real delivery must not be refused for a field Recheck does not read."""
import re
from dataclasses import dataclass, field

from findings.models import VerificationRun
from findings.services.follow_ups.opening import pull_request_closed_record
from findings.services.follow_ups.sweeps import follow_up_sweep_request
from findings.services.runs import verification_run_request
from core.errors import RecheckError
from forge.content import CHECK_NAME
from forge.github.services import installation_forget, repository_installation_record
from core.forges import GITHUB
from reviews.models import PinnedCommit, PullRequest, Repository
from reviews.services import commit_sha_checked, repository_default_branch_record

# GitHub names a merge group's branch gh-readonly-queue/<base>/pr-<number>-<head sha of that PR>.
MERGE_GROUP_REF = re.compile(r"(?:^|/)gh-readonly-queue/.+/pr-(?P<number>\d+)-[0-9a-f]{7,40}$")


class EventPayloadError(RecheckError):
    """A signed delivery that lacks a field GitHub always sends with this event."""


@dataclass
class EventOutcome:
    message: str
    runs: list[VerificationRun] = field(default_factory=list)


def _field(payload: dict, *path: str):
    value = payload
    for key in path:
        if not isinstance(value, dict) or key not in value:
            raise EventPayloadError(f"The payload has no {'.'.join(path)}, which GitHub sends with this event.")
        value = value[key]
    return value


def _sha(payload: dict, *path: str) -> str:
    try:
        return commit_sha_checked(str(_field(payload, *path)))
    except RecheckError as error:
        raise EventPayloadError(f"{'.'.join(path)}: {error}") from None


def _repository(payload: dict) -> tuple[str, Repository | None]:
    slug = str(_field(payload, "repository", "full_name"))
    # GitHub's events name GitHub's repositories: a GitLab project of the same path is not one.
    github = Repository.objects.filter(forge=GITHUB)
    repository = github.filter(slug=slug).first() or github.filter(slug__iexact=slug).first()
    return slug, repository


def _pull_requests_at(repository: Repository, sha: str, numbers: list[int]) -> list[PullRequest]:
    """The tracked pull requests a check on `sha` belongs to: those GitHub names, else those that
    have `sha` pinned (GitHub names none for a fork's pull request)."""
    pull_requests = PullRequest.objects.select_related("repository").filter(repository=repository)
    if numbers:
        return list(pull_requests.filter(number__in=numbers).order_by("number"))
    pinned = PinnedCommit.objects.filter(commit__repository=repository, commit__sha=sha).values("pull_request_id")
    return list(pull_requests.filter(pk__in=pinned).order_by("number"))


def check_rerequest_handle(*, event: str, payload: dict) -> EventOutcome:
    """`check_run` or `check_suite` `rerequested`: verify that SHA again, for each tracked pull
    request it belongs to (a run already under way for it is reused)."""
    subject = _field(payload, event)
    if event == "check_run" and subject.get("name") != CHECK_NAME:
        return EventOutcome(f"Ignored: a re-run of the check {subject.get('name')!r}, not of {CHECK_NAME!r}.")
    sha = _sha(payload, event, "head_sha")
    slug, repository = _repository(payload)
    if repository is None:
        return EventOutcome(f"Ignored: {slug} is not tracked here.")
    numbers = [int(item["number"]) for item in subject.get("pull_requests") or [] if "number" in item]
    pull_requests = _pull_requests_at(repository, sha, numbers)
    if not pull_requests:
        return EventOutcome(f"Ignored: no tracked pull request of {slug} is at {sha[:8]}.")
    runs = [verification_run_request(pull_request=pull_request, commit_sha=sha, commit_known=True)
            for pull_request in pull_requests]
    described = ", ".join(f"{run.pull_request.reference} (run {run.pk})" for run in runs)
    return EventOutcome(f"Re-verifying {sha[:8]} as GitHub asked: {described}.", runs=runs)


def merge_group_handle(*, payload: dict) -> EventOutcome:
    """`merge_group` `checks_requested`: verify the group's head commit (the pull request merged
    onto the queue's base) with the findings of the pull request it queues, and report on it, so
    a repository with a merge queue can require Recheck."""
    sha = _sha(payload, "merge_group", "head_sha")
    head_ref = str(_field(payload, "merge_group", "head_ref"))
    slug, repository = _repository(payload)
    if repository is None:
        return EventOutcome(f"Ignored: {slug} is not tracked here.")
    match = MERGE_GROUP_REF.search(head_ref)
    if match is None:
        raise EventPayloadError(f"merge_group.head_ref {head_ref!r} does not name the pull request it queues.")
    number = int(match["number"])
    pull_request = PullRequest.objects.select_related("repository").filter(repository=repository, number=number).first()
    if pull_request is None:
        return EventOutcome(f"Ignored: {slug}#{number} is not tracked here.")
    run = verification_run_request(pull_request=pull_request, commit_sha=sha, commit_known=True)
    return EventOutcome(
        f"Verifying merge group {sha[:8]} of {pull_request.reference} (run {run.pk}).", runs=[run]
    )


def pull_request_closed_handle(*, payload: dict) -> EventOutcome:
    """`pull_request` `closed`: record whether it was merged or closed; a merged one's unfinished
    findings become follow-ups, checked at its merge commit."""
    slug, repository = _repository(payload)
    number = int(_field(payload, "pull_request", "number"))
    pull_request = (PullRequest.objects.select_related("repository").filter(repository=repository, number=number)
                    .first() if repository else None)
    if pull_request is None:
        return EventOutcome(f"Ignored: {slug}#{number} is not tracked here.")
    merged = bool(_field(payload, "pull_request").get("merged"))
    merge_sha = ""
    if merged and _field(payload, "pull_request").get("merge_commit_sha"):
        merge_sha = _sha(payload, "pull_request", "merge_commit_sha")
    opened = pull_request_closed_record(pull_request=pull_request, merged=merged, merge_sha=merge_sha)
    if not merged:
        return EventOutcome(f"Recorded {pull_request.reference} as closed without merging: no follow-ups.")
    return EventOutcome(
        f"Recorded {pull_request.reference} as merged"
        + (f" at {merge_sha[:8]}" if merge_sha else "") + f"; {len(opened)} follow-up(s) opened."
    )


def push_handle(*, payload: dict) -> EventOutcome:
    """`push`: a push to a tracked repository's default branch checks its follow-ups at the new
    head. Other branches, tags and deleted branches change nothing. The forge's default branch
    is recorded when it was renamed there."""
    slug, repository = _repository(payload)
    if repository is None:
        return EventOutcome(f"Ignored: {slug} is not tracked here.")
    ref = str(_field(payload, "ref"))
    default = str((payload.get("repository") or {}).get("default_branch") or "")
    if default and ref == f"refs/heads/{default}":
        repository_default_branch_record(repository=repository, branch=default)
    if ref != f"refs/heads/{repository.default_branch}":
        return EventOutcome(f"Ignored: a push to {ref}, not to the default branch {repository.default_branch}.")
    if payload.get("deleted"):
        return EventOutcome(f"Ignored: the default branch {repository.default_branch} was deleted.")
    sha = _sha(payload, "after")
    sweep = follow_up_sweep_request(repository=repository, sha=sha, reason="push")
    if sweep is None:
        return EventOutcome(f"Nothing to check: {slug} has no follow-ups.")
    forced = " (force-pushed)" if payload.get("forced") else ""
    return EventOutcome(f"Checking the follow-ups of {slug} at {sha[:8]}{forced}.")


def installation_handle(*, event: str, payload: dict) -> EventOutcome:
    """`installation` and `installation_repositories`: remember which installation of the App
    serves which repository, so no call asks GitHub again, and forget one that is gone."""
    action = str(payload.get("action", ""))
    installation_id = int(_field(payload, "installation", "id"))
    if event == "installation" and action in ("deleted", "suspend"):
        forgotten = installation_forget(installation_id=installation_id)
        return EventOutcome(f"Installation {installation_id} {action}: forgotten on {forgotten} repositories.")
    if event == "installation" and action in ("created", "unsuspend", "new_permissions_accepted"):
        added = payload.get("repositories") or []
        removed = []
    elif event == "installation_repositories":
        added = payload.get("repositories_added") or []
        removed = payload.get("repositories_removed") or []
    else:
        return EventOutcome(f"Ignored: installation action {action!r}.")
    remembered = repository_installation_record(
        installation_id=installation_id, slugs=[str(item.get("full_name", "")) for item in added]
    )
    forgotten = repository_installation_record(
        installation_id=None, slugs=[str(item.get("full_name", "")) for item in removed]
    )
    return EventOutcome(
        f"Installation {installation_id}: remembered on {remembered} tracked repositories, "
        f"forgotten on {forgotten}."
    )
