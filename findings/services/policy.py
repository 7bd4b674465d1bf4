"""Writing a repository's merge policy, and overriding (or revoking an override of) a pull
request's gate at one pinned commit. Each checks its actor and records its write, or its refusal,
in the audit log; the receivers in `findings.receivers` move the generations the write touches,
so the gate, the pages, the API and the forges all read the state derived with it.

An override is announced with `findings.signals.gate_override_changed` once it commits: the forge
reports the commit's check again, and a timeline of the pull request can record it from there."""
from django.contrib.auth.base_user import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.utils import timezone

from access.audit import audit_changes, audit_record, audit_refusal, writes
from access.permissions import Action, actor_check
from core import vocabulary as v
from core.errors import PolicyError, RecheckError
from findings.models import GateOverride, RepositoryPolicy
from findings.selectors.policy import POLICY_FIELDS, override_action, policy_values, repository_policy
from findings.signals import gate_override_changed
from reviews.models import Commit, PinnedCommit, PullRequest, Repository
from reviews.services import commit_sha_checked

MAX_NOTE = 2000
BOOLEAN_FIELDS = ("possibly_regressed_block", "overdue_cleanups_block", "regression_restarts_clock")
DAY_FIELDS = ("cleanup_due_days", "blocker_due_days")


def _checked_changes(changes: dict) -> dict:
    """The settings named, each checked; anything else named is refused with its field."""
    checked = {}
    for name, value in changes.items():
        if name not in POLICY_FIELDS:
            raise PolicyError(name, f"{name} is not a setting of the merge policy: use {', '.join(POLICY_FIELDS)}.")
        if name in BOOLEAN_FIELDS and not isinstance(value, bool):
            raise PolicyError(name, f"{name} is true or false.")
        if name in DAY_FIELDS and (isinstance(value, bool) or not isinstance(value, int)
                                   or not 1 <= value <= v.LONGEST_DUE_DAYS):
            # Zero or fewer days would set due dates in the past at the moment they are set.
            raise PolicyError(name, f"{name} is a whole number of days from 1 to {v.LONGEST_DUE_DAYS}.")
        if name == "override_role" and value not in v.OVERRIDE_ROLES:
            raise PolicyError(name, f"override_role is one of {', '.join(v.OVERRIDE_ROLES)}.")
        checked[name] = value
    return checked


@writes("repository.policy")
def repository_policy_update(*, repository: Repository, actor: AbstractBaseUser | None, **changes) -> RepositoryPolicy:
    """Change the settings named in `changes` of `repository`'s merge policy (what is not named
    is not touched). Needs the Admin role on the repository; the audit log keeps each setting
    before and after. Every pull request of the repository is derived again with the new policy."""
    target = f"merge policy of {repository.slug}"
    actor_check(actor, Action.SETTINGS, repository, audit_action="repository.policy", target=target)
    try:
        wanted = _checked_changes(changes)
    except PolicyError as error:
        audit_refusal(action="repository.policy", actor=actor, target=target, repository=repository,
                      message=str(error))
        raise
    with transaction.atomic():
        policy, _ = RepositoryPolicy.objects.select_for_update().get_or_create(repository=repository)
        before = policy_values(policy)
        changed = {name: value for name, value in wanted.items() if before[name] != value}
        if changed:
            for name, value in changed.items():
                setattr(policy, name, value)
            policy.save()  # its receiver moves the generation of every pull request of the repository
            audit_record(action="repository.policy", actor=actor, target=target, repository=repository,
                         changes=audit_changes({name: before[name] for name in changed}, changed))
    return policy


def _pinned_commit(pull_request: PullRequest, sha: str) -> Commit:
    """The pinned commit of `pull_request` that `sha` names (full, or an abbreviation naming one
    pin), as the gate names commits; anything else is refused with what to do."""
    try:
        wanted = commit_sha_checked(sha)
    except RecheckError as error:
        raise PolicyError("commit", str(error)) from None
    pins = [pin.commit for pin in PinnedCommit.objects.filter(pull_request=pull_request).select_related("commit")
            if pin.commit.sha.startswith(wanted)]
    if len(pins) > 1:
        raise PolicyError("commit", f"{wanted} is the start of {len(pins)} commits pinned to {pull_request.reference}: "
                                    "give more digits.")
    if not pins:
        raise PolicyError("commit", f"{wanted} is not a commit pinned to {pull_request.reference}: an override "
                                    "holds at one pinned commit (its head, usually). Verify the commit first.")
    return pins[0]


