"""Reverting one field change the audit log recorded: a finding's field, a pull request's, a
repository's settings or what a tag means in a repository, set back to its value before.

Every entry of an update keeps each changed field as [before, after] (an edit's `changes`, an
import's `<object label>.<field>`), so a change can be undone field by field. A revert checks its
actor against the object it writes (the role that may change that field there), refuses when the
field changed again since (a revert never overwrites a later change), and is itself audited: an
`audit.revert` entry naming the entry it reverts, with the field's [after, before]."""
from __future__ import annotations

import re
from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db import transaction

from access.audit import _plain, audit_record, audit_refusal, writes
from access.models import AuditEntry
from access.permissions import Action, actor_check
from core.errors import RecheckError
from findings.models import Finding, FindingEvent, Tag
from findings.services.authoring import finding_event_for
from findings.services.tags_and_links import tag_description_apply
from reviews.models import PullRequest, Repository
from reviews.services import pull_request_changed, repository_clone_url_check

# The fields a revert may set back, per kind of object, and the action that changes them.
FINDING_FIELDS = ("kind", "caught_by", "title", "summary", "body", "fix", "review_comment_url", "path", "line")
PULL_REQUEST_FIELDS = ("title", "url", "state", "before", "change", "status_note", "opening", "closing",
                       "comments_left", "cleanups_not_recorded", "attestation", "attested_by")
REPOSITORY_FIELDS = ("clone_url", "web_url", "default_branch", "publish_checks", "publish_comment")
ACTIONS = {"finding": Action.WRITE, "pull request": Action.IMPORT, "repository": Action.SETTINGS,
           "tag": Action.WRITE}

_FINDING_TARGET = re.compile(r"^(?P<reference>\S+#\d+) (?:finding|blocker|cleanup) (?P<number>\d+)(?::.*)?$", re.S)
_TAG_TARGET = re.compile(r"^tag (?P<slug>\S+) in (?P<repository>\S+)$")


class RevertRefused(RecheckError):
    """A field change that cannot be reverted (not recorded, not revertible, changed since)."""


@dataclass(frozen=True)
class Revertible:
    """One recorded field change, and the object it was made to (None once that is gone)."""

    key: str  # as the entry's `changes` names it
    kind: str  # finding, pull request, repository, tag
    field: str
    before: object
    after: object
    obj: object | None
    repository: Repository | None


def _pull_request(reference: str) -> PullRequest | None:
    slug, _, number = reference.rpartition("#")
    return PullRequest.objects.select_related("repository").filter(repository__slug=slug, number=number).first() \
        if number.isdigit() else None


def _finding(reference: str, number: str) -> Finding | None:
    pull_request = _pull_request(reference)
    return pull_request and Finding.objects.select_related("pull_request__repository").filter(
        pull_request=pull_request, number=int(number)
    ).first()


def _object(entry: AuditEntry, key: str) -> tuple[str, str, object | None]:
    """(kind, field, object) that the entry's change `key` was made to; kind "" when none."""
    action = entry.action
    if action == "review.import" and "." in key:
        label, name = key.rsplit(".", 1)
        kind, _, rest = label.partition(" ")
        if label.startswith("pull request "):
            return "pull request", name, _pull_request(label.removeprefix("pull request "))
        if kind == "finding" and rest.isdigit():
            return "finding", name, _finding(entry.target, rest)
        if kind == "repository":
            return "repository", name, Repository.objects.filter(slug=rest).first()
        if kind == "tag":
            return "tag", name, Tag.objects.filter(slug=rest).first()
        return "", name, None
    if action in ("finding.edit", "finding.create") and (match := _FINDING_TARGET.match(entry.target)):
        return "finding", key, _finding(match["reference"], match["number"])
    if action in ("pullrequest.edit",):
        return "pull request", key, _pull_request(entry.target)
    if action in ("repository.update", "repository.edit", "repository.settings"):
        return "repository", key, Repository.objects.filter(slug=entry.target).first()
    if action == "tag.describe" and (match := _TAG_TARGET.match(entry.target)):
        return "tag", key, Tag.objects.filter(slug=match["slug"]).first()
    return "", key, None


def _fields(kind: str) -> tuple[str, ...]:
    return {"finding": FINDING_FIELDS, "pull request": PULL_REQUEST_FIELDS, "repository": REPOSITORY_FIELDS,
            "tag": ("description",)}.get(kind, ())


