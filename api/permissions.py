"""Who may do what through the API.

Reads follow `access.permissions`: a public repository is read as the server reads
(RECHECK_PUBLIC_READ, or any signed-in user or token), a private one only with a role on it; the
others are a 404, as if they did not exist. Each write needs its own action (`user_may`): first on
at least one repository (the permission class), then on the object's repository (the view, after
loading it), so a CI token can be allowed to request verifications without being allowed to mark
findings fixed. A token narrows its user further: to its scopes (read, verify, import, resolve,
settings) and, when it names repositories, to those."""
from django.conf import settings
from rest_framework.exceptions import PermissionDenied
from rest_framework.permissions import SAFE_METHODS, BasePermission

from access.audit import audit_refusal
from access.permissions import ACTION_SCOPES, may_read_audit_log, reads_everything, refusal, user_may
from reviews.selectors import readable_repositories
from access.models import ApiToken
from core.scopes import READ, SCOPE_AUDIT_ACTIONS
from findings.selectors.gate import PUBLIC_ONLY

TOKEN_HINT = "Send a token (Authorization: Token <key>); an admin creates one with manage.py create_api_token."


def request_token(request) -> ApiToken | None:
    auth = getattr(request, "auth", None)
    return auth if isinstance(auth, ApiToken) else None


def token_repository_ids(request) -> set[int] | None:
    """The repositories the request's token is limited to, or None when it is not limited. A
    limited token whose repositories were all deleted gets an empty set: it reaches nothing."""
    token = request_token(request)
    if token is None or not token.limited:
        return None
    if not hasattr(token, "_repository_ids"):
        token._repository_ids = set(token.repositories.values_list("pk", flat=True))
    return token._repository_ids


def request_reads_everything(request) -> bool:
    """Whether the request reads every repository: its user reads every one (a superuser, an
    instance-wide role) and no token limits it. Reads then need no filter."""
    return reads_everything(request.user) and token_repository_ids(request) is None


def request_repositories(request):
    """The repositories the request may read, as a queryset to filter by: those its user may read
    (access.permissions), narrowed to its token's repositories when the token names some."""
    repositories = readable_repositories(request.user)
    ids = token_repository_ids(request)
    return repositories if ids is None else repositories.filter(pk__in=ids)


def visible_to(queryset, request, field: str):
    """`queryset` without the rows of repositories the request may not read (its user's roles,
    then its token's repositories); `field` leads from the queryset's model to its repository
    (`pk` for repositories themselves). Every read of the API filters through here, so another's
    row is a 404 or absent from a list, as if it did not exist."""
    if request_reads_everything(request):
        return queryset
    return queryset.filter(**{f"{field}__in": request_repositories(request)})


def repository_limit(request):
    """What a lookup by name (a pull request's owner/name/number) is limited to: None when the
    request reads every repository, else the queryset of those it may read."""
    return None if request_reads_everything(request) else request_repositories(request)




def read_scope(request):
    """What a cached answer may be looked up within: `repository_limit`, except that an anonymous
    request with no token is PUBLIC_ONLY, which a lookup turns into a condition on the
    repository's own row instead of a subquery (it holds no memberships to look up)."""
    if not request.user.is_authenticated and request_token(request) is None:
        return PUBLIC_ONLY
    return repository_limit(request)


# The name the API's views were written with: a token's limits are one of the two narrowings.
limited_to_token = visible_to


def object_action_check(request, view, repository) -> None:
    """After a write view has loaded its object (through `visible_to`, so an unreadable one was a
    404): a 403 that says what would allow it, unless the user may do the view's action on the
    object's repository. Recorded in the audit log as a refusal."""
    action = view.required_action
    if user_may(request.user, action, repository):
        return
    message = refusal(request.user, action, repository)
    audit_action = getattr(view, "audit_action", None) or SCOPE_AUDIT_ACTIONS.get(ACTION_SCOPES[action], str(action))
    audit_refusal(action=audit_action, actor=request.user,
                  target=request.path, repository=repository, message=message)
    raise PermissionDenied(message)


def _refuse(request, view, message: str) -> None:
    """Record a refused request under the action it attempted: the view's `audit_action` (what its
    service records when it writes), else what the scope it needs is recorded as. A read refused is
    not recorded."""
    action = getattr(view, "audit_action", None) or SCOPE_AUDIT_ACTIONS.get(getattr(view, "required_scope", READ))
    if action is not None:
        audit_refusal(action=action, actor=request.user, target=request.path, message=message)


class PublicReadOrAuthenticated(BasePermission):
    """Reads by anyone when the server says so; everything else by authenticated users only.

    The setting is read per request rather than at import, so an operator's change takes effect
    on restart and tests can flip it with the `settings` fixture."""

    message = f"Reading this server's API needs authentication. {TOKEN_HINT}"

    def has_permission(self, request, view) -> bool:
        if request.user and request.user.is_authenticated:
            return True
        return request.method in SAFE_METHODS and settings.RECHECK_PUBLIC_READ


class TokenScope(BasePermission):
    """A token works only for the scope the view names in `required_scope`; a read needs `read`,
    and a write whose view names no scope is not for tokens at all, so a new write endpoint is
    closed to tokens until it says which scope opens it. Signed-in sessions have no scopes: their
    user's permissions decide."""

    def has_permission(self, request, view) -> bool:
        token = request_token(request)
        if token is None:
            return True
        scope = getattr(view, "required_scope", None) or (READ if request.method in SAFE_METHODS else None)
        if scope is not None and scope in token.scopes:
            return True
        needed = f"this needs {scope!r}: create a token with that scope" if scope else "this is not open to tokens"
        self.message = f"This token ({token.name}) has the scope(s) {', '.join(token.scopes) or 'none'}; {needed}."
        _refuse(request, view, self.message)
        return False


class HasActionPermission(BasePermission):
    """The action the view names in `required_action`, as `access.permissions.user_may` decides it."""

    def has_permission(self, request, view) -> bool:
        if not (request.user and request.user.is_authenticated):
            self.message = f"This action needs authentication. {TOKEN_HINT}"
            _refuse(request, view, self.message)
            return False
        if user_may(request.user, view.required_action):
            return True
        self.message = refusal(request.user, view.required_action)
        _refuse(request, view, self.message)
        return False


class CanReadAuditLog(BasePermission):
    """Instance admins only (superusers, or users granted access.view_auditentry): the audit log
    says who did what in every repository."""

    def has_permission(self, request, view) -> bool:
        if not (request.user and request.user.is_authenticated):
            self.message = f"The audit log needs authentication. {TOKEN_HINT}"
            return False
        self.message = "Only instance admins (superusers, or users with access.view_auditentry) may read the audit log."
        return may_read_audit_log(request.user)
