"""Reads about what was said to a follow-up's GitHub issue."""
from forge.follow_up_issues.models import FollowUpIssue
from forge.outbox.models import ForgeCall


ISSUE_STEPS = {"open": "Issue #{number} opened on GitHub", "close": "Issue #{number} closed on GitHub",
               "reopen": "Issue #{number} reopened on GitHub"}


def follow_up_issue_history(follow_up) -> list[dict]:
    """What was said to the follow-up's GitHub issue, as entries of its history (sent calls only)."""
    issue = FollowUpIssue.objects.filter(follow_up=follow_up).first()
    if issue is None or issue.number is None:
        return []
    calls = ForgeCall.objects.filter(repository_id=follow_up.repository_id, kind=ForgeCall.Kind.ISSUE,
                                      body__follow_up=follow_up.pk, status=ForgeCall.Status.SENT).order_by("sent_at")
    entries = [{"at": call.sent_at, "what": ISSUE_STEPS.get(call.state, "Issue #{number}").format(number=issue.number),
                "commit": None, "who": "", "note": ""} for call in calls]
    if issue.problem and entries:
        entries[-1]["note"] = issue.problem
    return entries
