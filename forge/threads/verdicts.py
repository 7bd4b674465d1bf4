"""Verdicts out: what Recheck verified goes back to each review thread a finding came from, for a
repository whose `ThreadSettings.publish_verdicts` is on.

After each verification, a thread whose finding's verdict or place changed gets one reply (or its
reply edited in place): "Still present at abc1234, now at src/load.py:13", "Verified fixed at
abc1234", "Partly fixed: 2 of 3 items gone at abc1234", in the vocabulary's words. The verdict and
"possibly regressed" are read from the pull request's stored review state, the one answer every
page shows. A thread is resolved when a maintainer marks its finding fixed (or, when the setting
says so, once it is verified fixed), and unresolved when the finding looks regressed or is
reopened. Every reply and resolution is a call in the outbox."""
from __future__ import annotations

import logging

from django.db import transaction

from access.audit import audit_changes, audit_record, writes
from access.permissions import Action, actor_check
from core import vocabulary as v
from findings.models import EvidenceResult, Finding, Verification, VerificationRun
from findings.selectors.successors import successor_read
from findings.state.stored import finding_state
from forge.outbox.models import ForgeCall
from forge.threads.calls import VERDICT, thread_call_record
from forge.threads.models import ReviewThread, ThreadSettings
from presentation.links import Links
from reviews.models import Commit
from reviews.selectors import pull_request_latest_head

logger = logging.getLogger(__name__)


def _settings(repository_id: int) -> ThreadSettings | None:
    found = ThreadSettings.objects.filter(repository_id=repository_id).first()
    return found if found is not None and found.publish_verdicts else None


def _answered_threads(pull_request_id: int, finding_ids=None):
    threads = ReviewThread.objects.filter(
        pull_request_id=pull_request_id, finding__isnull=False,
        state__in=[ReviewThread.State.FINDING, ReviewThread.State.ATTACHED],
    ).exclude(problem=ReviewThread.Problem.FIRST_DELETED).select_related("finding", "pull_request__repository")
    return threads.filter(finding_id__in=finding_ids) if finding_ids is not None else threads


def _reply(finding: Finding, commit: Commit, verdict: str | None, reason: str = "") -> tuple[str, str]:
    """The reply's key (what changed, without the commit) and its text."""
    verification = Verification.objects.filter(
        finding=finding, commit=commit, evidence_version=finding.evidence_version).first()
    results = list(verification.results.select_related("evidence").order_by("evidence__position")) \
        if verification else []
    checkable = [result for result in results if result.evidence.kind != "note"]
    gone = sum(1 for result in checkable if result.state == EvidenceResult.State.GONE)
    where = next((v.location(result.path, result.start_line, result.end_line) for result in checkable
                  if result.state == EvidenceResult.State.HOLDS and result.path), "")
    sentence = v.thread_verdict_sentence(verdict=verdict, short_sha=commit.short_sha, where=where, gone=gone,
                                         total=len(checkable), reason=reason)
    # What replaced the gone items ("Rewritten at abc12345: now src/x.py:40–44"), one line each.
    replaced = [shown.sentence for result in checkable if (shown := successor_read(result.successor, sha=commit.sha))]
    key = "|".join([verdict or "", where, f"{gone}/{len(checkable)}", *replaced] + ([reason] if reason else []))
    # Here, not at the top: forge.content is the reports' text, which a verification of a repository
    # whose threads hear nothing should not load.
    from forge.content import site_url

    url = site_url(Links(pull_request=finding.pull_request).finding_detail(finding))
    kind = finding.get_kind_display()
    link = f"[{kind} {finding.number} on Recheck]({url})" if url else f"{kind} {finding.number} on Recheck"
    successors = "".join(f"\n\n{line}." for line in replaced)
    return key, f"**Recheck:** {sentence}.{successors}\n\n{link}"


def _resolution_wanted(state: dict, settings: ThreadSettings) -> bool | None:
    if state.get("possibly_regressed"):
        return False
    if state.get("status") == v.FIXED:
        return True
    if settings.resolve_when_verified and state.get("status") == v.OPEN and state.get("verdict") == v.LIKELY_FIXED:
        return True
    return None


