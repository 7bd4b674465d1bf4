"""The one answer to "may this user do X on this repository?".

Every interface asks `user_may`: the site's views and templates, the API's permission classes,
the admin, the commands that act for a user and the tasks. Nothing else looks at groups, model
permissions or staff status to decide an action, so the body below is the only place that changes
when the rules do (per-repository roles, private repositories).

Roles are Django groups made by a data migration (Reader, Reviewer, Maintainer); a user holds an
action when a group of theirs, or the user directly, has the action's model permission. Superusers
hold every action. Reading also follows RECHECK_PUBLIC_READ."""
from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING

from django.conf import settings

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


class Role(StrEnum):
    READER = "Reader"
    REVIEWER = "Reviewer"
    MAINTAINER = "Maintainer"


# The model permission that carries each action; the roles' groups hold these.
ACTION_PERMISSIONS: dict[Action, str] = {
    Action.WRITE: "findings.change_finding",
    Action.IMPORT: "findings.import_review",
    Action.VERIFY: "findings.verify_pullrequest",
    Action.RESOLVE: "findings.resolve_finding",
    Action.SETTINGS: "reviews.change_repository",
}

# The token scope that opens each action to an API token (writing findings rides on `import`).
ACTION_SCOPES: dict[Action, str] = {
    Action.READ: "read",
    Action.WRITE: "import",
    Action.IMPORT: "import",
    Action.VERIFY: "verify",
    Action.RESOLVE: "resolve",
    Action.SETTINGS: "settings",
}

# Who holds an action, for refusals that say whom to ask.
ACTION_ROLES: dict[Action, str] = {
    Action.READ: "Reader",
    Action.WRITE: "Reviewer",
    Action.IMPORT: "Reviewer",
    Action.VERIFY: "Reviewer",
    Action.RESOLVE: "Maintainer",
    Action.SETTINGS: "an admin",
}

# What each action is, in a refusal ("… may not {phrase} …").
ACTION_PHRASES: dict[Action, str] = {
    Action.READ: "read",
    Action.WRITE: "write findings in",
    Action.IMPORT: "import reviews into",
    Action.VERIFY: "start verifications of",
    Action.RESOLVE: "mark findings fixed, dismissed or open in",
    Action.SETTINGS: "change the settings of",
}


def user_may(user, action: Action, repository: Repository | None = None) -> bool:
    """May `user` do `action` on `repository` (or, without one, on repositories in general)?"""
    action = Action(action)
    if action is Action.READ:
        if settings.RECHECK_PUBLIC_READ:
            return True
        return bool(user is not None and user.is_authenticated and user.is_active)
    if user is None or not user.is_authenticated or not user.is_active:
        return False
    return user.has_perm(ACTION_PERMISSIONS[action])


def refusal(user, action: Action, repository: Repository | None = None) -> str:
    """Why `user_may` said no, and what to do about it."""
    action = Action(action)
    where = repository.slug if repository is not None else "this server"
    if user is None or not user.is_authenticated:
        return f"Log in to {ACTION_PHRASES[action]} {where}."
    role = ACTION_ROLES[action]
    holder = f"the {role} role" if role != "an admin" else "an admin"
    return (
        f"{user.get_username()} may not {ACTION_PHRASES[action]} {where}: that needs {holder}; "
        "ask an admin of this server to grant it."
    )


def readable_repositories(user):
    """The repositories `user` may read, as a queryset to filter reads by. A repository outside it
    is answered as if it did not exist (a 404, never a 403 that confirms it)."""
    from reviews.models import Repository

    if user_may(user, Action.READ):
        return Repository.objects.all()
    return Repository.objects.none()
