"""What was found: findings, their evidence, and what verification made of them at each commit.

The models of app `findings`, one module per concern; every model (and the one query helper
other packages use) is imported from here, `findings.models`, as Django expects of an app."""
from findings.models.findings import (
    CompanionPages,
    Evidence,
    EvidenceResult,
    Finding,
    FindingEvent,
    FindingLink,
    FindingSearchEntry,
    ImportJob,
    Tag,
    Verdict,
    Verification,
    VerificationRun,
    WebhookDelivery,
    latest_verified_commit_id,
)

__all__ = [
    "CompanionPages",
    "Evidence",
    "EvidenceResult",
    "Finding",
    "FindingEvent",
    "FindingLink",
    "FindingSearchEntry",
    "ImportJob",
    "Tag",
    "Verdict",
    "Verification",
    "VerificationRun",
    "WebhookDelivery",
    "latest_verified_commit_id",
]
