"""Triage: a Reviewer makes a review thread a blocker or a cleanup, attaches it to a finding of
the pull request, or says it is not a finding; on the site, through the API, or with a
`/recheck blocker` / `/recheck cleanup` comment in the thread itself.

A new finding is written through `findings.services.authoring.finding_write` (the editor's own
service: the bundle's validation, a history event, an audit entry). Its evidence comes from where
the comment is: a comment on lines of the new code (RIGHT) is a snippet pinned at the comment's
`original_commit_id` and `original_start_line..original_line`; a comment on a whole file is a path
item; a comment on the old code (LEFT), or on lines the mirror cannot show (the commit or the file
is not there, the lines are beyond the file, the file is binary), is a note quoting where it was,
and the thread's `placement` and `problem` say so."""
from __future__ import annotations

import re

from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from access.audit import audit_record, audit_refusal, writes
from access.permissions import Action, ActionRefused, actor_check, user_may
from core.errors import RecheckError
from core.vocabulary import location
from findings.exchange.schema import finding_validate
from findings.models import Finding
from findings.services.authoring import finding_write
from forge.outbox.models import ForgeCall
from forge.threads.calls import ANSWER, thread_call_record
from forge.threads.models import ReviewComment, ReviewThread
from reviews.mirrors import repository_fetch, repository_reader

COMMAND_PREFIX = "/recheck"
COMMAND = re.compile(r"^/recheck\s+(?P<kind>blocker|cleanup)\b", re.IGNORECASE)
TRIAGE_OUTCOMES = (Finding.Kind.BLOCKER, Finding.Kind.CLEANUP, ReviewThread.State.NOT_A_FINDING)
TITLE_LIMIT = 300


class TriageError(RecheckError):
    """A triage that cannot be done as asked (already triaged, another pull request's finding)."""


def _title(text: str) -> str:
    for line in text.splitlines():
        # A title is plain text (pages escape it): Markdown's heading and quote marks and emphasis go.
        line = re.sub(r"[`*_]", "", re.sub(r"^[\s#>]+", "", COMMAND.sub("", line))).strip()
        if line and not line.startswith("<!--"):
            return line if len(line) <= TITLE_LIMIT else line[: TITLE_LIMIT - 1] + "…"
    return ""


def _placement(thread: ReviewThread) -> tuple[dict, str, str, str]:
    """The evidence item for a thread's comment, how it was chosen, and a problem with its detail."""
    where = location(thread.path, thread.original_start_line or thread.original_line, thread.original_line)
    note = {"kind": "note", "text": f"Review comment on {where or 'the pull request'}"
            + (f" at {thread.original_commit_id[:12]}" if thread.original_commit_id else "") + "."}
    if thread.side == "LEFT":
        return note, f"On the old side of the diff (LEFT) at {where}: recorded as a note.", "", ""
    if not thread.path or not thread.original_commit_id:
        return note, "The comment names no file or commit: recorded as a note.", "", ""
    try:
        blob = _read(thread)
    except _Missing as missing:
        return note, f"{missing.detail}: recorded as a note.", missing.problem, missing.detail
    if thread.subject_type == "file" or not thread.original_line:
        item = {"kind": "path", "path": thread.path, "expect": "exists", "commit": thread.original_commit_id}
        return item, f"A comment on the whole file {thread.path}: recorded as a path item.", "", ""
    if blob.is_binary or blob.too_large:
        detail = f"{thread.path} is a binary file at {thread.original_commit_id[:12]}"
        return note, f"{detail}: recorded as a note.", ReviewThread.Problem.BINARY_FILE, detail
    start, end = thread.original_start_line or thread.original_line, thread.original_line
    count = len(blob.lines())
    if end > count or start > end:
        detail = f"Lines {start}–{end} are beyond {thread.path}, which has {count} lines at " \
                 f"{thread.original_commit_id[:12]}"
        return note, f"{detail}: recorded as a note.", ReviewThread.Problem.LINE_BEYOND_FILE, detail
    item = {"kind": "snippet", "path": thread.path, "start_line": start, "end_line": end,
            "commit": thread.original_commit_id}
    return item, f"A snippet of {location(thread.path, start, end)} at {thread.original_commit_id[:12]}.", "", ""


