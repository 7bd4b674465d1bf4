"""Writing findings on the site: the editor (create, edit, add evidence from the code browser),
checking one evidence item at a pinned commit, the Markdown preview and the bundle page. Each view
loads its PR with `pull_request_for`, checks the write with `require_action`, and calls the
services the import and the API use (`findings.services.authoring`, `findings.services.verification.evidence_check`,
`review_import`)."""
from __future__ import annotations

from dataclasses import asdict

from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.contrib import messages
from django.http import JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from access.permissions import Action, user_may
from core import vocabulary as v
from findings.services.authoring import finding_write
from access.audit import audit_refusal
from findings.services.review_import import (
    MAX_BUNDLE_BYTES,
    BundleInvalid,
    ImportRefused,
    parse_bundle,
    review_import,
    review_import_check,
)
from findings.exchange.schema import EvidenceSerializer, finding_validate, flatten_errors
from findings.models import Evidence, Finding, FindingEvent
from presentation.rendering.markdown import render_markdown
from findings.selectors.findings import pull_request_pins
from web.doors import pull_request_for, require_action
from web.verifying import verification_request_and_say
from web.forms.editor import (
    blank_evidence,
    evidence_form_values,
    evidence_item,
    finding_data,
    finding_form_values,
    next_number,
    selection_prefill,
)
from presentation.links import Links
from findings.services.verification.evidence_check import evidence_check as evidence_check_at
from core.errors import BundleError, FindingError
from reviews.selectors import reviewed_pin


def _finding_to_edit(request, owner: str, name: str, number: int, finding_number: int) -> tuple:
    """The pull request and its finding N with its evidence, once the signed-in user may write
    there (a 404 when they may not read it, a 403 when they may not write)."""
    pull_request = pull_request_for(request, owner, name, number)
    finding = get_object_or_404(
        Finding.objects.filter(pull_request=pull_request, number=finding_number).prefetch_related(
            "evidence__commit"
        )
    )
    require_action(request, Action.WRITE, pull_request.repository, audit_action="finding.edit",
                   target=f"{pull_request.reference} finding {finding.number}")
    return pull_request, finding


def _editor(request, pull_request, *, finding=None, values, rows, errors=None, notes=(), status=200):
    pins = pull_request_pins(pull_request)
    commits = [(pin.commit.sha, f"{pin.commit.short_sha} · {pin.get_role_display().lower()}") for pin in pins]
    # A commit the code browser sent that is not pinned is still offered, as the item's own.
    for row in rows:
        if row.get("commit") and all(not sha.startswith(row["commit"]) for sha, _ in commits):
            commits.append((row["commit"], f"{row['commit'][:12]} · not pinned"))
    reviewed = reviewed_pin(pins)
    errors = errors or {}
    return render(
        request,
        "findings/editor/finding_form.html",
        {
            "pull_request": pull_request,
            "links": Links(pull_request=pull_request),
            "finding": finding,
            "values": values,
            "rows": [
                {"index": index, "prefix": f"evidence-{index}", "position": index + 1, "values": row,
                 "errors": _row_errors(errors, index)}
                for index, row in enumerate(rows)
            ],
            "errors": errors,
            "location_error": errors.get("location.path") or errors.get("location.line") or errors.get("location"),
            "notes": notes,
            "commits": commits,
            "reviewed": reviewed,
            "check_at": (pins[-1].commit.sha if pins else ""),
            "kinds": Evidence.Kind.choices,
            "finding_kinds": Finding.Kind.choices,
            "caught_by_choices": Finding.CaughtBy.choices,
            "expectations": Evidence.Expect.choices,
            "blank_row": {"index": "__index__", "prefix": "evidence-__index__", "position": "", "values": blank_evidence(),
                          "errors": {}},
            "preview_limit": settings.RECHECK_MARKDOWN_PREVIEW_BYTES,
        },
        status=status,
    )


def _row_errors(errors: dict, index: int) -> dict:
    prefix = f"evidence[{index}]."
    found = {}
    for name, message in errors.items():
        if name.startswith(prefix):
            # A check item's list fields are one box each: `tests[2]` and `results[0].path` show on it.
            field = name[len(prefix):]
            found.setdefault(field.split("[")[0], f"{field}: {message}" if "[" in field else message)
    if f"evidence[{index}]" in errors:
        found["item"] = errors[f"evidence[{index}]"]
    return found