def _ask_resolution(thread: ReviewThread, wanted: bool | None) -> list[ForgeCall]:
    if wanted is None or wanted == thread.resolve_wanted or (wanted is False and thread.resolve_wanted is None
                                                            and not thread.resolved):
        return []
    ReviewThread.objects.filter(pk=thread.pk).update(resolve_wanted=wanted)
    thread.resolve_wanted = wanted
    return [thread_call_record(thread=thread, kind=ForgeCall.Kind.THREAD_RESOLVE, state="resolve" if wanted
                               else "unresolve", body={"resolved": wanted})]


@writes("review_thread.verdict", system="a verification's outcome, reported by the forge")
def thread_verdicts_report(*, run: VerificationRun) -> list[ForgeCall]:
    """The replies and resolutions a finished run calls for (none while it is queued or running,
    or when the repository does not publish to its threads). Never raises: a report that cannot be
    prepared must not fail the verification; it is logged, and the next verification tries again."""
    if run.is_active or run.status != VerificationRun.Status.DONE:
        return []
    settings = _settings(run.pull_request.repository_id)
    if settings is None:
        return []
    try:
        with transaction.atomic():
            return _report(run, settings)
    except Exception:
        logger.exception("Could not prepare the review thread replies of verification run %s", run.pk)
        return []


def _report(run: VerificationRun, settings: ThreadSettings) -> list[ForgeCall]:
    pull_request = run.pull_request
    head = pull_request_latest_head(pull_request)
    commit = Commit.objects.get(pk=run.commit_id) if run.commit_id else head
    if commit is None or (head is not None and head.pk != commit.pk):
        return []  # a thread speaks of the pull request's latest head, as its comment does
    calls = []
    for thread in _answered_threads(pull_request.pk):
        state = finding_state(thread.finding)
        if state.get("latest_sha") != commit.sha:
            continue
        key, body = _reply(thread.finding, commit, state.get("verdict"), state.get("verdict_reason") or "")
        if key != thread.reply_state:
            ReviewThread.objects.filter(pk=thread.pk).update(reply_state=key, reply_body=body)
            calls.append(thread_call_record(thread=thread, kind=ForgeCall.Kind.THREAD_REPLY, state=VERDICT,
                                            body={"body": body}))
        calls += _ask_resolution(thread, _resolution_wanted(state, settings))
    return calls


@writes("review_thread.resolution", system="a finding's status, changed by a service that checked its actor")
def finding_threads_follow(*, finding: Finding, status: str) -> list[ForgeCall]:
    """A maintainer marked the finding fixed (or reopened it): its threads follow at once. `status`
    is the new one (the history event that announces it is written before the finding is saved)."""
    settings = _settings(finding.pull_request.repository_id)
    if settings is None:
        return []
    wanted = True if status == v.FIXED else (False if status == v.OPEN else None)
    calls = []
    for thread in _answered_threads(finding.pull_request_id, finding_ids=[finding.pk]):
        if wanted is False and thread.resolve_wanted is not True:
            continue  # reopening unresolves only what Recheck resolved
        calls += _ask_resolution(thread, wanted)
    return calls


THREAD_SETTINGS_FIELDS = ("publish_verdicts", "resolve_when_verified")


@writes("repository.settings")
def thread_settings_update(*, repository, actor, publish_verdicts: bool | None = None,
                           resolve_when_verified: bool | None = None) -> ThreadSettings:
    """Turn the replies in review threads on or off for `repository`, and whether a verified fix
    resolves its thread (None leaves a setting as it is). Needs the Admin role, as the check run's
    setting does; the audit log keeps each change, before and after."""
    actor_check(actor, Action.SETTINGS, repository, audit_action="repository.settings", target=repository.slug)
    wanted = {name: value for name, value in (("publish_verdicts", publish_verdicts),
                                              ("resolve_when_verified", resolve_when_verified)) if value is not None}
    with transaction.atomic():
        settings, _ = ThreadSettings.objects.select_for_update().get_or_create(repository=repository)
        before = {name: getattr(settings, name) for name in wanted}
        if any(before[name] != value for name, value in wanted.items()):
            for name, value in wanted.items():
                setattr(settings, name, value)
            settings.save()
            audit_record(action="repository.settings", actor=actor, target=repository.slug, repository=repository,
                         changes=audit_changes(before, wanted))
    return settings
