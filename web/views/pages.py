"""The site's views: load, call a page builder or a service, render. Reads live in
`findings.selectors.findings` and `presentation.pages` (with `presentation.finding_views` and
`presentation.paging`)."""
from django.contrib import messages
from django.core.paginator import Paginator
from django.db.models import Exists, OuterRef, Prefetch, prefetch_related_objects
from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from presentation.companion import companion_files, companion_zip_bytes, zip_name
from findings.models import Evidence, Finding, FollowUp, TagDescription
from findings.selectors.evidence_history import finding_evidence_histories
from findings.selectors.new_failures import pull_request_new_failures
from findings.selectors.policy import override_action
from findings.selectors.related import finding_related
from findings.state.stored import states_attach
from findings.selectors.findings import (
    finding_history,
    finding_verifications,
    latest_verified_pin,
    pull_request_active_run,
    pull_request_last_finished_run,
    pull_request_latest_run,
    pull_request_pins,
    pull_requests_overview,
)
from access.permissions import Action, user_may
from web.doors import pull_request_for, readable, require_action
from findings.selectors.follow_ups import (
    follow_up_history,
    follow_up_of_finding,
    follow_up_summary,
)
from presentation.matrix import verification_matrix
from presentation.finding_views import finding_has_diagram, finding_views, history_views
from presentation.links import Links
from presentation.pages import PinUnknown, page_context, pull_request_page
from presentation.paging import finding_list_page
from web.forms.decisions import safe_next
from web.views.keys import pull_request_page_key, pull_request_read
from web.pagecache import (
    SEARCH_PARAMETERS,
    PageKey,
    Visibility,
    kept_query,
    page_served,
    reader_scope,
    reader_visibility,
)
from web.forms.search import FindingSearchForm
from web.verifying import verification_request_and_say
from core import vocabulary
from core.errors import RecheckError
from forge.models import FollowUpIssue, ForgeCall
from forge.follow_up_issues.selectors import follow_up_issue_history
from forge.threads.selectors import finding_threads
from forge.outbox.services import forge_call_resend
from reviews.models import Repository
from reviews.selectors import pull_request_generation_is, pull_requests_version, readable_repositories, site_version

SEARCH_PAGE_SIZE = 25


@require_GET
@readable
def index(request):
    reader = request.user
    # What it shows reads every pull request (their versions) and the repositories the reader may
    # read (a new or renamed one, one made private): every PR's version and every repository's
    # facts, read in one query, with the reader's scope (which of them they read) and the search
    # asked.
    can_import = user_may(reader, Action.IMPORT)
    key = PageKey(
        page="index", path=request.path, reads=("site", site_version()),
        reader=Visibility(signed_in=bool(reader.is_authenticated), repository="", actions=("import",) * can_import),
        query=kept_query(request, SEARCH_PARAMETERS), extra=(reader_scope(reader),),
    )

    def build():
        repositories = list(readable_repositories(reader).order_by("slug"))
        form = FindingSearchForm(request.GET or None, reader=reader)
        results = None
        if form.is_searching:
            results = Paginator(form.results(), SEARCH_PAGE_SIZE).get_page(request.GET.get("page"))
            # Each result's verdict and flags from its PR's state, as every page shows them.
            results.object_list = states_attach(results.object_list)
            form.explain(results)
        shown = {repository: [] for repository in repositories}
        for pull_request in pull_requests_overview(reader):
            shown.setdefault(pull_request.repository, []).append(pull_request)
        query = request.GET.copy()
        query.pop("page", None)
        return "findings/index.html", {
            "form": form,
            "results": results,
            "repositories": shown,
            "query_without_page": f"{query.urlencode()}&" if query else "",
            "can_import": can_import,
        }

    return page_served(request, key, build)


@require_POST
def github_call_resend_now(request, owner: str, name: str, call_id: int):
    """Send a failed call to GitHub again, from the repository's page (the service checks the role
    and audits)."""
    repository = get_object_or_404(Repository.objects.readable_by(request.user), slug=f"{owner}/{name}")
    call = get_object_or_404(ForgeCall.objects.select_related("repository"), pk=call_id, repository=repository)
    try:
        queued = forge_call_resend(call=call, actor=request.user)
    except RecheckError as error:
        messages.error(request, str(error))
    else:
        if queued:
            messages.success(request, f"{call.get_kind_display()} on {call.sha[:8]} queued to be sent again.")
        else:
            messages.info(request, "That call had not failed (it was sent again already).")
    return redirect("findings:repository", owner=repository.owner, name=repository.name)


