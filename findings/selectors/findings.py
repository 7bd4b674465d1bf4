"""Reads about findings that need more than one queryset."""
from django.db.models import Count, Exists, OuterRef, Prefetch, Q, Subquery

from access.permissions import reads_everything
from reviews.selectors import readable_repositories
from core import vocabulary
from findings.models import (
    EvidenceResult,
    Finding,
    FindingEvent,
    Tag,
    TagDescription,
    Verification,
    VerificationRun,
)
from findings.selectors.successors import successor_read
from findings.state.stored import findings_where, pull_request_state, pull_request_states
from reviews.models import Commit, PinnedCommit, PullRequest


def pins_with_verified_flag():
    """Pins with their commits, in pin order, each marked `has_verifications` (its PR's findings
    have verdicts at that commit)."""
    verified = Verification.objects.filter(commit=OuterRef("commit"), finding__pull_request=OuterRef("pull_request"))
    return PinnedCommit.objects.select_related("commit").annotate(has_verifications=Exists(verified)).in_order()


def pull_request_pins(pull_request: PullRequest) -> list[PinnedCommit]:
    """The PR's pinned commits in the order they were pinned, each marked `has_verifications`."""
    return list(pins_with_verified_flag().filter(pull_request=pull_request))


def pull_request_is_verified_at(pull_request: PullRequest, commit: Commit) -> bool:
    """Whether `commit` has verdicts for the PR's findings, or a finished run there (a PR without
    findings has nothing to store)."""
    return (
        Verification.objects.filter(commit=commit, finding__pull_request=pull_request).exists()
        or VerificationRun.objects.filter(
            pull_request=pull_request, commit=commit, status=VerificationRun.Status.DONE
        ).exists()
    )


def verification_report(pull_request: PullRequest, commit: Commit) -> list[dict]:
    """Each finding of the PR (by number) with its verdict at `commit` (None when not verified
    there) and its evidence results in evidence order, as `manage.py verify` reports them.

    Two flat queries joined in Python: prefetching the results' evidence would list every evidence
    id in one condition, which SQLite refuses past about a thousand ("Expression tree is too large")."""
    findings: dict[int, dict] = {}
    there = Verification.objects.filter(finding=OuterRef("pk"), commit=commit)
    for pk, number, verdict, reason in (
        Finding.objects.for_pull_request(pull_request)
        .annotate(verdict_there=Subquery(there.values("verdict")[:1]),
                  reason_there=Subquery(there.values("verdict_reason")[:1]))
        .order_by("number")
        .values_list("pk", "number", "verdict_there", "reason_there")
    ):
        # Why an error verdict is one at `commit`, as stored with the verification there.
        findings[pk] = {"number": number, "verdict": verdict, "verdict_reason": reason or "", "evidence": []}
    rows = (
        EvidenceResult.objects.filter(verification__commit=commit, verification__finding__pull_request=pull_request)
        .order_by("verification__finding_id", "evidence__position")
        .values_list(
            "verification__finding_id", "evidence__position", "evidence__kind", "state", "path", "start_line",
            "end_line", "detail", "facts", "successor",
        )
    )
    for finding_id, position, kind, state, path, start_line, end_line, detail, facts, successor in rows:
        shown = successor_read(successor, sha=commit.sha)
        findings[finding_id]["evidence"].append(
            {
                "index": position,
                "kind": kind,
                "state": state,
                "path": path or None,
                "start_line": start_line,
                "end_line": end_line,
                "detail": detail,
                **({"facts": facts} if facts else {}),
                # What replaced a gone item, as every interface reads it (None when nothing can be told).
                **({"successor": shown.as_data() if shown else None} if state == EvidenceResult.State.GONE else {}),
            }
        )
    return list(findings.values())


def pull_request_latest_verified_commit(pull_request: PullRequest) -> Commit | None:
    """The latest verified pin's commit, as the PR's state names it (`findings.state`)."""
    commit_id = pull_request_state(pull_request_id=pull_request.pk)["latest_commit_id"]
    return Commit.objects.filter(pk=commit_id).first() if commit_id else None


def verifications_at(findings, commit: Commit | None) -> dict[int, Verification]:
    """Finding id -> its verification at `commit`, with results and their evidence prefetched."""
    if commit is None:
        return {}
    verifications = (
        Verification.objects.filter(finding__in=findings, commit=commit)
        .select_related("commit")
        .prefetch_related(Prefetch("results", queryset=EvidenceResult.objects.select_related("evidence")))
    )
    return {verification.finding_id: verification for verification in verifications}


def findings_of(pull_request: PullRequest, *, kind: str | None = None):
    """The PR's findings with what their pages show prefetched (evidence and its commit)."""
    findings = Finding.objects.for_pull_request(pull_request).with_evidence()
    if kind:
        findings = findings.filter(kind=kind)
    return findings.order_by("number")


# --- Reads for the site and the companion pages --------------------------------------------


def latest_verified_pin(pins: list[PinnedCommit], *, pull_request: PullRequest) -> PinnedCommit | None:
    """The pin of `pins` (as returned by `pull_request_pins`) that the PR's state names its latest
    verified one: the last, in pin order, with verdicts of the findings' current evidence."""
    commit_id = pull_request_state(pull_request_id=pull_request.pk)["latest_commit_id"]
    return next((pin for pin in pins if pin.commit_id == commit_id), None)


def pull_request_latest_run(pull_request: PullRequest) -> VerificationRun | None:
    return VerificationRun.objects.filter(pull_request=pull_request).latest_first().first()