def audit_entry_revertible(*, entry: AuditEntry) -> list[Revertible]:
    """The field changes of `entry` that a revert can set back (whoever may)."""
    if entry.outcome != AuditEntry.Outcome.DONE or entry.action == "audit.revert":
        return []
    found = []
    for key, values in (entry.changes or {}).items():
        if not (isinstance(values, list) and len(values) == 2):
            continue
        kind, name, obj = _object(entry, key)
        if name not in _fields(kind):
            continue
        if kind == "finding" and entry.action == "finding.create":
            continue  # a creation has no "before" to go back to
        repository = (
            obj.pull_request.repository if isinstance(obj, Finding)
            else obj.repository if isinstance(obj, PullRequest)
            else obj if isinstance(obj, Repository)
            else entry.repository
        ) if obj is not None else None
        found.append(Revertible(key, kind, name, values[0], values[1], obj, repository))
    return found


def _current(change: Revertible):
    if change.kind == "tag":
        row = change.obj.descriptions.filter(repository=change.repository).first()
        return row.description if row is not None else ""
    return getattr(change.obj, change.field)


@writes("audit.revert")
def audit_entry_revert(*, entry: AuditEntry, key: str, actor) -> AuditEntry:
    """Set the field that `entry` changed under `key` back to its value before, once `actor` may
    change that field of that object; the `audit.revert` entry it records is returned. Refused
    (RevertRefused, recorded) when the change is not one a revert can undo, when the object is
    gone, or when the field changed again since; ActionRefused without the role."""
    try:
        return _audit_entry_revert(entry, key, actor)
    except RecheckError as error:
        audit_refusal(action="audit.revert", actor=actor, target=entry.target, repository=entry.repository,
                      message=str(error))
        raise


def _audit_entry_revert(entry: AuditEntry, key: str, actor) -> AuditEntry:
    change = next((item for item in audit_entry_revertible(entry=entry) if item.key == key), None)
    if change is None:
        raise RevertRefused(f"Audit entry {entry.pk} records no change of {key!r} that can be reverted: a "
                            "finding's, pull request's or repository's own fields and tag descriptions can.")
    if change.obj is None or change.repository is None:
        raise RevertRefused(f"What audit entry {entry.pk} changed is no longer recorded, so there is nothing to revert.")
    actor_check(actor, ACTIONS[change.kind], change.repository, audit_action="audit.revert", target=entry.target)
    with transaction.atomic():
        now = _current(change)
        if _plain(now) != change.after:
            raise RevertRefused(
                f"{change.field} changed again since audit entry {entry.pk} (it is now {_plain(now)!r}); "
                "a revert never overwrites a later change. Edit it instead."
            )
        _apply(change)
        revert = audit_record(
            action="audit.revert", actor=actor, target=entry.target, repository=change.repository,
            changes={key: [change.after, change.before]}, message=f"Reverts {change.field} of audit entry {entry.pk}.",
        )
        if change.kind == "finding":
            # The finding's own history says it was edited, as any edit of it does.
            source = revert.source if revert.source in FindingEvent.Source.values else FindingEvent.Source.COMMAND
            event = finding_event_for(finding=change.obj, created=False, changed=[change.field], actor=actor,
                                      source=source)
            event.note = f"Reverted {change.field} (audit entry {entry.pk})."
            event.save()
        return revert


def _apply(change: Revertible) -> None:
    value = change.before
    if change.kind == "tag":
        tag_description_apply(tag=change.obj, repository=change.repository, description=value or "")
        return
    field = change.obj._meta.get_field(change.field)
    if value is None and not field.null:
        value = ""
    if change.kind == "repository" and change.field == "clone_url" and value:
        value = repository_clone_url_check(value)
    try:
        value = field.clean(value, change.obj)
    except ValidationError as error:
        raise RevertRefused(f"{change.field} cannot be set back to {value!r}: {' '.join(error.messages)}") from None
    setattr(change.obj, change.field, value)
    change.obj.save()
    if change.kind == "finding":
        pull_request_changed(pull_request_id=change.obj.pull_request_id)
    elif change.kind == "pull request":
        pull_request_changed(pull_request_id=change.obj.pk)
