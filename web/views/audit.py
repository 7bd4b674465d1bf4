"""The audit log on the site, for instance admins: the entries they may read, newest first, one
entry's changes with a button to set a recorded field change back (`audit_entry_revert`, the
service the API and the admin call, which checks the role on the object and records the revert)."""
from django import forms
from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import BadRequest, PermissionDenied, ValidationError
from django.core.paginator import Paginator
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from access.permissions import may_read_audit_log, user_may
from access.selectors import readable_audit_entries
from core.errors import RecheckError
from findings.services.revert import ACTIONS, audit_entry_revert, audit_entry_revertible

PAGE_SIZE = 50


def _entries(request):
    """The entries the signed-in instance admin may read (`readable_audit_entries`, as the API and
    the admin read them). Others are answered as if they did not exist."""
    user = request.user
    if not may_read_audit_log(user):
        raise PermissionDenied("Only instance admins (superusers, or users with access.view_auditentry) may read the "
                               "audit log.")
    return readable_audit_entries(user).select_related("repository")


@require_GET
def audit_log(request):
    if not request.user.is_authenticated:
        return redirect_to_login(request.get_full_path())
    entries = _entries(request)
    try:
        # A form field's reading of it: NUL refused, as every form of the site refuses it.
        action = forms.CharField(required=False).clean(request.GET.get("action", ""))
    except ValidationError as error:
        raise BadRequest(f"the action filter: {error.messages[0].rstrip('.').lower()}") from None
    if action:
        entries = entries.filter(action=action)
    page = Paginator(entries.order_by("-at", "-id"), PAGE_SIZE).get_page(request.GET.get("page"))
    return render(request, "audit/log.html", {"page": page, "action": action})


@require_GET
def audit_entry(request, entry: int):
    if not request.user.is_authenticated:
        return redirect_to_login(request.get_full_path())
    found = get_object_or_404(_entries(request), pk=entry)
    revertible = [
        change for change in audit_entry_revertible(entry=found)
        if change.repository is not None and user_may(request.user, ACTIONS[change.kind], change.repository)
    ]
    return render(request, "audit/entry.html", {"entry": found, "revertible": revertible})


@require_POST
def audit_entry_revert_view(request, entry: int):
    if not request.user.is_authenticated:
        return redirect_to_login(request.get_full_path())
    found = get_object_or_404(_entries(request), pk=entry)
    key = request.POST.get("change", "")
    try:
        audit_entry_revert(entry=found, key=key, actor=request.user)
    except RecheckError as error:
        messages.error(request, str(error))
    else:
        messages.success(request, f"Set {key} back to its value before audit entry {found.pk}.")
    return redirect("findings:audit_entry", entry=found.pk)
