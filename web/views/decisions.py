"""The site's decisions: Mark fixed, Dismiss and Reopen a finding, and the "Needs a decision"
pages. Each view loads, asks `user_may`, hands what was typed to `finding_resolve` (the service
the admin, the API and the import call) and presents its answer."""
from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from access.permissions import Action, holds_everywhere, user_may
from reviews.models import Repository
from reviews.selectors import pull_requests_version, readable_repositories, repositories_where
from web.pagecache import PAGE_PARAMETERS, PageKey, Visibility, kept_query, page_served, reader_scope
from web.views.repository_pages import repository_page_key, repository_read
from findings.models import Finding, FindingEvent
from findings.selectors.findings import pull_request_latest_verified_commit
from findings.services.resolution import finding_resolve
from findings.state.stored import states_attach
from web.doors import pull_request_for, readable, require_action
from findings.forms import DECISION_LABELS, ResolveForm
from web.forms.decisions import (
    Refusal,
    decisions_page,
    finding_decision,
    safe_next,
)
from core.errors import RecheckError, ResolutionError

# What a success says, by the status reached.
DONE = {
    Finding.Status.FIXED: "marked fixed",
    Finding.Status.DISMISSED: "dismissed",
    Finding.Status.OPEN: "reopened",
}


@require_http_methods(["GET", "POST"])
@readable
def finding_decide(request, owner: str, name: str, number: int, finding_number: int):
    """GET: the full form for one finding. POST: the decision, from this form or from the buttons
    beside the finding on its pages; a refusal shows the form again with the service's message."""
    pull_request = pull_request_for(request, owner, name, number)
    finding = get_object_or_404(Finding.objects.for_pull_request(pull_request).with_evidence(), number=finding_number)
    require_action(request, Action.RESOLVE, pull_request.repository, audit_action="finding.resolve",
                   target=f"{pull_request.reference} finding {finding.number}")
    latest_commit = pull_request_latest_verified_commit(pull_request)
    if request.method == "GET":
        form = ResolveForm(initial={"next": safe_next(request, request.GET.get("next", ""))})
        chosen = request.GET.get("decision", "")
        return _decide_page(request, finding_decision(
            finding, latest_commit=latest_commit, form=form, chosen=chosen if chosen in DECISION_LABELS else ""
        ))

    form = ResolveForm(request.POST)
    if not form.is_valid():
        decision = finding_decision(finding, latest_commit=latest_commit, form=form,
                                    chosen=request.POST.get("status", ""))
        return _decide_page(request, decision, status=400)
    data = form.cleaned_data
    if (data["status"] == Finding.Status.OPEN and finding.status != Finding.Status.OPEN
            and request.POST.get("confirm") != "yes"):
        # Reopening undoes a decision someone recorded (with its commit and note), and the small
        # button beside a finding is one click away from a slip: the full form asks first.
        decision = finding_decision(finding, latest_commit=latest_commit, form=form, chosen=data["status"])
        return _decide_page(request, decision, confirm_reopen=True)
    try:
        event = finding_resolve(
            finding=finding, status=data["status"], actor=request.user, source=FindingEvent.Source.SITE,
            commit_sha=data["commit"] if data["status"] == Finding.Status.FIXED else "",
            note=data["note"], still_holds_confirmed=data["anyway"],
        )
    except RecheckError as error:
        refusal = Refusal.of(error) if isinstance(error, ResolutionError) else Refusal(message=str(error), field="")
        decision = finding_decision(finding, latest_commit=latest_commit, form=form, refusal=refusal,
                                    chosen=data["status"])
        return _decide_page(request, decision)
    at = f" at {event.commit.short_sha}" if event.commit else ""
    messages.success(request, f"Finding {finding.number} ({finding.title}) {DONE[data['status']]}{at}.")
    return redirect(safe_next(request, data["next"]) or finding.get_absolute_url())


def _decide_page(request, decision, *, status: int = 200, confirm_reopen: bool = False):
    states_attach([decision.finding])
    pull_request = decision.finding.pull_request
    return render(
        request,
        "findings/decisions/decide.html",
        {"decision": decision, "finding": decision.finding, "pull_request": pull_request,
         "confirm_reopen": confirm_reopen},
        status=status,
    )


@require_GET
@readable
def decisions(request):
    """Across every repository the user may read: kept by every PR's version, what the reader may
    read and where they may decide (the buttons)."""
    reader = request.user
    key = PageKey(
        page="decisions", path=request.path, reads=("pull_requests", pull_requests_version()),
        reader=Visibility(signed_in=bool(reader.is_authenticated), repository="",
                          actions=("resolve",) * user_may(reader, Action.RESOLVE)),
        query=kept_query(request, {"page": PAGE_PARAMETERS["page"]}),
        extra=(reader_scope(reader), _resolvable_scope(reader)),
    )
    return page_served(request, key,
                       lambda: _decisions_page(request, readable_repositories(reader), repository=None))


def _resolvable_scope(user) -> tuple:
    """Where `user` may decide: everywhere, or the ids of those repositories (one query)."""
    if holds_everywhere(user, Action.RESOLVE):
        return ("everywhere",)
    return tuple(repositories_where(user, Action.RESOLVE).order_by("pk").values_list("pk", flat=True))


@require_GET
@readable
def repository_decisions(request, owner: str, name: str):
    read = repository_read(request, owner, name)
    key = repository_page_key(request, read, "repository_decisions",
                              query=kept_query(request, {"page": PAGE_PARAMETERS["page"]}))
    return page_served(request, key, lambda: _decisions_page(
        request, Repository.objects.filter(pk=read.repository.pk), repository=Repository.objects.get(pk=read.repository.pk)))


def _decisions_page(request, repositories, *, repository):
    """The page's template and context (`page_served` renders and keeps it)."""
    page = decisions_page(repositories, page_number=request.GET.get("page"))
    states_attach([item.finding for item in page.object_list])
    shown = {item.finding.pull_request.repository for item in page.object_list}
    resolvable = {shown_repository.pk for shown_repository in shown
                  if user_may(request.user, Action.RESOLVE, shown_repository)}
    return "findings/decisions/list.html", {
        "page": page, "repository": repository, "resolvable": resolvable,
        "may_resolve": user_may(request.user, Action.RESOLVE, repository),
    }
