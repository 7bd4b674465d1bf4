"""Reads about findings that need more than one queryset."""
from django.db.models import Exists, OuterRef, Prefetch

from findings.models import EvidenceResult, Finding, Verification
from reviews.models import Commit, PinnedCommit, PullRequest


def pull_request_pins(pull_request: PullRequest) -> list[PinnedCommit]:
    """The PR's pinned commits in the order they were pinned, each marked `has_verifications`."""
    return list(
        PinnedCommit.objects.filter(pull_request=pull_request)
        .select_related("commit")
        .annotate(
            has_verifications=Exists(
                Verification.objects.filter(commit=OuterRef("commit"), finding__pull_request=pull_request)
            )
        )
        .order_by("pinned_at", "id")
    )


def pull_request_latest_verified_commit(pull_request: PullRequest) -> Commit | None:
    """The most recently pinned commit at which the PR's findings have been verified."""
    verified = [pin for pin in pull_request_pins(pull_request) if pin.has_verifications]
    return verified[-1].commit if verified else None


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
    findings = Finding.objects.for_pull_request(pull_request).select_related(
        "pull_request__repository", "resolved_commit", "resolved_by"
    ).prefetch_related("evidence__commit")
    if kind:
        findings = findings.filter(kind=kind)
    return findings.order_by("number")