class _Missing(Exception):
    def __init__(self, problem: str, detail: str):
        self.problem, self.detail = problem, detail


def _read(thread: ReviewThread):
    repository = thread.pull_request.repository
    sha = thread.original_commit_id
    for attempt in (1, 2):
        try:
            with repository_reader(repository) as reader:
                if reader.resolve(sha):
                    blob = reader.read_blob(sha, thread.path)
                    if blob is None:
                        raise _Missing(ReviewThread.Problem.FILE_NOT_IN_MIRROR,
                                       f"{thread.path} is not in the mirror at {sha[:12]}")
                    return blob
        except _Missing:
            raise
        except RecheckError:
            pass
        if attempt == 1:
            try:  # the commit may be newer than the mirror: fetched once
                repository_fetch(repository=repository, pr_number=thread.pull_request.number)
            except RecheckError:
                break
    raise _Missing(ReviewThread.Problem.COMMIT_NOT_IN_MIRROR, f"Commit {sha[:12]} is not in the mirror")


@writes("review_thread.triage")
def review_thread_triage(*, thread: ReviewThread, actor, outcome: str, source: str = "site") -> ReviewThread:
    """Make a new thread a blocker, a cleanup, or not a finding (see the module). Refused when the
    thread is triaged already (TriageError), or for want of the Reviewer role (ActionRefused)."""
    pull_request = thread.pull_request
    target = f"{pull_request.reference} review thread {thread.root_comment_id}"
    actor_check(actor, Action.WRITE, pull_request.repository, audit_action="review_thread.triage", target=target)
    if outcome not in TRIAGE_OUTCOMES:
        raise TriageError(f"Triage as one of {', '.join(TRIAGE_OUTCOMES)}, not {outcome!r}.")
    with transaction.atomic():
        thread = ReviewThread.objects.select_for_update().select_related("pull_request__repository").get(pk=thread.pk)
        if thread.is_triaged:
            raise TriageError(f"Thread {thread.root_comment_id} is already {thread.get_state_display().lower()}.")
        if outcome == ReviewThread.State.NOT_A_FINDING:
            thread.state = outcome
        else:
            thread.finding = _finding_create(thread, actor, outcome, source)
            thread.state = ReviewThread.State.FINDING
        thread.triaged_by = actor if actor is not None and actor.is_authenticated else None
        thread.triaged_at = timezone.now()
        thread.save()
        audit_record(action="review_thread.triage", actor=actor, source=source, target=target,
                     repository=pull_request.repository,
                     changes={"state": [ReviewThread.State.NEW, thread.state],
                              "finding": [None, thread.finding.number if thread.finding else None]},
                     message=thread.placement)
    return thread


def _finding_create(thread: ReviewThread, actor, kind: str, source: str) -> Finding:
    pull_request = thread.pull_request
    first = thread.comments.filter(github_id=thread.root_comment_id, deleted=False).first()
    body = first.body if first else ""
    item, thread.placement, thread.problem, thread.problem_detail = _placement(thread)
    if thread.problem == "" and first is None:
        thread.problem = ReviewThread.Problem.FIRST_DELETED
    number = (Finding.objects.filter(pull_request=pull_request).aggregate(top=Max("number"))["top"] or 0) + 1
    data = {
        "number": number, "kind": kind,
        "title": _title(body) or f"Review comment on {thread.path or pull_request.reference}",
        "body": body, "evidence": [item],
        **({"review_comment_url": thread.html_url} if thread.html_url else {}),
        **({"location": {"path": thread.path, "line": thread.original_line}} if thread.path else {}),
    }
    saved = finding_write(pull_request=pull_request, item=finding_validate(data), actor=actor, source=source)
    return saved.finding


