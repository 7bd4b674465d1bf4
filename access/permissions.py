"""The one answer to "may this user do X on this repository?".

Every interface asks `user_may`: the site's views and templates, the API's permission classes,
the admin, the commands that act for a user and the tasks. Nothing else looks at groups, model
permissions, memberships or staff status to decide an action.

The body is a set of rules (django-rules), one per action, each composed of the same predicates:

- a superuser holds every action everywhere;
- an instance-wide role (the Reader, Reviewer and Maintainer groups, or a model permission given
  to the user or a group of theirs) holds its actions on every repository, private ones included;
- a membership (`access.models.Membership`, the user's own or one of a group of theirs) holds its
  role's actions (`ROLE_ACTIONS`) on its repository;
- a public repository is read as the server reads: by anyone with RECHECK_PUBLIC_READ, otherwise
  by any signed-in user. A private repository is read only with a role.

Without a repository, `user_may` answers "on at least one repository": what a navigation link or
an API endpoint's first gate needs; the view then asks again with the object's repository.

Reads are filtered by `readable_condition` (and `reviews.selectors.readable_repositories`), the
same rules as a query, so a private repository outside them is answered as if it did not exist (a
404, never a 403). Which audit entries a person reads is `access.selectors.readable_audit_entries`,
for the site, the API and the admin alike."""
from __future__ import annotations

import functools
from enum import StrEnum
from typing import TYPE_CHECKING

import rules
from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.db.models import Q

from core.scopes import ACTION_SCOPE_NAMES

if TYPE_CHECKING:
    from reviews.models import Repository


class Action(StrEnum):
    READ = "read"
    # Add and change findings and their evidence, tags and links.
    WRITE = "write"
    IMPORT = "import"
    VERIFY = "verify"
    # Mark fixed, dismiss, reopen.
    RESOLVE = "resolve"
    # A repository's settings (publishing to GitHub).
    SETTINGS = "settings"
    # Who holds which role on a repository.
    MEMBERS = "members"
    # Send a CI report of one of a repository's commits.
    REPORT = "report"


class Role(StrEnum):
    """The instance-wide roles' groups (migration access 0003)."""

    READER = "Reader"
    REVIEWER = "Reviewer"
    MAINTAINER = "Maintainer"


# The model permission that carries each action instance-wide; the roles' groups hold these.
ACTION_PERMISSIONS: dict[Action, str] = {
    Action.READ: "findings.view_finding",
    Action.WRITE: "findings.change_finding",
    Action.IMPORT: "findings.import_review",
    Action.VERIFY: "findings.verify_pullrequest",
    Action.RESOLVE: "findings.resolve_finding",
    Action.SETTINGS: "reviews.change_repository",
    Action.MEMBERS: "access.change_membership",
    # Reports feed verification: whoever may start one instance-wide may send them.
    Action.REPORT: "findings.verify_pullrequest",
}

# What each role of a membership (access.models.Membership.Role) allows on its repository.
_READER = {Action.READ}
_REVIEWER = _READER | {Action.WRITE, Action.IMPORT, Action.VERIFY, Action.REPORT}
_MAINTAINER = _REVIEWER | {Action.RESOLVE}
_ADMIN = _MAINTAINER | {Action.SETTINGS, Action.MEMBERS}
ROLE_ACTIONS: dict[str, frozenset[Action]] = {
    "reader": frozenset(_READER),
    "reviewer": frozenset(_REVIEWER),
    "maintainer": frozenset(_MAINTAINER),
    "admin": frozenset(_ADMIN),
}

# The token scope that opens each action to an API token, from the one scope table (core.scopes).
ACTION_SCOPES: dict[Action, str] = {Action(action): scope for action, scope in ACTION_SCOPE_NAMES.items()}

# Who holds an action, for refusals that say whom to ask.
ACTION_ROLES: dict[Action, str] = {
    Action.READ: "Reader",
    Action.WRITE: "Reviewer",
    Action.IMPORT: "Reviewer",
    Action.VERIFY: "Reviewer",
    Action.RESOLVE: "Maintainer",
    Action.SETTINGS: "Admin",
    Action.MEMBERS: "Admin",
    Action.REPORT: "Reviewer",
}

# What each action is, in a refusal ("… may not {phrase} …").
ACTION_PHRASES: dict[Action, str] = {
    Action.READ: "read",
    Action.WRITE: "write findings in",
    Action.IMPORT: "import reviews into",
    Action.VERIFY: "start verifications of",
    Action.RESOLVE: "mark findings fixed, dismissed or open in",
    Action.SETTINGS: "change the settings of",
    Action.MEMBERS: "change who holds roles on",
    Action.REPORT: "send CI reports to",
}


def _active(user) -> bool:
    return bool(user is not None and user.is_authenticated and user.is_active)


def membership_actions(user) -> dict[int, frozenset[Action]]:
    """Repository id -> what `user`'s memberships (their own and their groups') allow there, read
    in one query and kept on the user object for the rest of the request."""
    if not _active(user):
        return {}
    cached = getattr(user, "_recheck_membership_actions", None)
    if cached is None:
        from access.models import Membership

        cached = {}
        rows = Membership.objects.filter(Q(user=user) | Q(group__user=user)).values_list("repository_id", "role")
        for repository_id, role in rows:
            cached[repository_id] = cached.get(repository_id, frozenset()) | ROLE_ACTIONS[role]
        user._recheck_membership_actions = cached
    return cached


@rules.predicate
def is_superuser(user) -> bool:
    return _active(user) and user.is_superuser