def _pull_request_page(request, owner: str, name: str, number: int, *, current: str):
    # The key's facts in one query; the PR itself is loaded only to build the page.
    read = pull_request_read(request, owner, name, number)
    key, failures = pull_request_page_key(request, read, f"pull_request:{current}", query=kept_query(request))
    reader = key.reader

    def build():
        pull_request = pull_request_for(request, owner, name, number)
        try:
            page = pull_request_page(pull_request, current=current, page_number=request.GET.get("page", 1),
                                     at=request.GET.get("commit", ""))
        except PinUnknown as problem:
            pins = [(pin, f"{request.path}?commit={pin.commit.sha}") for pin in problem.pins]
            return render(request, "findings/pull_request/unknown_commit.html",
                          {"pull_request": pull_request, "message": str(problem), "pins": pins}, status=404)
        context = page_context(page, current=current)
        context.update(
            run=pull_request_active_run(pull_request) if read.run_live else None,
            last_run=pull_request_last_finished_run(pull_request),
            can_verify=reader.may(Action.VERIFY),
            can_write=reader.may(Action.WRITE),
            can_resolve=reader.may(Action.RESOLVE),
            # The role the policy names (part of the state, so of the generation) over the reader's
            # actions (part of the key): a kept page shows the override button to whom it may.
            can_override=bool(page.head_gate) and reader.may(override_action(page.head_gate["override_role"])),
            override_reasons=list(vocabulary.OVERRIDE_REASON_LABELS.items()),
            github_failures=failures,
        )
        if current in ("overview", "blockers") and page.chosen_pin is None:
            # Read with the page, kept by the PR's generation: a report's arrival moves it.
            new_failures = pull_request_new_failures(pull_request, pins=[view.pin for view in page.pins])
            context.update(new_failures=new_failures, new_failure_rows=[
                (failure, page.links.record_failure(failure, new_failures.sha)) for failure in new_failures.listed
            ])
        return f"findings/pull_request/{current}.html", context

    return page_served(request, key, build)


@require_GET
@readable
def pull_request_overview(request, owner: str, name: str, number: int):
    return _pull_request_page(request, owner, name, number, current="overview")


@require_GET
@readable
def pull_request_blockers(request, owner: str, name: str, number: int):
    return _pull_request_page(request, owner, name, number, current="blockers")


@require_GET
@readable
def pull_request_cleanups(request, owner: str, name: str, number: int):
    return _pull_request_page(request, owner, name, number, current="cleanups")


@require_GET
@readable
def finding_detail(request, owner: str, name: str, number: int, finding_number: int):
    finding = get_object_or_404(
        Finding.objects.readable_by(request.user).filter(
            pull_request__repository__slug=f"{owner}/{name}", pull_request__number=number, number=finding_number
        )
        .select_related("pull_request__repository", "resolved_commit", "resolved_by")
        # A follow-up's issue on the forge is written by deliveries no generation follows: a page
        # that shows a follow-up is rendered for each request. Its review threads move its PR's.
        .annotate(has_threads=Exists(Finding.objects.filter(pk=OuterRef("pk"), review_threads__isnull=False)),
                  has_follow_up=Exists(FollowUp.objects.filter(finding=OuterRef("pk"))))
    )
    pull_request = finding.pull_request
    run = pull_request_active_run(pull_request)
    reader = reader_visibility(request.user, pull_request.repository)
    generation = pull_request.generation
    key = PageKey(
        page="finding", path=request.path,
        # Its related findings are of any pull request: every PR's generation, as the lists read it.
        reads=("finding", finding.pk, generation, pull_requests_version()),
        reader=reader, query=kept_query(request), extra=(reader_scope(request.user),),
        keep=run is None and not finding.has_follow_up,
        still_current=lambda: pull_request_generation_is(pull_request.pk, generation),
    )

    def build():
        prefetch_related_objects(
            [finding], Prefetch("evidence", queryset=Evidence.objects.select_related("commit")), "tags"
        )
        pins = pull_request_pins(pull_request)
        latest = latest_verified_pin(pins, pull_request=pull_request)
        verifications = finding_verifications(finding)
        links = Links(pull_request=pull_request)
        related = finding_related(finding, reader=request.user)
        states_attach([item.finding for item in related])
        # The finding's verification at the latest commit comes from the list already loaded.
        [view] = finding_views(
            [finding], latest_commit=latest.commit if latest else None, links=links,
            page_numbers={finding.pk: finding_list_page(finding)},
        )
        matrix = verification_matrix(finding, pins=pins, verifications=verifications)
        return "findings/finding.html", {
            "pull_request": pull_request,
            "view": view,
            "finding": finding,
            "links": links,
            "latest_pin": latest,
            "matrix": matrix,
            "has_diagrams": finding_has_diagram(view),
            "matrix_picture": matrix.picture(title=f"Finding {finding.number} verified at every commit"),
            "history": finding_history(finding),
            "evidence_histories": history_views(
                finding_evidence_histories(finding, pins=pins, verifications=verifications)
            ),
            "tags": _described_tags(finding),
            "related": related,
            "run": run,
            "can_write": reader.may(Action.WRITE),
            "can_resolve": reader.may(Action.RESOLVE),
            "threads": finding_threads(finding) if finding.has_threads else [],
            "can_verify": reader.may(Action.VERIFY),
            **(_follow_up_context(finding) if finding.has_follow_up else {"follow_up": None}),
        }

    return page_served(request, key, build)


