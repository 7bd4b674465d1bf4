"""Sending a follow-up's issue call to GitHub (`forge.follow_up_issues` writes them): safe to do
again. A create tried again looks for the issue by the hidden marker its body carries before
making another, and a comment tried again looks for its own marker. An issue deleted on GitHub
(404, 410) or locked (403, 422) is recorded as such on the follow-up's issue, with GitHub's
message, and the call ends there: nothing a retry could change."""
from types import SimpleNamespace

from forge.follow_up_issues.models import FollowUpIssue
from forge.follow_up_issues.services import OPEN, REOPEN, issue_marker
from forge.github.client import github_call, rate_limit_wait
from forge.outbox.failures import Failure
from forge.outbox.models import ForgeCall


GONE_STATUSES = (404, 410)


LOCKED_STATUSES = (403, 422)


def _comment_marker(call: ForgeCall) -> str:
    return f"<!-- recheck-call:{call.pk} -->"


def issue_send(call: ForgeCall) -> tuple[int | None, int, float | None]:
    """Send one issue call (see `forge.github.calls.call_send`)."""
    repository = call.repository
    owner, name = repository.owner, repository.name
    issue, _ = FollowUpIssue.objects.get_or_create(follow_up_id=call.body["follow_up"])
    if call.body["action"] == OPEN:
        return _open(call, issue, owner, name)
    if issue.number is None or issue.state == FollowUpIssue.State.DELETED:
        return None, 200, None  # no issue to change: it was never made, or is gone
    reopen = call.body["action"] == REOPEN
    answer = None
    try:
        if not _commented(call, owner, name, issue.number):
            text = f"{call.body['text']}\n\n{_comment_marker(call)}"
            answer = github_call(repository, lambda gh: gh.rest.issues.create_comment(
                owner, name, issue.number, data={"body": text}))
    except Failure as failure:
        if _recorded(issue, failure):
            return issue.number, failure.status, None
        raise
    data = {"state": "open"} if reopen else {"state": "closed", "state_reason": call.body["state_reason"]}
    try:
        answer = github_call(repository, lambda gh: gh.rest.issues.update(owner, name, issue.number, data=data))
    except Failure as failure:
        if _recorded(issue, failure):
            return issue.number, failure.status, None
        raise
    FollowUpIssue.objects.filter(pk=issue.pk).exclude(state=FollowUpIssue.State.LOCKED).update(
        state=FollowUpIssue.State.OPEN if reopen else FollowUpIssue.State.CLOSED, problem="")
    return issue.number, answer.status_code, rate_limit_wait(answer)


def _recorded(issue: FollowUpIssue, failure: Failure) -> bool:
    """Record an issue deleted or locked on GitHub; whether the failure was one of those."""
    if failure.status in GONE_STATUSES:
        state, words = FollowUpIssue.State.DELETED, "deleted on GitHub"
    elif failure.status in LOCKED_STATUSES:
        state, words = FollowUpIssue.State.LOCKED, "locked on GitHub, or not open to changes"
    else:
        return False
    FollowUpIssue.objects.filter(pk=issue.pk).update(
        state=state, problem=f"Issue #{issue.number} is {words} ({failure.status}: {failure.message})"[:2000])
    return True


def _open(call: ForgeCall, issue: FollowUpIssue, owner: str, name: str):
    repository = call.repository
    if issue.number is not None:
        return issue.number, 200, None
    number = _marked_issue(call, owner, name) if call.attempts > 1 else None
    answer = SimpleNamespace(status_code=200, headers={})
    if number is None:
        data = {"title": call.body["title"], "body": call.body["text"]}
        answer = github_call(repository, lambda gh: gh.rest.issues.create(owner, name, data=data))
        number = answer.parsed_data.number
    # At once, not when the call ends: a later failure must not open a second issue.
    FollowUpIssue.objects.filter(pk=issue.pk).update(number=number, state=FollowUpIssue.State.OPEN, problem="")
    return number, answer.status_code, rate_limit_wait(answer)


def _marked_issue(call: ForgeCall, owner: str, name: str) -> int | None:
    """The issue an earlier attempt of `call` opened without Recheck hearing the answer."""
    marker = issue_marker(call.body["follow_up"])

    def find(gh):
        answer = gh.rest.issues.list_for_repo(owner, name, state="all", per_page=100)
        return [issue.number for issue in answer.parsed_data if marker in (issue.body or "")]
    found = github_call(call.repository, find)
    return found[0] if found else None


def _commented(call: ForgeCall, owner: str, name: str, number: int) -> bool:
    """Whether an earlier attempt of `call` posted its comment already."""
    if call.attempts <= 1:
        return False
    marker = _comment_marker(call)

    def find(gh):
        return [comment.id for comment in gh.rest.paginate(
            gh.rest.issues.list_comments, owner=owner, repo=name, issue_number=number, per_page=100)
            if marker in (comment.body or "")]
    return bool(github_call(call.repository, find))
