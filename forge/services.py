"""Reporting verification to GitHub: rows for what to post, written in the caller's transaction,
and their sending by a task once it commits.

Nothing here may fail a verification: building a report runs in its own savepoint and a failure
is logged; a call GitHub refuses is kept with GitHub's message and what to fix, for the pull
request's page and the admin."""
import hashlib
import json
import logging
from datetime import timedelta

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from findings.enqueue import enqueue, enqueue_later
from findings.models import VerificationRun
from forge import content
from forge.github import Failure, credentials_kind, github_call, retry_delay
from forge.models import GitHubCall
from reviews.models import Commit, PullRequest, Repository, is_full_sha
from reviews.selectors import pull_request_latest_head

logger = logging.getLogger(__name__)

MAX_ATTEMPTS = 6


# --- What to post ------------------------------------------------------------------------------


def verification_run_report(*, run: VerificationRun) -> list[GitHubCall]:
    """Record what to tell GitHub about `run`: `in_progress` while it is queued or running,
    `completed` with the gate's conclusion once it ended. Never raises."""
    try:
        with transaction.atomic():
            return _run_report(run)
    except Exception:
        logger.exception("Could not prepare the GitHub report of verification run %s", run.pk)
        return []


def _run_report(run: VerificationRun) -> list[GitHubCall]:
    run.refresh_from_db(fields=["status", "message"])
    pull_request = PullRequest.objects.select_related("repository").get(pk=run.pull_request_id)
    repository = pull_request.repository
    if not (repository.publish_checks or repository.publish_comment):
        return []
    commit = _reported_commit(run)
    if commit is None or (run.is_active and not is_full_sha(commit.sha)):
        # An abbreviated SHA is resolved by the verification itself: its end is reported.
        return []
    calls: list[GitHubCall] = []
    finished = not run.is_active
    report = (
        content.commit_report(
            pull_request=pull_request, commit=commit,
            run_failed=run.status == VerificationRun.Status.FAILED, run_message=run.message,
        )
        if finished
        else None
    )
    if repository.publish_checks:
        kind = credentials_kind()
        if kind == "app":
            calls += _check_run_calls(pull_request, commit, report)
        elif kind == "token":
            calls += _status_calls(pull_request, commit, report)
        else:
            calls += _record(pull_request, commit, GitHubCall.Kind.CHECK_RUN, "not configured", [{}],
                             failure=("No GitHub credentials are configured.",
                                      "Set RECHECK_GITHUB_APP_ID and RECHECK_GITHUB_APP_PRIVATE_KEY (a GitHub App, "
                                      "for check runs), or RECHECK_GITHUB_TOKEN (commit statuses only)."))
    if repository.publish_comment and report is not None and _is_latest(pull_request, commit):
        calls += _record(pull_request, commit, GitHubCall.Kind.COMMENT, report.conclusion, [{"body": report.comment}])
    _enqueue([call for call in calls if call.status == GitHubCall.Status.PENDING])
    return calls


def _reported_commit(run: VerificationRun) -> Commit | None:
    """The commit a run's report is about: its own, or for a run over every pin, the PR's head."""
    if run.commit_id:
        return Commit.objects.get(pk=run.commit_id)
    return pull_request_latest_head(run.pull_request)


def _is_latest(pull_request: PullRequest, commit: Commit) -> bool:
    """The comment speaks of the PR's latest head; a re-run of an older commit or a merge group's
    commit gets its check, not the comment."""
    head = pull_request_latest_head(pull_request)
    return head is None or head.pk == commit.pk