@functools.cache  # one predicate an action: making one inspects the function's signature
def _holds_instance_wide(action: Action):
    @rules.predicate(name=f"holds {action} instance-wide")
    def predicate(user) -> bool:
        return _active(user) and user.has_perm(ACTION_PERMISSIONS[action])

    return predicate


def _holds_by_membership(action: Action):
    @rules.predicate(name=f"holds {action} by a membership")
    def predicate(user, repository) -> bool:
        held = membership_actions(user)
        if repository is None:
            return any(action in actions for actions in held.values())
        return action in held.get(repository.pk, ())

    return predicate


@rules.predicate
def reads_as_public(user, repository) -> bool:
    """A public repository (or, without one, the server's public pages) read as the server reads."""
    if repository is not None and not repository.is_public:
        return False
    return bool(settings.RECHECK_PUBLIC_READ) or _active(user)


RULES = rules.RuleSet()
for _action in Action:
    _rule = is_superuser | _holds_instance_wide(_action) | _holds_by_membership(_action)
    RULES.add_rule(_action.value, _rule | reads_as_public if _action is Action.READ else _rule)


def user_may(user, action: Action, repository: Repository | None = None) -> bool:
    """May `user` do `action` on `repository` (or, without one, on at least one repository)?"""
    return RULES.test_rule(Action(action).value, user, repository)


def reads_everything(user) -> bool:
    """Whether `user` reads every repository, private ones included (no filter is needed)."""
    return bool(is_superuser(user) or _holds_instance_wide(Action.READ)(user))


def readable_condition(user, path: str = "") -> Q:
    """The condition a query filters by so only what `user` may read is left; `path` leads from
    the query's model to its repository ("" for repositories themselves, "pull_request__repository"
    for findings). The same rules as `user_may(user, Action.READ, repository)`, in SQL.

    It always names a condition on the row's repository, never the empty `Q()`: an empty `Q` is
    dropped from an OR, so `Q(repository__isnull=True) | readable_condition(...)` would have read
    "no repository" for someone who reads everything. For them it is "has a repository" (`pk` not
    null), which means the same on its own and stays right when combined. Queryset methods that
    filter by it (`readable_by`) skip it for them, so their queries are those of no filter."""
    prefix = f"{path}__" if path else ""
    if reads_everything(user):
        return Q(**{f"{prefix}pk__isnull": False})
    condition = Q(**{f"{prefix}pk__in": []})
    if _active(user):
        from access.models import Membership

        held = Membership.objects.filter(Q(user=user) | Q(group__user=user)).values("repository_id")
        condition = Q(**{f"{prefix}pk__in": held})
    if settings.RECHECK_PUBLIC_READ or _active(user):
        condition |= Q(**{f"{prefix}visibility": "public"})
    return condition


AUDIT_LOG_PERMISSION = "access.view_auditentry"


def readable_rows(queryset, user, path: str = ""):
    """`queryset` narrowed to the rows `user` may read (`path` as for `readable_condition`), or
    left as it is for someone who reads everything: the queryset methods' `readable_by`."""
    return queryset if reads_everything(user) else queryset.filter(readable_condition(user, path))


def may_read_audit_log(user) -> bool:
    """Whether `user` may open the audit log at all: instance admins (superusers, or users granted
    `access.view_auditentry`). Which entries they then read is `readable_audit_entries`."""
    return bool(_active(user) and user.has_perm(AUDIT_LOG_PERMISSION))


def holds_everywhere(user, action: Action) -> bool:
    """Whether `user` may do `action` on every repository: a superuser, or an instance-wide role."""
    return bool(is_superuser(user) or _holds_instance_wide(Action(action))(user))


def may_add_repositories(user) -> bool:
    """Whether importing may add a repository new to the server: a superuser or an instance-wide
    role that imports. A membership is on a repository that exists, so it never adds one."""
    return bool(is_superuser(user) or _holds_instance_wide(Action.IMPORT)(user))


def refusal(user, action: Action, repository: Repository | None = None) -> str:
    """Why `user_may` said no, and what to do about it."""
    action = Action(action)
    where = repository.slug if repository is not None else "this server"
    if user is None or not user.is_authenticated:
        return f"Sign in to {ACTION_PHRASES[action]} {where}."
    role = ACTION_ROLES[action]
    whom = "an admin of the repository or of this server" if repository is not None else "an admin of this server"
    return (
        f"{user.get_username()} may not {ACTION_PHRASES[action]} {where}: that needs the {role} role; "
        f"ask {whom} to grant it."
    )


class ActionRefused(PermissionDenied):
    """A writing service refused its actor (a 403 on the site and the API, with this message)."""


def actor_check(actor, action: Action, repository: Repository | None, *, audit_action: str, target: str = "") -> None:
    """What every writing service asks of its actor before it writes `repository` (or an object
    of it): raise ActionRefused, recorded in the audit log, unless `actor` may do `action` there.
    None is the operator (a command, a worker), who may do anything. A repository the actor may
    not read is named in the refusal as "this server", so it says nothing of what is there.
    Call it before the service's transaction: a refusal recorded inside one would roll back."""
    if actor is None or user_may(actor, action, repository):
        return
    shown = repository if repository is not None and user_may(actor, Action.READ, repository) else None
    message = refusal(actor, action, shown)
    from access.audit import audit_refusal

    audit_refusal(action=audit_action, actor=actor, target=target, repository=shown, message=message)
    raise ActionRefused(message)
