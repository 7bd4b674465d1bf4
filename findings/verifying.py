"""Re-verifying a pull request's findings at a commit and storing what was found.

The checks themselves are plain Python (`findings.verification`); this module maps models onto
them, writes one Verification per finding per commit (an upsert, so a re-run or a duplicated task
replaces rather than duplicates), and applies the rules that keep machines from overriding people.
"""
import logging
from collections.abc import Callable
from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from findings.models import Evidence, EvidenceResult, Finding, Verification, VerificationRun
from findings.runs import verification_run_advance, verification_run_finish, verification_run_start
from findings.verification import CheckResult, EvidenceSpec, check_evidence, snippet_text_at, verdict_for
from recheck.errors import RecheckError
from reviews.git import GitReader
from reviews.mirrors import commits_resolve, repository_fetch, repository_reader
from reviews.models import Commit, PinnedCommit, PullRequest
from reviews.services import pull_request_pin_commit

logger = logging.getLogger(__name__)

Progress = Callable[[int, int], None]


@dataclass
class Outcome:
    finding: Finding
    verdict: str
    detail: str
    results: list[tuple[Evidence, CheckResult]]


def pull_request_verify(
    *, pull_request: PullRequest, commit: Commit, fetch: bool = True, progress: Progress | None = None
) -> list[Verification]:
    """Verify every finding of `pull_request` at `commit` and store the results.

    A repository that cannot be fetched or read, or a commit it does not have, gives every finding
    an `error` verdict that says why: an error is never reported as fixed."""
    findings = list(Finding.objects.for_pull_request(pull_request).prefetch_related("evidence__commit"))
    fetch_problem = _fetch(pull_request) if fetch else ""
    try:
        with repository_reader(pull_request.repository) as reader:
            commits_resolve(repository=pull_request.repository, reader=reader)
            commit.refresh_from_db()
            target = reader.resolve(commit.sha)
            outcomes = []
            for index, finding in enumerate(findings, start=1):
                outcomes.append(_verify_finding(reader, finding, target))
                if progress:
                    progress(index, len(findings))
    except RecheckError as error:
        detail = f"{error}" + (f" (fetch: {fetch_problem})" if fetch_problem and fetch_problem not in str(error) else "")
        outcomes = [_error_outcome(finding, detail) for finding in findings]
        if progress:
            progress(len(findings), len(findings))
    return _store(commit, outcomes)


def _fetch(pull_request: PullRequest) -> str:
    """Fetch the mirror; a failure is kept as a message, since an older mirror may still hold
    the commit we need."""
    try:
        repository_fetch(repository=pull_request.repository, pr_number=pull_request.number)
    except RecheckError as error:
        logger.warning("Fetching %s failed: %s", pull_request.repository.slug, error)
        return str(error)
    return ""


def _verify_finding(reader: GitReader, finding: Finding, target: str) -> Outcome:
    results = []
    for evidence in finding.evidence.all():
        results.append((evidence, _check(reader, evidence, target)))
    checks = [result for _, result in results]
    return Outcome(finding, verdict_for(checks), "", results)


def _check(reader: GitReader, evidence: Evidence, target: str) -> CheckResult:
    if evidence.kind == Evidence.Kind.NOTE:
        return check_evidence(reader, EvidenceSpec(kind="note", text=evidence.text), target)
    try:
        recorded_at = reader.resolve(evidence.commit.sha)
    except RecheckError as error:
        return CheckResult("error", detail=f"The commit this evidence was recorded at is unusable: {error}")
    if evidence.kind == Evidence.Kind.SNIPPET and not evidence.text:
        # Bundles may leave the snippet's text out: read it where the reviewer pinned it.
        try:
            evidence.text = snippet_text_at(reader, recorded_at, evidence.path, evidence.start_line, evidence.end_line)
        except RecheckError as error:
            return CheckResult("error", detail=f"Could not read the snippet at {evidence.commit.short_sha}: {error}")
        Evidence.objects.filter(pk=evidence.pk, text="").update(text=evidence.text)
    spec = EvidenceSpec(
        kind=evidence.kind,
        commit=recorded_at,
        path=evidence.path,
        start_line=evidence.start_line,
        end_line=evidence.end_line,
        text=evidence.text,
        regex=evidence.regex,
        expect=evidence.expect or None,
        sha=evidence.sha or None,
    )
    return check_evidence(reader, spec, target)


def _error_outcome(finding: Finding, detail: str) -> Outcome:
    results = [
        (
            evidence,
            CheckResult("unchecked", detail="not checkable by machine")
            if evidence.kind == Evidence.Kind.NOTE
            else CheckResult("error", detail=detail),
        )
        for evidence in finding.evidence.all()
    ]
    return Outcome(finding, "error", detail, results)