def _follow_up_context(finding) -> dict:
    """The finding's life after its pull request merged: its follow-up and that whole history."""
    follow_up = follow_up_of_finding(finding)
    if follow_up is None:
        return {"follow_up": None}
    issue = FollowUpIssue.objects.filter(follow_up=follow_up, number__isnull=False).first()
    history = sorted(follow_up_history(follow_up) + follow_up_issue_history(follow_up), key=lambda entry: entry["at"])
    return {"follow_up": follow_up_summary(follow_up), "follow_up_history": history,
            "follow_up_issue": issue,
            "follow_up_issue_url": f"{finding.pull_request.repository.web_url.rstrip('/')}/issues/{issue.number}"
            if issue and finding.pull_request.repository.web_url else ""}


def _described_tags(finding: Finding) -> list:
    """The finding's tags, each with what its own repository says the tag means (`description`):
    the one repository the reader is reading here, never another's."""
    tags = list(finding.tags.all())
    if tags:
        described = dict(
            TagDescription.objects.filter(repository=finding.pull_request.repository, tag__in=tags)
            .values_list("tag_id", "description")
        )
        for tag in tags:
            tag.description = described.get(tag.pk, "")
    return tags


@require_GET
@readable
def latest_run(request, owner: str, name: str, number: int):
    """The PR's latest verification run, polled by the pages while one is active."""
    run = pull_request_latest_run(pull_request_for(request, owner, name, number))
    if run is None:
        return JsonResponse({"run": None})
    return JsonResponse(
        {
            "run": {
                "id": run.pk,
                "status": run.status,
                "status_label": vocabulary.run_status_label(run.status),
                "done": run.done,
                "total": run.total,
                "percent": run.percent,
                # A dead run (its worker gone) is not shown as under way while it waits to be reaped.
                "is_active": run.is_live,
                "message": run.message,
                "created_at": run.created_at.isoformat(),
                "finished_at": run.finished_at.isoformat() if run.finished_at else None,
            }
        }
    )


@require_POST
def verify_now(request, owner: str, name: str, number: int):
    """Verify now, from the overview and from each finding's page (which it goes back to: `next`)."""
    pull_request = pull_request_for(request, owner, name, number)
    require_action(request, Action.VERIFY, pull_request.repository,
                   audit_action="verification.request", target=pull_request.reference)
    verification_request_and_say(request, pull_request)
    return redirect(safe_next(request, request.POST.get("next", "")) or pull_request.get_absolute_url())


@require_GET
@readable
def companion_zip(request, owner: str, name: str, number: int):
    pull_request = pull_request_for(request, owner, name, number)
    files = companion_files(pull_request=pull_request)
    if not files:
        raise Http404("Nothing to render.")
    response = HttpResponse(companion_zip_bytes(files, folder=zip_name(pull_request)), content_type="application/zip")
    response["Content-Disposition"] = f'attachment; filename="{zip_name(pull_request)}.zip"'
    return response
