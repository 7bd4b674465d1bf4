"""The audit log: who wrote what, when, from where, and what it changed.

Services call `audit_record` once per write, inside their transaction, so a write and its record
commit or roll back together; a refused write is recorded with `audit_refusal` after the service's
transaction has rolled back, so the refusal stays. The request (for the IP address and the API
token) reaches the services through a context variable that `AuditMiddleware` sets, rather than
through every service's signature: the site, the admin and the API all pass through the
middleware, and commands and tasks name their source with `audit_source`."""
from __future__ import annotations

import contextlib
from contextvars import ContextVar
from dataclasses import dataclass

from django.conf import settings
from django.db.models import QuerySet

from access.models import ApiToken, AuditEntry

_request: ContextVar = ContextVar("audit_request", default=None)
_source: ContextVar[str] = ContextVar("audit_source", default="")


class AuditMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        token = _request.set(request)
        try:
            return self.get_response(request)
        finally:
            _request.reset(token)


@contextlib.contextmanager
def audit_source(source: str):
    """Writes inside the block are recorded as coming from `source` (command, task)."""
    token = _source.set(source)
    try:
        yield
    finally:
        _source.reset(token)


def client_ip(request) -> str | None:
    """REMOTE_ADDR, or the header a trusted proxy sets (RECHECK_CLIENT_IP_HEADER): its first
    address is the client's."""
    header = settings.RECHECK_CLIENT_IP_HEADER
    raw = request.META.get(header, "") if header else ""
    raw = raw.split(",")[0].strip() or request.META.get("REMOTE_ADDR", "")
    return raw or None


def _request_source(request) -> str:
    path = request.path
    if path.startswith("/api/hooks/"):
        return "webhook"
    if path.startswith("/api/"):
        return "api"
    if path.startswith("/admin/"):
        return "admin"
    return "site"


def audit_record(
    *,
    action: str,
    actor=None,
    target: str = "",
    repository=None,
    changes: dict | None = None,
    message: str = "",
    outcome: str = AuditEntry.Outcome.DONE,
    source: str = "",
    token: ApiToken | None = None,
) -> AuditEntry:
    """Record one write (or one refused write). The actor defaults to the signed-in user of the
    request being served; the token, the IP address and the source come from that request."""
    request = _request.get()
    if request is not None:
        user = getattr(request, "user", None)
        if actor is None and user is not None and user.is_authenticated:
            actor = user
        if token is None and isinstance(getattr(request, "auth", None), ApiToken):
            token = request.auth
    if actor is not None and not getattr(actor, "is_authenticated", False):
        actor = None
    return AuditEntry.objects.create(
        action=action,
        outcome=outcome,
        actor=actor,
        actor_label=actor.get_username() if actor is not None else "",
        token=token,
        token_label=token.label if token is not None else "",
        source=source or _source.get() or (_request_source(request) if request is not None else "system"),
        ip=client_ip(request) if request is not None else None,
        target=_without_nul(target)[:300],
        repository=repository,
        changes=_without_nul(changes or {}),
        message=_without_nul(message),
    )


def _without_nul(value):
    """`value` with NUL characters spelled out: a hostile path or field may carry them, PostgreSQL's
    text and jsonb cannot hold them, and a refusal must still be recorded."""
    if isinstance(value, str):
        return value.replace("\x00", "\\0")
    if isinstance(value, dict):
        return {_without_nul(key): _without_nul(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_without_nul(item) for item in value]
    return value


def audit_refusal(**kwargs) -> AuditEntry:
    return audit_record(outcome=AuditEntry.Outcome.REFUSED, **kwargs)


def audit_changes(before: dict, after: dict) -> dict:
    """{field: [before, after]} for the fields whose value differs, as JSON-safe text."""
    return {
        name: [_plain(before.get(name)), _plain(after.get(name))]
        for name in sorted(set(before) | set(after))
        if before.get(name) != after.get(name)
    }


def _plain(value):
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple, set, QuerySet)):
        return sorted((_plain(item) for item in value), key=str)
    return str(value)


@dataclass(frozen=True)
class WritingService:
    """A function that writes, as `writes` registered it: the audit `action` its entries carry;
    `within`, for a part that writes only inside the services named there (which checks the actor
    and records the entry); `system`, why a write has no person to check (a worker's)."""

    name: str
    action: str
    within: tuple[str, ...] = ()
    system: str = ""


# Every function of the domain that writes, by dotted name. tests/access/test_writing_services.py
# reads the code of each (an AST scan): a service must check its actor and record an audit entry,
# a part must be called by its service and by no interface, and a function that writes without
# being registered fails the test.
WRITING_SERVICES: dict[str, WritingService] = {}


def writes(action: str, *, within: tuple[str, ...] = (), system: str = ""):
    """Register the decorated function as one that writes (see `WRITING_SERVICES`)."""

    def register(function):
        name = f"{function.__module__}.{function.__qualname__}"
        WRITING_SERVICES[name] = WritingService(name=name, action=action, within=within, system=system)
        return function

    return register
