"""A repository's Follow-ups page, and a maintainer's decision on one (mark fixed, close with a
reason) from it. Reads come from `findings.selectors.follow_ups`, the one shape the API serves."""
from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect
from django.views.decorators.http import require_GET, require_POST

from access.permissions import Action
from core.errors import RecheckError
from findings.models import FollowUp
from findings.selectors.follow_ups import STATE_FILTERS, follow_up_summary, repository_follow_ups
from findings.services.follow_ups.decisions import follow_up_close, follow_up_mark_fixed
from reviews.models import Repository
from web.doors import pull_request_for, readable, require_action
from web.pagecache import kept_query, page_hour, page_served
from web.views.repository_pages import repository_page_key, repository_read

PAGE_LIMIT = 200


@require_GET
@readable
def repository_follow_ups_page(request, owner: str, name: str):
    read = repository_read(request, owner, name)
    state = request.GET.get("state", "")
    if state not in STATE_FILTERS:
        state = ""
    # Kept by the repository's version (a follow-up's write moves its PR's generation) and, as it
    # shows each one's age and whether it is due soon or overdue, the hour.
    key = repository_page_key(request, read, "follow_ups", extra=(page_hour(),),
                              query=kept_query(request, {"state": lambda value: value in STATE_FILTERS}))

    def build():
        repository = Repository.objects.get(pk=read.repository.pk)
        # The soonest due first: what is overdue, then what falls due next.
        follow_ups = list(repository_follow_ups(repository, state=state, by_due_date=True)[:PAGE_LIMIT])
        return "findings/follow_ups.html", {
            "repository": repository,
            "rows": [(follow_up, follow_up_summary(follow_up)) for follow_up in follow_ups],
            "state": state,
            "states": [(choice, FollowUp.State(value).label) for choice, value in STATE_FILTERS.items()],
            "may_decide": key.reader.may(Action.RESOLVE),
            "limit": PAGE_LIMIT,
        }

    return page_served(request, key, build)


@require_POST
def follow_up_decide(request, owner: str, name: str, number: int, finding_number: int):
    """Mark the follow-up of a finding fixed, or close it with a reason (the service checks the
    role and audits); back to the repository's Follow-ups page with what happened."""
    pull_request = pull_request_for(request, owner, name, number)
    require_action(request, Action.RESOLVE, pull_request.repository, audit_action="follow_up.decide",
                   target=f"{pull_request.reference} finding {finding_number}")
    follow_up = get_object_or_404(FollowUp.objects.select_related("repository", "finding__pull_request__repository"),
                                  finding__pull_request=pull_request, finding__number=finding_number)
    action = request.POST.get("action", "")
    try:
        if action == "mark_fixed":
            follow_up_mark_fixed(
                actor=request.user, follow_up=follow_up, commit_sha=request.POST.get("commit", "")[:40],
                note=request.POST.get("note", "")[:2000], still_holds_confirmed=request.POST.get("anyway") == "1",
            )
            messages.success(request, f"The follow-up of {follow_up.finding.reference} is marked fixed.")
        elif action == "close":
            follow_up_close(actor=request.user, follow_up=follow_up, reason=request.POST.get("reason", "")[:2001])
            messages.success(request, f"The follow-up of {follow_up.finding.reference} is closed.")
        else:
            messages.error(request, "Say what to do: mark it fixed, or close it with a reason.")
    except RecheckError as error:
        messages.error(request, str(error))
    return redirect("findings:repository_follow_ups", owner=pull_request.repository.owner,
                    name=pull_request.repository.name)
