"""The site's doors onto `access.permissions.user_may`: a decorator for pages that need reading,
and the refusal a forged or stale form gets."""
from functools import wraps

from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied

from django.shortcuts import get_object_or_404

from access.audit import audit_refusal
from access.permissions import Action, refusal, user_may
from reviews.selectors import readable_repositories
from reviews.models import PullRequest


# Whether a reader who is not signed in may read the site, by the setting `user_may` answers it
# from: asked of it once a process for each value (a page read as a 304 costs little else).
_ANONYMOUS_READS: dict[bool, bool] = {}


def _may_read(user) -> bool:
    if user.is_authenticated:
        return user_may(user, Action.READ)
    public = bool(settings.RECHECK_PUBLIC_READ)
    if public not in _ANONYMOUS_READS:
        _ANONYMOUS_READS[public] = user_may(user, Action.READ)
    return _ANONYMOUS_READS[public]


def readable(view):
    """Pages are public when RECHECK_PUBLIC_READ is on; otherwise a reader logs in first."""

    @wraps(view)
    def wrapper(request, *args, **kwargs):
        if not _may_read(request.user):
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
