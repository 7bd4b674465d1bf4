"""What verification loads of a pull request's findings and evidence (plain rows, not model
instances: this is the hot path), and the outcome of checking one finding."""
from collections import Counter
from dataclasses import dataclass
from typing import NamedTuple

from core import vocabulary
from engine.verification import CheckResult, verdict_for
from findings.models import Evidence, Finding
from reviews.models import PullRequest


class FindingRow(NamedTuple):
    """What verification needs of a finding, loaded without model instances: a PR can have
    thousands of evidence items and this is the hot path. A named tuple, made from the row as the
    database gives it, at a tenth of a frozen dataclass's cost."""

    pk: int
    pull_request_id: int
    status: str
    resolved_at: object
    evidence_version: int


class EvidenceRow(NamedTuple):
    pk: int
    finding_id: int
    kind: str
    commit_sha: str | None
    path: str
    start_line: int | None
    end_line: int | None
    text: str
    regex: str
    expect: str
    sha: str
    submodule_repository_id: int | None
    reference_branch: str
    check_name: str = ""
    check_app: str = ""
    check_tests: list = []
    check_results: list = []


@dataclass
class Outcome:
    finding: FindingRow
    verdict: str
    detail: str
    results: list[tuple[EvidenceRow, CheckResult]]

    @property
    def reason(self) -> str:
        """Why the verdict is an error here, by the one rule (`vocabulary.verdict_reason`): the
        check outcomes of the items in error ('' for an item that is not a check item)."""
        return vocabulary.verdict_reason(self.verdict, [
            (result.facts or {}).get("outcome") or "" if item.kind == Evidence.Kind.CHECK else ""
            for item, result in self.results if result.state == vocabulary.STATE_ERROR
        ])


def _load(pull_request: PullRequest) -> tuple[list[FindingRow], dict[int, list[EvidenceRow]]]:
    findings = [
        FindingRow(*row)
        for row in Finding.objects.for_pull_request(pull_request)
        .order_by("number")
        .values_list("pk", "pull_request_id", "status", "resolved_at", "evidence_version")
    ]
    evidence: dict[int, list[EvidenceRow]] = {}
    rows = (
        Evidence.objects.filter(finding__pull_request=pull_request)
        .order_by("finding_id", "position")
        .values_list("pk", "finding_id", "kind", "commit__sha", "path", "start_line", "end_line", "text", "regex",
                     "expect", "sha", "submodule_repository_id", "reference_branch", "check_name", "check_app",
                     "check_tests", "check_results")
    )
    for row in rows:
        item = EvidenceRow(*row)
        evidence.setdefault(item.finding_id, []).append(item)
    return findings, evidence


# At most this many of the evidence's commits have their changes worked out in the background.
_CHANGES_STARTED = 4


def _read_paths(pull_request: PullRequest) -> tuple[list[str], list[str]]:
    """The files that the evidence `_load` loads will have read at the commit checked, and the
    commits most of it was recorded at (where a snippet that left its place is looked for from)."""
    rows = (
        Evidence.objects.filter(finding__pull_request=pull_request, kind__in=(Evidence.Kind.SNIPPET, Evidence.Kind.PATTERN))
        .order_by()
        .values_list("path", "commit__sha")
        .distinct()
    )
    paths: dict[str, None] = {}
    commits: Counter[str] = Counter()
    for path, sha in rows:
        paths[path] = None
        if sha:
            commits[sha] += 1
    # The few commits most of the evidence was recorded at: each costs a git process of its own.
    return list(paths), [sha for sha, _ in commits.most_common(_CHANGES_STARTED)]


def _outcome(finding: FindingRow, results: list[tuple[EvidenceRow, CheckResult]]) -> Outcome:
    return Outcome(finding, verdict_for([result for _, result in results]), "", results)


def _error_outcome(finding: FindingRow, evidence: list[EvidenceRow], detail: str) -> Outcome:
    results = [
        (
            item,
            CheckResult("unchecked", detail="not checkable by machine")
            if item.kind == Evidence.Kind.NOTE
            else CheckResult("error", detail=detail),
        )
        for item in evidence
    ]
    return Outcome(finding, "error", detail, results)