def _check_run_calls(pull_request: PullRequest, commit: Commit, report) -> list[GitHubCall]:
    base = {"name": content.CHECK_NAME, "head_sha": commit.sha}
    details_url = content.site_url(content.Links(pull_request=pull_request).blockers)
    if details_url:
        base["details_url"] = details_url
    if report is None:
        body = {
            **base,
            "status": "in_progress",
            "output": {"title": content.in_progress_title(commit),
                       "summary": content.in_progress_summary(pull_request, commit)},
        }
        return _record(pull_request, commit, GitHubCall.Kind.CHECK_RUN, "in_progress", [body])
    output = {"title": report.title, "summary": report.summary}
    annotations = [annotation.as_github() for annotation in report.annotations]
    batches = [
        annotations[start : start + content.ANNOTATIONS_PER_REQUEST]
        for start in range(0, len(annotations), content.ANNOTATIONS_PER_REQUEST)
    ] or [[]]
    # The first call completes the run; the next ones add the remaining annotations to it.
    bodies = [{**base, "status": "completed", "conclusion": report.conclusion,
               "output": {**output, "annotations": batches[0]} if batches[0] else output}]
    bodies += [{"output": {**output, "annotations": batch}} for batch in batches[1:]]
    return _record(pull_request, commit, GitHubCall.Kind.CHECK_RUN, f"completed: {report.conclusion}", bodies)


def _status_calls(pull_request: PullRequest, commit: Commit, report) -> list[GitHubCall]:
    body = {"context": content.STATUS_CONTEXT}
    details_url = content.site_url(content.Links(pull_request=pull_request).blockers)
    if details_url:
        body["target_url"] = details_url
    if report is None:
        body.update(state="pending", description=f"Verifying {commit.short_sha}")
        state = "pending"
    else:
        body.update(state=report.status_state, description=report.status_description)
        state = f"{report.status_state}: {report.conclusion}"
    return _record(pull_request, commit, GitHubCall.Kind.COMMIT_STATUS, state, [body])


def _digest(kind: str, sha: str, bodies: list[dict]) -> str:
    return hashlib.sha256(json.dumps([kind, sha, bodies], sort_keys=True).encode()).hexdigest()


def _record(pull_request, commit, kind, state, bodies, *, failure: tuple[str, str] | None = None) -> list[GitHubCall]:
    """Rows for one report, unless the same report is the last one posted (or being posted) to
    the same check run, status or comment: the same state for the same SHA is not sent twice."""
    digest = _digest(kind, commit.sha, bodies)
    probe = GitHubCall(repository_id=pull_request.repository_id, pull_request=pull_request, sha=commit.sha, kind=kind)
    last = GitHubCall.objects.for_target(probe).order_by("-id").first()
    if last is not None and last.digest == digest and last.status != GitHubCall.Status.FAILED:
        return []
    if failure is None and not is_full_sha(commit.sha):
        failure = (f"{commit.sha} is an abbreviated SHA; GitHub needs the full one.",
                   "Fetch the repository (the verification resolves its commits), then verify again.")
    rows = [
        GitHubCall(
            repository_id=pull_request.repository_id, pull_request=pull_request, sha=commit.sha, kind=kind,
            state=state, part=index, parts=len(bodies), digest=digest, body=body,
            **({"status": GitHubCall.Status.FAILED, "response_message": failure[0], "hint": failure[1]}
               if failure else {}),
        )
        for index, body in enumerate(bodies, start=1)
    ]
    for row in rows:
        row.save()
    return rows


def _enqueue(calls: list[GitHubCall]) -> None:
    """Send each target's first new call once the transaction commits; each call sent queues the
    next of its target, so a check run's batches go in order."""
    firsts = {}
    for call in calls:
        firsts.setdefault((call.kind, call.sha, call.pull_request_id), call.pk)

    def send():
        for pk in firsts.values():
            try:
                enqueue("forge.tasks.send_github_call", pk)
            except Exception:  # a broker that is down: the row stays pending and shows it
                logger.exception("GitHub call %s could not be queued", pk)

    if firsts:
        transaction.on_commit(send)


# --- Sending -----------------------------------------------------------------------------------


