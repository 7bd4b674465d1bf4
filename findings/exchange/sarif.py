"""Exporting a pull request's open findings as SARIF 2.1.0, for code-scanning tools.

One result per open finding, each with a rule of its own (`recheck/<PR number>/<finding number>`):
blockers are errors, cleanups notes. Locations are where the evidence is at the PR's latest
verified commit, so an annotation lands on today's line rather than the one the reviewer saw."""
import hashlib
import json
import re
from pathlib import Path
from urllib.parse import quote

from findings.models import Evidence, EvidenceResult, Finding, Verification
from findings.selectors.findings import pull_request_latest_verified_commit, pull_request_pins, verifications_at
from findings.selectors.successors import SuccessorView, successor_read
from reviews.models import Commit, PullRequest, Repository

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
FINGERPRINT_KEY = "recheckFinding/v1"
LEVELS = {Finding.Kind.BLOCKER: "error", Finding.Kind.CLEANUP: "note"}

_SCP_LIKE = re.compile(r"^(?P<user>[^@/:]+@)?(?P<host>[^/:]+):(?P<path>(?!/).+)$")


def pull_request_sarif(*, pull_request: PullRequest) -> dict:
    """The SARIF log of `pull_request`'s open findings at its latest verified commit."""
    repository = pull_request.repository
    commit = pull_request_latest_verified_commit(pull_request) or _latest_pinned_commit(pull_request)
    findings = list(
        Finding.objects.for_pull_request(pull_request).open().prefetch_related("evidence").order_by("number")
    )
    verifications = verifications_at(findings, commit)
    rules, results = [], []
    for index, finding in enumerate(findings):
        rules.append(_rule(pull_request, finding))
        results.append(_result(pull_request, finding, index, verifications.get(finding.pk), commit))

    run = {
        "tool": {"driver": {"name": "Recheck", "rules": rules}},
        "automationDetails": {"id": f"recheck/{repository.slug}/pull/{pull_request.number}/"},
        "results": results,
    }
    repository_uri = repository_uri_of(repository)
    if repository_uri:
        provenance = {"repositoryUri": repository_uri}
        if commit is not None:
            provenance["revisionId"] = commit.sha
        run["versionControlProvenance"] = [provenance]
    return {"$schema": SARIF_SCHEMA_URI, "version": SARIF_VERSION, "runs": [run]}


def sarif_dump(log: dict) -> str:
    return json.dumps(log, indent=2, ensure_ascii=False) + "\n"


def rule_id(pull_request: PullRequest, finding: Finding) -> str:
    return f"recheck/{pull_request.number}/{finding.number}"


def finding_fingerprint(pull_request: PullRequest, finding: Finding) -> str:
    """Names the finding, never where it is: re-verification moves lines, and a code-scanning tool
    must still see the same alert."""
    key = f"{pull_request.repository.slug}#{pull_request.number}/{finding.number}"
    return hashlib.sha256(key.encode()).hexdigest()


def repository_uri_of(repository: Repository) -> str:
    """An absolute URI for the repository (SARIF requires one): its web URL, else its clone URL,
    with scp-like `git@host:path` and local paths turned into URIs."""
    if repository.web_url:
        return repository.web_url
    clone_url = repository.clone_url.strip()
    if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://", clone_url):
        return clone_url
    if clone_url.startswith("/"):
        return Path(clone_url).as_uri()
    scp = _SCP_LIKE.match(clone_url)
    if scp:
        return f"ssh://{scp['user'] or ''}{scp['host']}/{scp['path']}"
    return ""


def _latest_pinned_commit(pull_request: PullRequest) -> Commit | None:
    pins = pull_request_pins(pull_request)
    return pins[-1].commit if pins else None


def _rule(pull_request: PullRequest, finding: Finding) -> dict:
    rule = {
        "id": rule_id(pull_request, finding),
        "shortDescription": {"text": finding.title},
        "defaultConfiguration": {"level": LEVELS[finding.kind]},
        "properties": {"tags": [finding.kind]},
    }
    if finding.kind == Finding.Kind.BLOCKER:
        rule["properties"]["tags"].append(f"caught-by-{finding.caught_by}")
    if finding.summary:
        rule["fullDescription"] = {"text": finding.summary}
    if finding.fix:
        rule["help"] = {"text": finding.fix, "markdown": finding.fix}
    if finding.review_comment_url:
        rule["helpUri"] = finding.review_comment_url
    return rule