def pull_request_last_finished_run(pull_request: PullRequest) -> VerificationRun | None:
    """The PR's newest run that has ended, done or failed: its outcome stays on the PR's pages
    (a failure with its cause) until a later run ends."""
    return (
        VerificationRun.objects.filter(
            pull_request=pull_request, status__in=[VerificationRun.Status.DONE, VerificationRun.Status.FAILED]
        )
        .select_related("commit")
        .latest_first()
        .first()
    )


def pull_request_active_run(pull_request: PullRequest) -> VerificationRun | None:
    """The PR's newest queued or running verification that is not dead, whatever commit it covers."""
    return VerificationRun.objects.filter(pull_request=pull_request).live().latest_first().first()


def finding_verifications(finding: Finding) -> list[Verification]:
    """Every verification of `finding`, oldest check first, with its results and their evidence."""
    return list(
        Verification.objects.filter(finding=finding)
        .select_related("commit")
        .prefetch_related(Prefetch("results", queryset=EvidenceResult.objects.select_related("evidence")))
        .order_by("checked_at", "id")
    )


def pull_request_verifications(pull_request: PullRequest, *, finding_ids=None) -> list[Verification]:
    """Every verification of the PR's findings (or of those of `finding_ids`) at every commit, with
    results and their evidence: what the PR-wide verification picture draws, in two queries."""
    verifications = Verification.objects.filter(finding__pull_request=pull_request)
    if finding_ids is not None:
        verifications = verifications.filter(finding_id__in=list(finding_ids))
    return list(
        verifications.prefetch_related(Prefetch("results", queryset=EvidenceResult.objects.select_related("evidence")))
    )


def findings_needing_decision(repositories):
    """The findings of `repositories` a maintainer should decide about, newest PR first, as their
    PRs' states say (`needs_decision`: open ones whose latest verdict says they look fixed, likely
    or partly, and fixed ones possibly regressed). Annotated with `latest_commit_id` and
    `latest_verdict`, their evidence and their PR's repository loaded."""
    findings = Finding.objects.filter(pull_request__repository__in=repositories)
    return (
        findings.filter(pk__in=findings_where(findings, "needs_decision"))
        .with_latest_verdict()
        .with_evidence()
        .order_by("pull_request__repository__slug", "-pull_request__number", "number", "pk")
    )


def finding_history(finding: Finding):
    return FindingEvent.objects.filter(finding=finding).select_related("actor", "commit").order_by("at", "id")


def pull_requests_overview(reader) -> list[PullRequest]:
    """Every PR `reader` may read with its repository and, from its stored state, its open
    blocker and cleanup counts, `latest_pin` (the last verified pin, or None) and
    `verdict_counts` (the open findings' verdicts there): the columns and the chips count the same
    findings. A private repository without a role gives no row and no count."""
    pull_requests = list(
        PullRequest.objects.readable_by(reader).select_related("repository").order_by("repository__slug", "-number")
    )
    states = pull_request_states(pr.pk for pr in pull_requests)
    latest_commit_ids = {state["latest_commit_id"] for state in states.values() if state["latest_commit_id"]}
    pins = {
        (pin.pull_request_id, pin.commit_id): pin
        for pin in PinnedCommit.objects.filter(commit_id__in=latest_commit_ids).select_related("commit")
    }
    for pr in pull_requests:
        state = states[pr.pk]
        counts = state["counts"]
        blockers, cleanups = counts.get(Finding.Kind.BLOCKER, {}), counts.get(Finding.Kind.CLEANUP, {})
        pr.open_blockers, pr.open_cleanups = blockers.get("open", 0), cleanups.get("open", 0)
        pr.finding_count = blockers.get("total", 0) + cleanups.get("total", 0)
        pr.latest_pin = pins.get((pr.pk, state["latest_commit_id"]))
        pr.verdict_counts = {
            verdict: blockers.get(f"open:{verdict}", 0) + cleanups.get(f"open:{verdict}", 0)
            for verdict in vocabulary.VERDICTS
            if blockers.get(f"open:{verdict}", 0) + cleanups.get(f"open:{verdict}", 0)
        }
    return pull_requests


def finding_search(text, *, reader):
    """The findings `reader` may read that `text` (words, "phrases", repo:/path:/tag:/kind:/status:/
    verdict: filters) matches, best first, each with `latest_verdict`: the site's search, the same
    one as the API's `q`."""
    findings = Finding.objects.readable_by(reader).select_related("pull_request__repository").search(text)
    return findings if "latest_verdict" in findings.query.annotations else findings.with_latest_verdict()


def tags_with_counts(repositories=None):
    """Tags with how many findings carry each and what they mean (`readable_descriptions`): of
    every repository (`repositories` None), or of `repositories` only (a queryset or ids: what a
    reader may read, a token's limit). Limited, only the tags those repositories' findings carry
    or those repositories describe are listed: another's tag is answered as if it did not exist,
    and neither counts nor descriptions include what the reader may not see."""
    if repositories is None:
        tags = Tag.objects.annotate(findings_count=Count("findings"))
        described = TagDescription.objects.select_related("repository").order_by("repository__slug")
    else:
        carried = Finding.objects.filter(tags=OuterRef("pk"), pull_request__repository__in=repositories)
        described = TagDescription.objects.in_repositories(repositories)
        tags = Tag.objects.filter(
            Exists(carried) | Exists(described.filter(tag=OuterRef("pk")))
        ).annotate(findings_count=Count("findings", filter=Q(findings__pull_request__repository__in=repositories)))
    return tags.prefetch_related(
        Prefetch("descriptions", queryset=described, to_attr="readable_descriptions")
    ).order_by("slug")


def tags_readable_by(reader):
    """The tags `reader` sees, counted over the findings they may read (the site's tag pages)."""
    return tags_with_counts(None if reads_everything(reader) else readable_repositories(reader))