@writes("pull_request.gate_override")
def gate_override_create(*, pull_request: PullRequest, sha: str, reason: str, note: str = "",
                         actor: AbstractBaseUser | None) -> GateOverride:
    """Override `pull_request`'s gate at the pinned commit `sha` names: it is mergeable there,
    whatever blocks, and says who, why and when. Needs the role the repository's policy names (a
    Maintainer by default; an Admin always may); a reason from the short list, and a note when the
    reason is "other". Holds at that commit only; one at a time per commit."""
    repository = pull_request.repository
    policy = repository_policy(repository)
    target = f"gate of {pull_request.reference}"
    actor_check(actor, override_action(policy.override_role), repository, audit_action="pull_request.gate_override",
                target=target)
    try:
        override = _override(pull_request, sha, reason, note.strip(), actor)
    except PolicyError as error:
        audit_refusal(action="pull_request.gate_override", actor=actor, target=target, repository=repository,
                      message=str(error))
        raise
    return override


@transaction.atomic
def _override(pull_request, sha, reason, note, actor) -> GateOverride:
    if reason not in v.OVERRIDE_REASONS:
        raise PolicyError("reason", f"Give a reason: one of {', '.join(v.OVERRIDE_REASONS)}.")
    if reason in v.OVERRIDE_REASONS_NEEDING_A_NOTE and not note:
        raise PolicyError("note", "The reason \"other\" needs a note saying why the gate is overridden.")
    if len(note) > MAX_NOTE:
        raise PolicyError("note", f"Keep the note under {MAX_NOTE} characters.")
    commit = _pinned_commit(pull_request, sha)
    # Lock the PR: two overrides of one commit at once find each other here, not in the constraint.
    PullRequest.objects.select_for_update().filter(pk=pull_request.pk).first()
    if GateOverride.objects.active().filter(pull_request=pull_request, commit=commit).exists():
        raise PolicyError("commit", f"The gate of {pull_request.reference} is overridden at {commit.short_sha} "
                                    "already: revoke that override first to give another reason.")
    label = actor.get_username() if actor is not None and actor.is_authenticated else ""
    try:
        with transaction.atomic():
            override = GateOverride.objects.create(pull_request=pull_request, commit=commit, reason=reason, note=note,
                                                   by=actor if label else None, by_label=label)
    except IntegrityError:
        raise PolicyError("commit", f"The gate of {pull_request.reference} was overridden at {commit.short_sha} "
                                    "meanwhile.") from None
    audit_record(action="pull_request.gate_override", actor=actor, target=f"gate of {pull_request.reference}",
                 repository=pull_request.repository, message=v.override_sentence(override_dict(override)),
                 changes={"overridden": [None, {"commit": commit.sha, "reason": reason, "note": note}]})
    transaction.on_commit(lambda: gate_override_changed.send(sender=GateOverride, override=override,
                                                             change="overridden"))
    return override


@writes("pull_request.gate_override_revoke")
def gate_override_revoke(*, override: GateOverride, actor: AbstractBaseUser | None) -> GateOverride:
    """Revoke an override: the gate at its commit answers as the findings and the policy say
    again. The role that may override may revoke; the override is kept, marked revoked."""
    pull_request = override.pull_request
    repository = pull_request.repository
    target = f"gate of {pull_request.reference}"
    actor_check(actor, override_action(repository_policy(repository).override_role), repository,
                audit_action="pull_request.gate_override_revoke", target=target)
    label = actor.get_username() if actor is not None and actor.is_authenticated else ""
    with transaction.atomic():
        current = GateOverride.objects.select_for_update().select_related("commit").get(pk=override.pk)
        if current.revoked_at is not None:
            error = PolicyError("override", f"That override of {pull_request.reference} at {current.commit.short_sha} "
                                            f"was revoked already, by {current.revoked_by_label or 'an operator'}.")
        else:
            error = None
            current.revoked_at = timezone.now()
            current.revoked_by = actor if label else None
            current.revoked_by_label = label
            current.save(update_fields=["revoked_at", "revoked_by", "revoked_by_label"])
            audit_record(action="pull_request.gate_override_revoke", actor=actor, target=target, repository=repository,
                         message=f"Revoked: {v.override_sentence(override_dict(current))}",
                         changes={"overridden": [{"commit": current.commit.sha, "reason": current.reason,
                                                  "note": current.note}, None]})
            transaction.on_commit(lambda: gate_override_changed.send(sender=GateOverride, override=current,
                                                                     change="revoked"))
    if error is not None:
        audit_refusal(action="pull_request.gate_override_revoke", actor=actor, target=target, repository=repository,
                      message=str(error))
        raise error
    return current


def override_dict(override: GateOverride) -> dict:
    """An override as the gate's answer carries it (`overridden`)."""
    return {"id": override.pk, "by": override.by_label, "reason": override.reason, "note": override.note,
            "commit": override.commit.sha, "at": override.at.isoformat()}