@transaction.atomic
def _store(commit: Commit, outcomes: list[Outcome]) -> list[Verification]:
    """Replace the verifications of these findings at `commit` in a few set-based queries."""
    now = timezone.now()
    Verification.objects.bulk_create(
        [
            Verification(finding=o.finding, commit=commit, verdict=o.verdict, checked_at=now, detail=o.detail)
            for o in outcomes
        ],
        update_conflicts=True,
        unique_fields=["finding", "commit"],
        update_fields=["verdict", "checked_at", "detail"],
        batch_size=1000,
    )
    verifications = {
        verification.finding_id: verification
        for verification in Verification.objects.filter(
            commit=commit, finding__in=[o.finding.pk for o in outcomes]
        ).select_related("commit")
    }
    # EvidenceResult has no dependents and no signals, so this is one DELETE statement.
    EvidenceResult.objects.filter(verification__in=list(verifications.values())).delete()
    EvidenceResult.objects.bulk_create(
        [
            EvidenceResult(
                verification=verifications[o.finding.pk],
                evidence=evidence,
                state=result.state,
                path=result.path or "",
                start_line=result.start_line,
                end_line=result.end_line,
                detail=result.detail,
            )
            for o in outcomes
            for evidence, result in o.results
        ],
        batch_size=1000,
    )
    _flag_regressions(commit, outcomes)
    return [verifications[o.finding.pk] for o in outcomes]


def _flag_regressions(commit: Commit, outcomes: list[Outcome]) -> None:
    """A finding a person marked fixed whose evidence holds again at a commit pinned after that
    decision is flagged for a person to look at; it is never reopened by a machine."""
    holding = [o.finding for o in outcomes if o.verdict in ("present", "partly_fixed")]
    fixed = [finding for finding in holding if finding.status == Finding.Status.FIXED and finding.resolved_at]
    if not fixed:
        return
    pinned_at = {
        pin.pull_request_id: pin.pinned_at
        for pin in PinnedCommit.objects.filter(commit=commit, pull_request__in={f.pull_request_id for f in fixed})
    }
    regressed = [
        finding.pk
        for finding in fixed
        if finding.pull_request_id in pinned_at and pinned_at[finding.pull_request_id] > finding.resolved_at
    ]
    Finding.objects.filter(pk__in=regressed).update(possibly_regressed=True)


def verification_run_execute(*, run: VerificationRun, progress: Progress | None = None, fetch: bool = True) -> dict:
    """Carry out a requested run: at its commit (pinned as `rebased` unless already pinned), or at
    every pinned commit. Progress goes to the run row and to `progress`."""
    pull_request = run.pull_request
    if run.commit is not None:
        pull_request_pin_commit(pull_request=pull_request, commit=run.commit, role=PinnedCommit.Role.REBASED)
        commits = [run.commit]
    else:
        commits = [pin.commit for pin in pull_request.pins.select_related("commit").order_by("pinned_at", "id")]
    per_commit = Finding.objects.for_pull_request(pull_request).count()
    total = per_commit * len(commits)
    verification_run_start(run, total=total)
    fetch_problem = _fetch(pull_request) if fetch else ""
    verdicts: dict[str, dict[str, int]] = {}
    done_before = 0
    reported = 0
    # About a hundred progress writes per run, whatever its size.
    step = max(1, total // 100)

    def advance(done: int, _total: int) -> None:
        nonlocal reported
        overall = done_before + done
        if overall - reported >= step or done == per_commit:
            verification_run_advance(run, by=overall - reported)
            reported = overall
            if progress:
                progress(overall, total)

    for commit in commits:
        verifications = pull_request_verify(pull_request=pull_request, commit=commit, fetch=False, progress=advance)
        done_before += per_commit
        counts: dict[str, int] = {}
        for verification in verifications:
            counts[verification.verdict] = counts.get(verification.verdict, 0) + 1
        verdicts[commit.sha] = counts

    errors = sum(counts.get("error", 0) for counts in verdicts.values())
    message = _summary(verdicts, fetch_problem)
    verification_run_finish(run, message=message, failed=bool(errors) and errors == total)
    _after_verification(pull_request)
    return {"pull_request": pull_request.reference, "verdicts": verdicts, "message": message}


def _summary(verdicts: dict[str, dict[str, int]], fetch_problem: str) -> str:
    parts = []
    for sha, counts in verdicts.items():
        described = ", ".join(f"{count} {verdict.replace('_', ' ')}" for verdict, count in sorted(counts.items()))
        parts.append(f"{sha[:8]}: {described or 'no findings'}")
    if fetch_problem:
        parts.append(f"fetch failed: {fetch_problem}")
    return "; ".join(parts)


def _after_verification(pull_request: PullRequest) -> None:
    """Re-render the companion pages once the new verdicts are committed."""
    from findings import tasks

    render = getattr(tasks, "render_companion_pages", None)
    if render is not None:
        transaction.on_commit(lambda: render.delay(pull_request.pk))