def github_call_send(*, call_id: int) -> GitHubCall | None:
    """Send one pending call, after the earlier calls of its target. Claimed with a conditional
    update, so a duplicated task sends it once. Returns the row, or None when there was nothing
    to do (already claimed, or an earlier call goes first)."""
    call = GitHubCall.objects.select_related("repository", "pull_request").filter(pk=call_id).first()
    if call is None or call.status != GitHubCall.Status.PENDING:
        return None
    if GitHubCall.objects.for_target(call).unfinished().filter(pk__lt=call.pk).exists():
        return None  # the earlier call queues this one when it is done
    claimed = GitHubCall.objects.filter(pk=call.pk, status=GitHubCall.Status.PENDING).update(
        status=GitHubCall.Status.SENDING, attempts=F("attempts") + 1
    )
    if claimed != 1:
        return None
    call.refresh_from_db()
    try:
        github_id, status = _send(call)
    except Failure as failure:
        _failed(call, failure)
    else:
        GitHubCall.objects.filter(pk=call.pk).update(
            status=GitHubCall.Status.SENT, sent_at=timezone.now(), github_id=github_id, response_status=status,
            response_message="", hint="", next_attempt_at=None,
        )
    call.refresh_from_db()
    if call.is_finished:
        _enqueue_next(call)
    return call


def _enqueue_next(call: GitHubCall) -> None:
    following = GitHubCall.objects.for_target(call).filter(pk__gt=call.pk, status=GitHubCall.Status.PENDING)
    next_call = following.order_by("id").first()
    if next_call is not None:
        _enqueue([next_call])


def _failed(call: GitHubCall, failure: Failure) -> None:
    retry = failure.retryable and call.attempts < MAX_ATTEMPTS
    delay = retry_delay(failure, call.attempts) if retry else None
    GitHubCall.objects.filter(pk=call.pk).update(
        status=GitHubCall.Status.PENDING if retry else GitHubCall.Status.FAILED,
        response_status=failure.status,
        response_message=failure.message,
        hint=_hint(call, failure, gave_up=failure.retryable and not retry),
        next_attempt_at=timezone.now() + timedelta(seconds=delay) if retry else None,
    )
    if retry:
        def send_later():
            try:
                enqueue_later("forge.tasks.send_github_call", call.pk, countdown=delay)
            except Exception:
                logger.exception("GitHub call %s could not be queued again", call.pk)

        transaction.on_commit(send_later)


PERMISSIONS = {
    GitHubCall.Kind.CHECK_RUN: "checks: write",
    GitHubCall.Kind.COMMIT_STATUS: "commit statuses: write",
    GitHubCall.Kind.COMMENT: "pull requests: write",
}


def _hint(call: GitHubCall, failure: Failure, *, gave_up: bool) -> str:
    """What a person should do about `failure`, in the words of GitHub's settings pages."""
    slug = call.repository.slug
    app = credentials_kind() == "app"
    who = "the App" if app else "the token (RECHECK_GITHUB_TOKEN)"
    if failure.rate_limited:
        return ("GitHub's rate limit: Recheck waits as long as GitHub asks and tries again."
                if not gave_up else "Still rate limited after several attempts: verify again later.")
    if failure.retryable:
        return ("GitHub did not answer or failed: Recheck tries again with backoff."
                if not gave_up else f"GitHub kept failing after {call.attempts} attempts: verify again later.")
    if failure.status == 401:
        return ("GitHub refused the credentials: check RECHECK_GITHUB_APP_ID and the private key (a new key "
                "replaces the old one)." if app else "GitHub refused RECHECK_GITHUB_TOKEN: it expired or was revoked.")
    if failure.status == 403:
        if app:
            return (f"The App lacks {PERMISSIONS[call.kind]} on {slug}: grant it in the App's permissions and "
                    "accept the new permissions on the installation.")
        return (f"The token (RECHECK_GITHUB_TOKEN) lacks {PERMISSIONS[call.kind]} on {slug}: give a fine-grained "
                "token that permission on this repository.")
    if failure.status == 404:
        return (f"GitHub shows no {slug} to {who}: install the App on {slug} (or give the token access), "
                "and check the repository's slug.")
    if failure.status == 422:
        return ("GitHub refused what was sent: the commit must be in the repository on GitHub (push it), "
                "and the message above says which field.")
    return "See GitHub's message above."


