"""The site's doors onto `access.permissions.user_may`: a decorator for pages that need reading,
and the refusal a forged or stale form gets."""
from functools import wraps

from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied

from django.shortcuts import get_object_or_404

from access.audit import audit_refusal
from access.permissions import Action, refusal, user_may
from reviews.selectors import readable_repositories
from reviews.models import PullRequest


def readable(view):
    """Pages are public when RECHECK_PUBLIC_READ is on; otherwise a reader logs in first."""

    @wraps(view)
    def wrapper(request, *args, **kwargs):
        if not user_may(request.user, Action.READ):
            return redirect_to_login(request.get_full_path())
        return view(request, *args, **kwargs)

    return wrapper


def require_action(request, action: Action, repository, *, audit_action: str, target: str) -> None:
    """Raise 403 (recorded in the audit log as a refusal) unless the user may do `action` on
    `repository`; the message says what would allow it."""
    if user_may(request.user, action, repository):
        return
    message = refusal(request.user, action, repository)
    audit_refusal(action=audit_action, target=target, repository=repository, message=message)
    raise PermissionDenied(message)


def pull_request_for(request, owner: str, name: str, number: int) -> PullRequest:
    """The PR a site URL names, if the user may read its repository; otherwise a 404, as for a PR
    that does not exist. Every site view that loads a PR from its URL comes through here."""
    return get_object_or_404(
        PullRequest.objects.by_reference(f"{owner}/{name}", number)
        .filter(repository__in=readable_repositories(request.user))
        .select_related("repository")
    )