def _save(request, pull_request, *, finding=None):
    data, rows = finding_data(request.POST)
    pins = pull_request_pins(pull_request)
    reviewed = reviewed_pin(pins)
    try:
        saved = finding_write(
            pull_request=pull_request, item=finding_validate(data), actor=request.user,
            source=FindingEvent.Source.SITE, finding=finding, default_commit=reviewed.commit if reviewed else None,
        )
    except FindingError as error:
        errors = dict(getattr(error, "errors", None) or [(error.field, error.message)])
        values = {**request.POST.dict(), "number": data["number"]}
        return _editor(request, pull_request, finding=finding, values=values, rows=rows, errors=errors, status=400)
    if saved.created:
        message = f"Finding {saved.finding.number} recorded."
    elif saved.before:
        message = f"Finding {saved.finding.number} saved: {', '.join(saved.changed)} changed."
    else:
        message = f"Nothing changed in finding {saved.finding.number}."
    messages.success(request, message)
    for note in saved.notes:
        messages.warning(request, note)
    # A finding just written has no verdict yet: it is verified at once, by those who may, so its
    # page shows where its evidence stands (or the run's progress) instead of "Not verified".
    if (saved.created or saved.changed) and pins and user_may(request.user, Action.VERIFY, pull_request.repository):
        verification_request_and_say(request, pull_request)
    return redirect(saved.finding.get_absolute_url())


@require_http_methods(["GET", "POST"])
def finding_new(request, owner: str, name: str, number: int):
    if not request.user.is_authenticated:
        return redirect_to_login(request.get_full_path())
    pull_request = pull_request_for(request, owner, name, number)
    require_action(request, Action.WRITE, pull_request.repository, audit_action="finding.create",
                   target=pull_request.reference)
    if request.method == "POST":
        return _save(request, pull_request)
    prefill = selection_prefill(pull_request, request.GET)
    values = {"number": next_number(pull_request), "kind": Finding.Kind.BLOCKER, "caught_by": Finding.CaughtBy.NONE}
    rows = []
    notes = []
    if prefill is not None:
        rows = [prefill.evidence]
        values.update(location_path=prefill.location_path, location_line=prefill.location_line or "")
        if prefill.title:
            values.update(title=prefill.title, caught_by=prefill.caught_by or values["caught_by"])
        if prefill.problem:
            notes.append(prefill.problem)
    return _editor(request, pull_request, values=values, rows=rows, notes=notes)


@require_http_methods(["GET", "POST"])
def finding_edit(request, owner: str, name: str, number: int, finding_number: int):
    if not request.user.is_authenticated:
        return redirect_to_login(request.get_full_path())
    pull_request, finding = _finding_to_edit(request, owner, name, number, finding_number)
    if request.method == "POST":
        return _save(request, pull_request, finding=finding)
    rows = [evidence_form_values(evidence) for evidence in finding.evidence.all()]
    return _editor(request, pull_request, finding=finding, values=finding_form_values(finding), rows=rows)


@require_http_methods(["GET"])
def evidence_new(request, owner: str, name: str, number: int, finding_number: int):
    """The editor of finding N with one more evidence item, prefilled from the code browser's
    selection (`?kind=snippet&commit=&path=&lines=`); saving saves the whole finding."""
    if not request.user.is_authenticated:
        return redirect_to_login(request.get_full_path())
    pull_request, finding = _finding_to_edit(request, owner, name, number, finding_number)
    rows = [evidence_form_values(evidence) for evidence in finding.evidence.all()]
    prefill = selection_prefill(pull_request, request.GET) or selection_prefill(pull_request, {"kind": "snippet"})
    rows.append(prefill.evidence)
    notes = [prefill.problem] if prefill.problem else []
    return _editor(request, pull_request, finding=finding, values=finding_form_values(finding), rows=rows,
                   notes=notes)


@require_POST
def evidence_check(request, owner: str, name: str, number: int):
    """Check one evidence item (the editor's form fields) at the pinned commit `at` with the real
    engine: the state and verdict the verifier would store, and for a pattern its matches."""
    pull_request = pull_request_for(request, owner, name, number)
    require_action(request, Action.WRITE, pull_request.repository, audit_action="evidence.check",
                   target=pull_request.reference)
    item = evidence_item(request.POST)
    serializer = EvidenceSerializer(data=item)
    if not serializer.is_valid():
        errors = dict(flatten_errors(serializer.errors))
        return JsonResponse({"ok": False, "errors": errors, "message": _first_error(errors)}, status=400)
    at = request.POST.get("at", "").strip() or (item.get("commit") or "")
    if not at:
        return JsonResponse(
            {"ok": False, "errors": {"at": "Choose the pinned commit to check at."},
             "message": "Choose the pinned commit to check at."},
            status=400,
        )
    result = evidence_check_at(pull_request=pull_request, item=serializer.validated_data, at=at)
    body = asdict(result)
    body["matches"] = [asdict(match) for match in result.matches]
    body.update(
        ok=True,
        state_label=v.STATE_LABELS.get(result.state, result.state),
        verdict_label=v.verdict_label(result.verdict),
        verdict_phrase=v.verdict_phrase(result.verdict),
    )
    return JsonResponse(body)


