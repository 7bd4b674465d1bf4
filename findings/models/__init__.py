"""What was found: findings, their evidence, and what verification made of them at each commit.

The models of app `findings`, one module per concern; every model (and the one query helper
other packages use) is imported from here, `findings.models`, as Django expects of an app:

- `findings.models.querysets`: what the querysets of a finding's rows share
- `findings.models.findings`: findings, tags and their per-repository descriptions, search entries and links between findings
- `findings.models.evidence`: a finding's evidence
- `findings.models.verifications`: verdicts at a commit and what each evidence item was there
- `findings.models.history`: the changes of a finding
- `findings.models.runs`: verification runs
- `findings.models.import_jobs`: bundles imported in the background
- `findings.models.companion`: a pull request's stored companion pages
- `findings.models.state`: a pull request's review state, stored per generation
- `findings.models.timeline`: a pull request's events, only ever added to, and how far they go
- `findings.models.webhooks`: forge webhook deliveries
- `findings.models.follow_ups`: what a merged pull request left to do, checked on the default branch
- `findings.models.reports`: CI reports of a repository's commits, with their tests and scanner results
- `findings.models.policy`: a repository's merge policy and the overrides of a pull request's gate
"""
from findings.models.companion import CompanionPages
from findings.models.evidence import Evidence
from findings.models.follow_ups import FollowUp, FollowUpEvent, FollowUpSweep
from findings.models.findings import Finding, FindingLink, FindingSearchEntry, Tag, TagDescription
from findings.models.history import FindingEvent
from findings.models.import_jobs import ImportJob
from findings.models.policy import GateOverride, RepositoryPolicy
from findings.models.reports import CheckReport, ReportedResult, ReportedTest
from findings.models.runs import VerificationRun
from findings.models.state import FindingListState, PullRequestGate, PullRequestState
from findings.models.timeline import ReviewEvent, TimelineMark
from findings.models.verifications import EvidenceResult, Verdict, Verification, latest_verified_commit_id
from findings.models.webhooks import WebhookDelivery

__all__ = [
    "CheckReport",
    "CompanionPages",
    "Evidence",
    "EvidenceResult",
    "Finding",
    "FindingEvent",
    "FindingLink",
    "FindingListState",
    "FindingSearchEntry",
    "FollowUp",
    "FollowUpEvent",
    "FollowUpSweep",
    "GateOverride",
    "ImportJob",
    "PullRequestGate",
    "PullRequestState",
    "ReportedResult",
    "ReportedTest",
    "ReviewEvent",
    "RepositoryPolicy",
    "Tag",
    "TagDescription",
    "Verdict",
    "Verification",
    "TimelineMark",
    "VerificationRun",
    "WebhookDelivery",
    "latest_verified_commit_id",
]
