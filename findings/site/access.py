"""Who may read the site and who may start a verification from it."""
from functools import wraps

from django.conf import settings
from django.contrib.auth.views import redirect_to_login


def readable(view):
    """Pages are public when RECHECK_PUBLIC_READ is on; otherwise a reader logs in first."""

    @wraps(view)
    def wrapper(request, *args, **kwargs):
        if not settings.RECHECK_PUBLIC_READ and not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        return view(request, *args, **kwargs)

    return wrapper


def can_verify(user) -> bool:
    """Starting a verification costs a worker's time: staff with the permission only."""
    return bool(
        user.is_authenticated and user.is_active and user.is_staff and user.has_perm("findings.verify_pullrequest")
    )
