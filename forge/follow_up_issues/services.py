"""A GitHub issue per follow-up, for repositories that opt in: opened when the pull request
merges, closed with a comment naming the commit when a maintainer marks the follow-up fixed (or
with the reason when it is closed), reopened when its evidence comes back.

Each change is a `ForgeCall` of kind `issue` written in the transaction that changed the
follow-up and sent by the outbox (`forge.outbox.sending`), in order per follow-up, so it is retried
with backoff and within GitHub's rate limits like every report; what sending does at GitHub, safe
to do again, is `forge.github.issues`."""
import hashlib
import json

from django.conf import settings
from django.db import transaction

from access.audit import audit_changes, audit_record
from access.permissions import Action, actor_check
from core import vocabulary as v
from findings.models import FollowUp
from forge.follow_up_issues.models import FollowUpIssueSetting
from forge.outbox.models import ForgeCall
from forge.outbox.wake import outbox_wake
from reviews.models import Repository

BODY_LIMIT = 60000
OPEN, CLOSE, REOPEN = "open", "close", "reopen"


def issue_marker(follow_up_id: int) -> str:
    return f"<!-- recheck-follow-up:{follow_up_id} -->"


def follow_up_issues_enabled(repository: Repository) -> bool:
    return FollowUpIssueSetting.objects.filter(repository=repository, open_issues=True).exists()


def follow_up_issues_update(*, actor, repository: Repository, open_issues: bool) -> FollowUpIssueSetting:
    """Turn the follow-ups' issues on or off for `repository` (the Admin role's, like publishing).
    Turned on, each follow-up still to do that has no issue gets one."""
    actor_check(actor, Action.SETTINGS, repository, audit_action="repository.settings", target=repository.slug)
    with transaction.atomic():
        setting, _ = FollowUpIssueSetting.objects.select_for_update().get_or_create(repository=repository)
        before = setting.open_issues
        setting.open_issues = open_issues
        setting.save()
        audit_record(action="repository.settings", actor=actor, target=repository.slug, repository=repository,
                     changes=audit_changes({"follow_up_issues": before}, {"follow_up_issues": open_issues}))
        if open_issues and not before:
            for follow_up in (FollowUp.objects.for_repository(repository).unclosed().filter(issue__isnull=True)
                              .with_origin()):
                follow_up_issue_request(follow_up=follow_up, change="opened")
    return setting


def follow_up_issue_request(*, follow_up: FollowUp, change: str) -> ForgeCall | None:
    """Write the call that keeps the follow-up's issue in step with `change` (opened, fixed,
    closed, regressed), in the caller's transaction; None when nothing is to be said (issues off,
    or the same call written already)."""
    if not follow_up_issues_enabled(follow_up.repository):
        return None
    action = {"opened": OPEN, "fixed": CLOSE, "closed": CLOSE, "regressed": REOPEN}.get(change)
    if action is None:
        return None
    body = {"follow_up": follow_up.pk, "action": action, **_content(follow_up, action)}
    digest = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()
    earlier = ForgeCall.objects.filter(repository=follow_up.repository, kind=ForgeCall.Kind.ISSUE,
                                        body__follow_up=follow_up.pk).order_by("-id").first()
    if earlier is not None and earlier.digest == digest and earlier.status != ForgeCall.Status.FAILED:
        return None  # the same change reported again: said once
    if action == OPEN and earlier is not None:
        return None  # an issue is opened once per follow-up
    call = ForgeCall.objects.create(
        repository=follow_up.repository, pull_request=follow_up.pull_request,
        sha=follow_up.merge_commit.sha if follow_up.merge_commit else "", kind=ForgeCall.Kind.ISSUE,
        state=action, digest=digest, body=body,
    )
    outbox_wake([call])
    return call


def _site_link(follow_up: FollowUp) -> str:
    base = (settings.RECHECK_SITE_URL or "").rstrip("/")
    return f"{base}{follow_up.finding.get_absolute_url()}#follow-up" if base else ""


def _permalinks(follow_up: FollowUp) -> list[str]:
    """The evidence at the default branch: where the last check found it, else where it was recorded."""
    repository, branch = follow_up.repository, follow_up.repository.default_branch
    places = {place.get("evidence"): place for place in follow_up.places or []}
    lines = []
    for evidence in follow_up.finding.evidence.order_by("position"):
        if evidence.kind == evidence.Kind.NOTE:
            lines.append(f"- {evidence.text[:300]}")
            continue
        place = places.get(evidence.pk, {})
        where = place.get("location") or v.location(evidence.path, evidence.start_line, evidence.end_line)
        path, _, span = where.partition(":")
        start, _, end = span.partition("–")
        link = repository.permalink(branch, path, int(start) if start.isdigit() else None,
                                    int(end) if end.isdigit() else None) if "*" not in path else ""
        lines.append(f"- [{where}]({link})" if link else f"- `{where}`")
    return lines


def _content(follow_up: FollowUp, action: str) -> dict:
    finding = follow_up.finding
    if action == OPEN:
        parts = [issue_marker(follow_up.pk),
                 f"Left to do after {follow_up.pull_request.reference} merged "
                 f"({v.follow_up_origin_label(follow_up.origin).lower()}).", ""]
        if finding.summary:
            parts += [finding.summary, ""]
        if finding.body:
            parts += [finding.body, ""]
        evidence = _permalinks(follow_up)
        if evidence:
            parts += [f"Evidence on `{follow_up.repository.default_branch}`:", *evidence, ""]
        link = _site_link(follow_up)
        if link:
            parts.append(f"Followed up in Recheck: {link}")
        return {"title": f"Follow-up: {finding.title}"[:256], "text": "\n".join(parts)[:BODY_LIMIT]}
    if action == CLOSE and follow_up.state == FollowUp.State.FIXED:
        sha = follow_up.fixed_commit.sha if follow_up.fixed_commit else ""
        who = f" by {follow_up.decided_by.get_username()}" if follow_up.decided_by else ""
        return {"text": f"Fixed in {sha}: verified on `{follow_up.repository.default_branch}` and marked fixed{who}.",
                "state_reason": "completed"}
    if action == CLOSE:
        return {"text": f"Closed without a fix in Recheck: {follow_up.reason}"[:BODY_LIMIT],
                "state_reason": "not_planned"}
    where = "; ".join(place.get("location") or "" for place in follow_up.places or [] if place.get("location"))
    sha = follow_up.checked_commit.sha if follow_up.checked_commit else ""
    return {"text": f"Its evidence is back on `{follow_up.repository.default_branch}` at {sha}"
                    + (f": {where}" if where else "") + "."}
