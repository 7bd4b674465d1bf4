"""Who may do what through the API.

Reads are public when RECHECK_PUBLIC_READ is on, and need a signed-in user or a token otherwise.
Each write needs its own model permission, so a CI token can be allowed to request verifications
without being allowed to mark findings fixed."""
from django.conf import settings
from rest_framework.permissions import SAFE_METHODS, BasePermission

TOKEN_HINT = "Send a token (Authorization: Token <key>); an admin creates one with manage.py create_api_token."


class PublicReadOrAuthenticated(BasePermission):
    """Reads by anyone when the server says so; everything else by authenticated users only.

    The setting is read per request rather than at import, so an operator's change takes effect
    on restart and tests can flip it with the `settings` fixture."""

    message = f"Reading this server's API needs authentication. {TOKEN_HINT}"

    def has_permission(self, request, view) -> bool:
        if request.user and request.user.is_authenticated:
            return True
        return request.method in SAFE_METHODS and settings.RECHECK_PUBLIC_READ


class HasActionPermission(BasePermission):
    """The model permission the view names in `required_permission` (e.g. findings.import_review)."""

    def has_permission(self, request, view) -> bool:
        if not (request.user and request.user.is_authenticated):
            self.message = f"This action needs authentication. {TOKEN_HINT}"
            return False
        permission = view.required_permission
        self.message = (
            f"User {request.user.get_username()!r} lacks the permission {permission}: "
            "ask an admin to grant it (Django admin, Users, or create_api_token --grant)."
        )
        return request.user.has_perm(permission)