def _result(
    pull_request: PullRequest, finding: Finding, index: int, verification: Verification | None, commit: Commit | None
) -> dict:
    message = finding.title if not finding.summary else f"{finding.title} — {finding.summary}"
    result = {
        "ruleId": rule_id(pull_request, finding),
        "ruleIndex": index,
        "level": LEVELS[finding.kind],
        "message": {"text": message},
        "partialFingerprints": {FINGERPRINT_KEY: finding_fingerprint(pull_request, finding)},
        "properties": {"kind": finding.kind, "caughtBy": finding.caught_by},
    }
    if verification is not None:
        result["properties"].update(verdict=verification.verdict, verifiedAt=verification.commit.sha)
        if verification.verdict_reason:
            # Why an error is one there (waiting for CI, not run, flaky), as every interface says it.
            result["properties"]["verdictReason"] = verification.verdict_reason
    locations = [
        _location(path, start_line, end_line, caption)
        for path, start_line, end_line, caption in _places(finding, verification)
    ]
    # Where the code that replaced gone evidence is: a reviewer deciding whether it is fixed looks there.
    replaced = [
        _location(shown.successor.path, shown.successor.start_line, shown.successor.end_line, shown.sentence)
        for shown in _successors(verification)
    ]
    if locations:
        result["locations"] = locations[:1]
    related = locations[1:] + replaced
    if related:
        result["relatedLocations"] = [{"id": number, **location} for number, location in enumerate(related, start=1)]
    return result


def _successors(verification: Verification | None) -> list[SuccessorView]:
    if verification is None:
        return []
    return [
        shown for result in verification.results.all()
        if (shown := successor_read(result.successor, sha=verification.commit.sha)) is not None
    ]


def _places(finding: Finding, verification: Verification | None) -> list[tuple[str, int | None, int | None, str]]:
    """Where the finding is: where its evidence holds at the verified commit; else where the
    evidence was recorded; else the finding's own location."""
    if verification is not None:
        holding = []
        for result in verification.results.all():
            if result.state != EvidenceResult.State.HOLDS:
                continue
            if result.evidence.kind == Evidence.Kind.CHECK:
                holding += _check_places(result.evidence, result.facts or {})
            elif _is_place(result.evidence, result.path):
                holding.append((result.path, result.start_line, result.end_line, result.evidence.caption))
        if holding:
            return holding
    recorded = []
    for evidence in finding.evidence.all():
        if evidence.kind == Evidence.Kind.CHECK:
            recorded += _check_places(evidence)
        elif _is_place(evidence, evidence.path):
            recorded.append((evidence.path, evidence.start_line, evidence.end_line, evidence.caption))
    if recorded:
        return recorded
    if finding.path:
        return [(finding.path, finding.line, finding.line, "")]
    return []


def _check_places(evidence: Evidence, facts: dict | None = None) -> list[tuple[str, int | None, int | None, str]]:
    """A check item's named scanner results: where each is still reported at the verified commit
    (its `facts`), or where it was reported when the item was recorded."""
    def caption(rule: str) -> str:
        return evidence.caption or f"{rule} in {evidence.check_name}"

    if facts is not None:
        return [(item["now_path"], item.get("now_line"), item.get("now_line"), caption(item["rule"]))
                for item in facts.get("results", []) if item.get("now_path")]
    return [(item["path"], item.get("start_line"), item.get("start_line"), caption(item["rule"]))
            for item in evidence.check_results]


def _is_place(evidence: Evidence, path: str) -> bool:
    """Whether `path` is somewhere an alert can point: not a glob, not a note, and not a file the
    evidence says is missing (an alert on a file that is not there cannot be shown)."""
    if evidence.kind == Evidence.Kind.NOTE or not path or any(char in path for char in "*?["):
        return False
    return not (evidence.kind == Evidence.Kind.PATH and evidence.expect == Evidence.Expect.MISSING)


def _location(path: str, start_line: int | None, end_line: int | None, caption: str) -> dict:
    # A SARIF uri is a URI reference: a path with spaces or '#' has to be percent-encoded.
    physical = {"artifactLocation": {"uri": quote(path, safe="/")}}
    if start_line:
        region = {"startLine": start_line}
        if end_line and end_line >= start_line:
            region["endLine"] = end_line
        physical["region"] = region
    location = {"physicalLocation": physical}
    if caption:
        location["message"] = {"text": caption}
    return location
