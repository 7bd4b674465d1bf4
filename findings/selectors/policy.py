"""Reading a repository's merge policy (its row, else the defaults), who may override its gate,
and a pull request's overrides, as the site, the API and the admin show them."""
from datetime import datetime, timedelta

from access.permissions import Action, user_may
from core import vocabulary as v
from findings.models import GateOverride, RepositoryPolicy
from reviews.models import PullRequest, Repository

# The settings of a policy, in the order every interface lists them.
POLICY_FIELDS = ("possibly_regressed_block", "overdue_cleanups_block", "cleanup_due_days", "blocker_due_days",
                 "regression_restarts_clock", "override_role")

# The action each override role holds (`access.permissions.ROLE_ACTIONS`): a Maintainer resolves,
# an Admin changes settings. So the role that overrides is one of the actions a page's key has.
OVERRIDE_ROLE_ACTIONS = {"maintainer": Action.RESOLVE, "admin": Action.SETTINGS}


def repository_policy(repository: Repository) -> RepositoryPolicy:
    """The repository's policy: its row, or an unsaved one with the defaults."""
    policy = RepositoryPolicy.objects.filter(repository=repository).first()
    return policy if policy is not None else RepositoryPolicy(repository=repository)


def policy_values(policy: RepositoryPolicy) -> dict:
    return {name: getattr(policy, name) for name in POLICY_FIELDS}


def follow_up_due_days(policy: RepositoryPolicy, origin: str) -> int:
    """How many days a follow-up of `origin` has under `policy`: an open cleanup's, or a blocker's
    (dismissed, fixed anyway, or left open at the merge)."""
    return policy.cleanup_due_days if origin == v.ORIGIN_OPEN_CLEANUP else policy.blocker_due_days


def follow_up_due_at(policy: RepositoryPolicy, origin: str, start: datetime) -> datetime:
    """When a follow-up of `origin` whose clock starts at `start` is due: always after `start`,
    since a policy's days are at least one."""
    return start + timedelta(days=follow_up_due_days(policy, origin))


def override_action(override_role: str) -> Action:
    """What a user must hold on the repository to override its gate, under a policy naming
    `override_role`."""
    return OVERRIDE_ROLE_ACTIONS[override_role]


def may_override(user, repository: Repository, override_role: str) -> bool:
    return user_may(user, override_action(override_role), repository)


def pull_request_overrides(pull_request: PullRequest):
    """The PR's overrides, newest first, revoked ones included, with their commits."""
    return (GateOverride.objects.filter(pull_request=pull_request).select_related("commit")
            .order_by("-at", "-id"))