@writes("review_thread.attach")
def review_thread_attach(*, thread: ReviewThread, finding: Finding, actor, source: str = "site") -> ReviewThread:
    """Attach a new thread to a finding of the same pull request (the thread adds no evidence)."""
    pull_request = thread.pull_request
    target = f"{pull_request.reference} review thread {thread.root_comment_id}"
    actor_check(actor, Action.WRITE, pull_request.repository, audit_action="review_thread.attach", target=target)
    if finding.pull_request_id != pull_request.pk:
        raise TriageError(f"Finding {finding.number} is not one of {pull_request.reference}'s findings.")
    with transaction.atomic():
        thread = ReviewThread.objects.select_for_update().get(pk=thread.pk)
        if thread.is_triaged:
            raise TriageError(f"Thread {thread.root_comment_id} is already {thread.get_state_display().lower()}.")
        thread.state, thread.finding = ReviewThread.State.ATTACHED, finding
        thread.placement = f"Attached to finding {finding.number}."
        thread.triaged_by = actor if actor is not None and actor.is_authenticated else None
        thread.triaged_at = timezone.now()
        thread.save()
        audit_record(action="review_thread.attach", actor=actor, source=source, target=target,
                     repository=pull_request.repository, changes={"finding": [None, finding.number]})
    return thread


def _forge_user(comment: ReviewComment):
    """The Recheck user whose forge sign-in is the comment's author, if any."""
    from allauth.socialaccount.models import SocialAccount

    if comment.author_id is None:
        return None
    # allauth's provider ids are the forges' names (`github`, `gitlab`): the author's sign-in there.
    provider = comment.thread.pull_request.repository.forge
    account = SocialAccount.objects.filter(provider=provider, uid=str(comment.author_id)).select_related("user").first()
    return account.user if account is not None and account.user.is_active else None


@writes("review_thread.command", system="a comment on the forge: its author is checked as the triage's actor")
def thread_command_handle(*, comment: ReviewComment) -> str:
    """Act once on a `/recheck blocker|cleanup` comment: triage its thread for its author when
    they hold the Reviewer role on the repository (through their forge sign-in), otherwise answer
    in the thread, politely, who may. Returns what was done, in a sentence."""
    claimed = ReviewComment.objects.filter(pk=comment.pk, command_handled=False).update(command_handled=True)
    if not claimed:
        return f"Comment {comment.github_id} was handled already."
    thread = comment.thread
    repository = thread.pull_request.repository
    match = COMMAND.match(comment.body.strip())
    if match is None:
        return f"Comment {comment.github_id} is not a command Recheck knows."
    user = _forge_user(comment)
    if user is None or not user_may(user, Action.WRITE, repository):
        why = ("has not signed in to Recheck with GitHub" if user is None
               else f"does not hold the Reviewer role on {repository.slug}")
        audit_refusal(action="review_thread.triage", actor=user, source="webhook",
                      target=f"{thread.pull_request.reference} review thread {thread.root_comment_id}",
                      repository=repository, message=f"/recheck by @{comment.author_login}, who {why}.")
        with transaction.atomic():
            thread_call_record(thread=thread, kind=ForgeCall.Kind.THREAD_REPLY, state=ANSWER, body={"body": (
                f"Thanks, @{comment.author_login}. Recheck records `/recheck blocker` and `/recheck cleanup` from "
                f"people with the Reviewer role on {repository.slug} who have signed in to Recheck with GitHub; "
                f"@{comment.author_login} {why}. An admin of the repository can grant the role, or a Reviewer "
                "can triage this thread."
            )})
        return f"Answered @{comment.author_login}: only Reviewers may triage."
    try:
        review_thread_triage(thread=thread, actor=user, outcome=match["kind"].lower(), source="webhook")
    except (TriageError, ActionRefused, RecheckError) as error:
        return f"/recheck by @{comment.author_login} was not done: {error}"
    return f"Triaged thread {thread.root_comment_id} as a {match['kind'].lower()} for {user.get_username()}."