def _first_error(errors: dict) -> str:
    name, message = next(iter(errors.items()))
    return f"{name}: {message}" if name else message


@require_POST
def markdown_preview(request):
    """The Markdown of a body or a fix as the pages show it: `render_markdown`, the one sanitiser."""
    if not request.user.is_authenticated:
        return JsonResponse({"error": "Sign in to preview."}, status=403)
    if not user_may(request.user, Action.WRITE):
        return JsonResponse({"error": "Previews are for those who write findings."}, status=403)
    text = request.POST.get("text", "")
    if len(text.encode()) > settings.RECHECK_MARKDOWN_PREVIEW_BYTES:
        return JsonResponse(
            {"error": f"Too long to preview: keep it under {settings.RECHECK_MARKDOWN_PREVIEW_BYTES // 1000} KB."}, status=413
        )
    return JsonResponse({"html": str(render_markdown(text))})


@require_http_methods(["GET", "POST"])
def bundle_import(request):
    """Paste or upload a bundle, see what importing it would do (the real import, rolled back),
    then confirm. Large bundles go through the API's background import."""
    if not request.user.is_authenticated:
        return redirect_to_login(request.get_full_path())
    context = {"text": "", "errors": [], "report": None, "confirmed": None}
    if request.method == "GET":
        require_action(request, Action.IMPORT, None, audit_action="review.import", target="")
        return render(request, "findings/editor/bundle_import.html", context)
    upload = request.FILES.get("file")
    # One byte past the limit is enough for parse_bundle to refuse it with the limit named.
    raw = upload.read(MAX_BUNDLE_BYTES + 1) if upload else request.POST.get("text", "")
    context["text"] = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
    try:
        data = parse_bundle(raw)
    except BundleError as error:
        require_action(request, Action.IMPORT, None, audit_action="review.import", target="")
        context["errors"] = [(error.field, error.message)]
        return render(request, "findings/editor/bundle_import.html", context, status=400)
    # Who may import this bundle is the import's own rule (review_import_check): a repository the
    # user may not see and one that does not exist get the same answer, and a new repository is
    # added only by someone who may add repositories. A refusal is a 403 page, never a 500.
    try:
        review_import_check(data=data, actor=request.user)
    except ImportRefused as error:
        audit_refusal(action="review.import", target=_bundle_slug(data), message=str(error))
        context.update(errors=[("repository.slug", str(error))], refused=True)
        return render(request, "findings/editor/bundle_import.html", context, status=403)
    findings = data.get("findings")
    if isinstance(findings, list) and len(findings) > settings.RECHECK_IMPORT_INLINE_FINDINGS:
        context["errors"] = [("findings", (
            f"This bundle has {len(findings)} findings; the site imports up to "
            f"{settings.RECHECK_IMPORT_INLINE_FINDINGS} at once. Send it to the API (POST /api/reviews/import), "
            "which imports large bundles in the background, or run manage.py import_review."
        ))]
        return render(request, "findings/editor/bundle_import.html", context, status=400)
    confirm = request.POST.get("confirm") == "1"
    try:
        report = review_import(data=data, actor=request.user, dry_run=not confirm)
    except BundleError as error:
        context["errors"] = error.errors if isinstance(error, BundleInvalid) else [(error.field, error.message)]
        return render(request, "findings/editor/bundle_import.html", context, status=400)
    context.update(report=report, confirmed=confirm)
    if confirm:
        messages.success(request, f"Imported {report.pull_request}.")
        slug, pr_number = report.pull_request.rsplit("#", 1)
        owner, name = slug.rsplit("/", 1)
        context["pull_request_url"] = f"/{owner}/{name}/pull/{pr_number}/"
    return render(request, "findings/editor/bundle_import.html", context)


def _bundle_slug(data: dict) -> str:
    repository = data.get("repository")
    slug = repository.get("slug") if isinstance(repository, dict) else None
    return slug[:300] if isinstance(slug, str) else ""