def _send(call: GitHubCall) -> tuple[int | None, int]:
    repository = call.repository
    owner, name = repository.owner, repository.name
    if call.kind == GitHubCall.Kind.COMMIT_STATUS:
        answer = github_call(repository, lambda gh: gh.rest.repos.create_commit_status(owner, name, call.sha,
                                                                                        data=call.body))
        return answer.parsed_data.id, answer.status_code
    if call.kind == GitHubCall.Kind.CHECK_RUN:
        return _send_check_run(call, owner, name)
    return _send_comment(call, owner, name)


def _send_check_run(call: GitHubCall, owner: str, name: str) -> tuple[int | None, int]:
    """Create the check run for this SHA, or update the one already posted: re-verifying a SHA
    updates its run rather than adding another."""
    sent = GitHubCall.objects.for_target(call).filter(status=GitHubCall.Status.SENT, github_id__isnull=False)
    if call.part > 1:
        # The rest of a report's annotations go to the run its first call posted, and nowhere else.
        sent = sent.filter(digest=call.digest, part=1)
    check_run_id = sent.order_by("-id").values_list("github_id", flat=True).first()
    if check_run_id is None and call.part > 1:
        raise Failure(None, "The first call of this report failed, so there is no check run to add to.",
                      retryable=False)
    if check_run_id is None:
        answer = github_call(call.repository, lambda gh: gh.rest.checks.create(owner, name, data=call.body))
    else:
        body = {key: value for key, value in call.body.items() if key != "head_sha"}
        answer = github_call(call.repository, lambda gh: gh.rest.checks.update(owner, name, check_run_id, data=body))
    return answer.parsed_data.id, answer.status_code


def _send_comment(call: GitHubCall, owner: str, name: str) -> tuple[int | None, int]:
    """Edit Recheck's comment on the PR (remembered, or found by its hidden marker), else create it."""
    number = call.pull_request.number
    comment_id = (
        GitHubCall.objects.for_target(call).filter(status=GitHubCall.Status.SENT, github_id__isnull=False)
        .order_by("-id").values_list("github_id", flat=True).first()
    )
    repository = call.repository
    if comment_id is not None:
        try:
            answer = github_call(repository, lambda gh: gh.rest.issues.update_comment(owner, name, comment_id,
                                                                                       data=call.body))
            return answer.parsed_data.id, answer.status_code
        except Failure as failure:
            if failure.status != 404:
                raise
    comment_id = github_call(repository, lambda gh: _find_marked_comment(gh, owner, name, number))
    if comment_id is not None:
        answer = github_call(repository, lambda gh: gh.rest.issues.update_comment(owner, name, comment_id,
                                                                                   data=call.body))
    else:
        answer = github_call(repository, lambda gh: gh.rest.issues.create_comment(owner, name, number,
                                                                                   data=call.body))
    return answer.parsed_data.id, answer.status_code


def _find_marked_comment(gh, owner: str, name: str, number: int) -> int | None:
    for comment in gh.rest.paginate(gh.rest.issues.list_comments, owner=owner, repo=name, issue_number=number,
                                    per_page=100):
        if content.COMMENT_MARKER in (comment.body or ""):
            return comment.id
    return None


# --- What GitHub tells us ----------------------------------------------------------------------


def repository_installation_record(*, installation_id: int | None, slugs: list[str]) -> int:
    """Remember (or with None, forget) the App's installation on these repositories."""
    query = Repository.objects.none()
    for slug in slugs:
        query = query | Repository.objects.filter(slug__iexact=slug)
    return query.update(github_installation_id=installation_id)


def installation_forget(*, installation_id: int) -> int:
    return Repository.objects.filter(github_installation_id=installation_id).update(github_installation_id=None)


@transaction.atomic
def github_call_retry(*, call: GitHubCall) -> bool:
    """Send a failed call again (after its cause was fixed: a permission granted, the App
    installed). Returns whether it was failed and is queued now."""
    queued = GitHubCall.objects.filter(pk=call.pk, status=GitHubCall.Status.FAILED).update(
        status=GitHubCall.Status.PENDING, attempts=0, next_attempt_at=None
    )
    if queued:
        call.refresh_from_db()
        _enqueue([call])
    return bool(queued)
