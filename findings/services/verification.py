"""Re-verifying a pull request's findings at a commit and storing what was found.

The checks themselves are plain Python (`engine.verification`); this module maps models onto
them, writes one Verification per finding per commit (an upsert, so a re-run or a duplicated task
replaces rather than duplicates), and applies the rules that keep machines from overriding people.
"""
import gc
import json
import logging
import time
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import cached_property

from django.db import connection, transaction
from django.utils import timezone

from findings.models import Evidence, EvidenceResult, Finding, Verification, VerificationRun
from findings.services.submodules import SubmoduleMirrors
from findings.services.runs import verification_run_advance, verification_run_finish, verification_run_start
from findings.signals import verification_stored
from engine.verification import (
    CheckResult,
    EvidenceChecks,
    EvidenceSpec,
    prefetch_files,
    snippet_text_at,
    verdict_for,
)
from core.errors import RecheckError
from engine.git import GitReader
from engine.git.history import merge_base
from reviews.mirrors import FETCH_FAILED_PUBLIC, commits_resolve, repository_fetch, repository_reader
from reviews.models import Commit, PinnedCommit, PullRequest
from reviews.services import pull_request_changed, pull_request_pin_commit

logger = logging.getLogger(__name__)

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class FindingRow:
    """What verification needs of a finding, loaded without model instances: a PR can have
    thousands of evidence items and this is the hot path."""

    pk: int
    pull_request_id: int
    status: str
    resolved_at: object
    evidence_version: int


@dataclass(frozen=True)
class EvidenceRow:
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


@dataclass
class Outcome:
    finding: FindingRow
    verdict: str
    detail: str
    results: list[tuple[EvidenceRow, CheckResult]]


def pull_request_verify(
    *, pull_request: PullRequest, commit: Commit, fetch: bool = True, progress: Progress | None = None,
    submodules: SubmoduleMirrors | None = None, fetch_problem: str = "",
) -> list[Verification]:
    """Verify every finding of `pull_request` at `commit` and store the results.

    A repository that cannot be fetched or read, or a commit it does not have, gives every finding
    an `error` verdict that says why: an error is never reported as fixed. Submodule repositories
    are fetched with the repository (`submodules` shares their fetches between the commits of one
    run). A caller that fetched itself (`fetch=False`) passes what went wrong in `fetch_problem`,
    so a commit missing from a mirror that could not be updated is blamed on the fetch, not the SHA."""
    if fetch:
        fetch_problem = _fetch(pull_request)
    submodules = submodules or SubmoduleMirrors(fetch=fetch)
    with _collector_paused():
        return _verify_and_store(pull_request, commit, fetch_problem, progress, submodules)


@dataclass
class _Context:
    """What every check of one finding at one commit shares."""

    reader: GitReader
    target: str
    pull_request: PullRequest
    submodules: SubmoduleMirrors
    checks: EvidenceChecks
    # Why the mirror could not be updated before this check, '' when it was.
    fetch_problem: str = ""
    # Snippet texts read from the repository, (evidence id, text), stored together afterwards.
    texts_read: list[tuple[int, str]] = field(default_factory=list)

    @cached_property
    def base_commit(self) -> str | None:
        # Only gitlink evidence needs it: worked out the first time one asks.
        return _base_commit(self.pull_request, self.reader, self.target)


def _verify_and_store(
    pull_request: PullRequest, commit: Commit, fetch_problem: str, progress: Progress | None,
    submodules: SubmoduleMirrors,
) -> list[Verification]:
    loaded = None
    try:
        with repository_reader(pull_request.repository) as reader:
            commits_resolve(repository=pull_request.repository, reader=reader)
            commit.refresh_from_db()
            target = reader.resolve(commit.sha)
            # Loaded after resolving, so evidence carries the full SHAs of its commits.
            findings, evidence = loaded = _load(pull_request)
            prefetch_files(reader, target, (item.path for items in evidence.values() for item in items
                                            if item.kind in (Evidence.Kind.SNIPPET, Evidence.Kind.PATTERN)))
            checks = EvidenceChecks(reader, target)
            context = _Context(reader, target, pull_request, submodules, checks, fetch_problem=fetch_problem)
            numbered = []
            for index, finding in enumerate(findings, start=1):
                items = evidence.get(finding.pk, [])
                numbered.append((finding, [(item, _check(context, item)) for item in items]))
                if progress and index < len(findings):
                    progress(index, len(findings))
            # Snippets that left their file are searched for in the other changed files together.
            results = checks.results()
            outcomes = [_outcome(finding, [(item, results[number]) for item, number in items])
                        for finding, items in numbered]
            if progress and findings:
                progress(len(findings), len(findings))
            _store_snippet_texts(context.texts_read)
    except RecheckError as error:
        detail = f"Repository unreachable: {fetch_problem}" if fetch_problem else str(error)
        findings, evidence = loaded or _load(pull_request)
        outcomes = [_error_outcome(finding, evidence.get(finding.pk, []), detail) for finding in findings]
        if progress:
            progress(len(findings), len(findings))
    return _store(pull_request, commit, outcomes)


@contextmanager
def _collector_paused():
    """Checking allocates a great many small strings (file lines) that all live until the run
    ends; the cyclic garbage collector would walk them over and over for nothing (about a tenth
    of the run). Nothing here makes reference cycles that need it."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


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
                     "expect", "sha", "submodule_repository_id", "reference_branch")
    )
    for row in rows:
        item = EvidenceRow(*row)
        evidence.setdefault(item.finding_id, []).append(item)
    return findings, evidence


def _fetch(pull_request: PullRequest) -> str:
    """Fetch the mirror; a failure is kept as a message, since an older mirror may still hold
    the commit we need."""
    try:
        repository_fetch(repository=pull_request.repository, pr_number=pull_request.number)
    except RecheckError as error:
        logger.warning("Fetching %s failed: %s", pull_request.repository.slug, error)
        return FETCH_FAILED_PUBLIC
    return ""


def _base_commit(pull_request: PullRequest, reader: GitReader, target: str) -> str | None:
    """The PR's base at `target` (where a submodule move starts from): the commit pinned as its
    base, else where `target` forks from the repository's default branch, as a forge computes a
    PR's base. None when neither is known."""
    pin = pull_request.pins.filter(role=PinnedCommit.Role.BASE).select_related("commit").order_by("pinned_at").first()
    try:
        if pin is not None:
            return reader.resolve(pin.commit.sha)
        branch = reader.resolve(f"refs/heads/{pull_request.repository.default_branch}")
        return merge_base(reader, target, branch)
    except RecheckError:
        return None


def _outcome(finding: FindingRow, results: list[tuple[EvidenceRow, CheckResult]]) -> Outcome:
    return Outcome(finding, verdict_for([result for _, result in results]), "", results)


def _check(context: _Context, evidence: EvidenceRow) -> int:
    """Check one item; the number of its result among ``context.checks.results()``."""
    reader, target, checks = context.reader, context.target, context.checks
    if evidence.kind == Evidence.Kind.NOTE:
        return checks.add(EvidenceSpec(kind="note", text=evidence.text))
    try:
        recorded_at = reader.resolve(evidence.commit_sha)
    except RecheckError as error:
        if context.fetch_problem:
            # Not the SHA's fault: the mirror could not be brought up to date.
            return checks.add_result(CheckResult("error", detail=f"Repository unreachable: {context.fetch_problem}"))
        return checks.add_result(
            CheckResult("error", detail=f"The commit this evidence was recorded at is unusable: {error}")
        )
    text = evidence.text
    if evidence.kind == Evidence.Kind.SNIPPET and not text:
        # Bundles may leave the snippet's text out: read it where the reviewer pinned it.
        try:
            text = snippet_text_at(reader, recorded_at, evidence.path, evidence.start_line, evidence.end_line)
        except RecheckError as error:
            return checks.add_result(
                CheckResult("error", detail=f"Could not read the snippet at {evidence.commit_sha[:8]}: {error}")
            )
        context.texts_read.append((evidence.pk, text))
    spec = EvidenceSpec(
        kind=evidence.kind,
        commit=recorded_at,
        path=evidence.path,
        start_line=evidence.start_line,
        end_line=evidence.end_line,
        text=text,
        regex=evidence.regex,
        expect=evidence.expect or None,
        sha=evidence.sha or None,
    )
    if evidence.kind == Evidence.Kind.GITLINK:
        spec = replace(
            spec,
            base_commit=context.base_commit,
            submodule=context.submodules.source(
                reader=reader, superproject=context.pull_request.repository, target=target, path=evidence.path,
                repository_id=evidence.submodule_repository_id, branch=evidence.reference_branch,
            ),
        )
    return checks.add(spec)


def _store_snippet_texts(texts: list[tuple[int, str]]) -> None:
    """Keep the snippet texts read from the repository, so the pages show them and later runs need
    not read them again: one UPDATE ... FROM (VALUES ...) per batch, not one per item. Only where
    the text is still empty, so a text a person stored meanwhile is never overwritten."""
    if not texts:
        return
    quote = connection.ops.quote_name
    table = quote(Evidence._meta.db_table)
    per_statement = min(1000, (connection.features.max_query_params or 65535) // 2)
    with transaction.atomic(), connection.cursor() as cursor:
        for start in range(0, len(texts), per_statement):
            batch = texts[start : start + per_statement]
            # Both databases name the columns of a VALUES list column1, column2, ...
            cursor.execute(
                f"UPDATE {table} SET {quote('text')} = batch.column2 "
                f"FROM (VALUES {', '.join(['(%s, %s)'] * len(batch))}) AS batch "
                f"WHERE {table}.{quote('id')} = batch.column1 AND {table}.{quote('text')} = ''",
                [value for row in batch for value in row],
            )


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


@transaction.atomic
def _store(pull_request: PullRequest, commit: Commit, outcomes: list[Outcome]) -> list[Verification]:
    """Replace the verifications of these findings at `commit`, and their results, with upserts:
    a re-run or a duplicated task updates the rows in place, and a concurrent run waits on them.

    Plain INSERT ... ON CONFLICT statements: building ten thousand model instances and their SQL
    would cost more than checking the evidence did."""
    outcomes = _still_current(outcomes)
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    _upsert(
        Verification,
        ("finding_id", "commit_id", "verdict", "checked_at", "first_checked_at", "detail", "evidence_version"),
        conflict=("finding_id", "commit_id"),
        update=("verdict", "checked_at", "detail", "evidence_version"),
        rows=[(o.finding.pk, commit.pk, o.verdict, now, now, o.detail, o.finding.evidence_version) for o in outcomes],
    )
    verifications = {
        verification.finding_id: verification
        for verification in Verification.objects.filter(
            commit=commit, finding__in=[o.finding.pk for o in outcomes]
        ).select_related("commit")
    }
    _replace_results(
        [verification.pk for verification in verifications.values()],
        [
            (
                verifications[o.finding.pk].pk,
                evidence.pk,
                result.state,
                result.path or "",
                result.start_line,
                result.end_line,
                result.detail,
                json.dumps(result.facts) if result.facts else "{}",
            )
            for o in outcomes
            for evidence, result in o.results
        ],
    )
    _flag_regressions(commit, outcomes)
    # Raw SQL sends no signals: the new verdicts change what the pages and the gate answer.
    pull_request_changed(pull_request_id=pull_request.pk)
    return [verifications[o.finding.pk] for o in outcomes]


def _still_current(outcomes: list[Outcome]) -> list[Outcome]:
    """The outcomes whose finding still has the evidence they were checked against. The findings'
    rows are locked first: a re-import changes evidence only with its finding's row locked and its
    version bumped, so from here to the commit nothing checked can change or go away under us."""
    versions = dict(
        Finding.objects.select_for_update()
        .filter(pk__in=[o.finding.pk for o in outcomes])
        .order_by("pk")
        .values_list("pk", "evidence_version")
    )
    current = [o for o in outcomes if versions.get(o.finding.pk) == o.finding.evidence_version]
    if len(current) != len(outcomes):
        logger.info("%d findings' evidence changed while they were verified; not stored", len(outcomes) - len(current))
    return current


_RESULT_COLUMNS = ("verification_id", "evidence_id", "state", "path", "start_line", "end_line", "detail", "facts")


def _replace_results(verification_ids: list[int], rows: list[tuple]) -> None:
    """Store the results of these verifications. The verification rows are already locked by
    their upsert, so a concurrent run of the same commit waits here rather than interleaving."""
    if connection.vendor == "postgresql":
        # COPY is five times faster than multi-row INSERTs for ten thousand rows.
        EvidenceResult.objects.filter(verification_id__in=verification_ids).delete()
        with connection.cursor() as cursor:
            table = connection.ops.quote_name(EvidenceResult._meta.db_table)
            columns = ", ".join(map(connection.ops.quote_name, _RESULT_COLUMNS))
            with cursor.cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
        return
    # Results of evidence since removed went with it (on delete cascade): the upsert covers the rest.
    _upsert(
        EvidenceResult,
        _RESULT_COLUMNS,
        conflict=("verification_id", "evidence_id"),
        update=("state", "path", "start_line", "end_line", "detail", "facts"),
        rows=rows,
    )


def _upsert(model, columns: tuple[str, ...], *, conflict: tuple[str, ...], update: tuple[str, ...], rows) -> None:
    """INSERT ... ON CONFLICT DO UPDATE (PostgreSQL and SQLite both speak it), many rows per
    statement: one round trip per row would cost PostgreSQL more than the checks themselves."""
    if not rows:
        return
    quote = connection.ops.quote_name
    row_sql = f"({', '.join(['%s'] * len(columns))})"
    head = f"INSERT INTO {quote(model._meta.db_table)} ({', '.join(map(quote, columns))}) VALUES "
    tail = (
        f" ON CONFLICT ({', '.join(map(quote, conflict))}) DO UPDATE SET "
        + ", ".join(f"{quote(name)} = excluded.{quote(name)}" for name in update)
    )
    per_statement = min(1000, (connection.features.max_query_params or 65535) // len(columns))
    with connection.cursor() as cursor:
        for start in range(0, len(rows), per_statement):
            batch = rows[start : start + per_statement]
            cursor.execute(head + ", ".join([row_sql] * len(batch)) + tail, [value for row in batch for value in row])


def _flag_regressions(commit: Commit, outcomes: list[Outcome]) -> None:
    """A finding a person marked fixed whose evidence holds again at a commit pinned after that
    decision is flagged for a person to look at; it is never reopened by a machine."""
    fixed = [
        o.finding
        for o in outcomes
        if o.verdict in ("present", "partly_fixed") and o.finding.status == Finding.Status.FIXED
        and o.finding.resolved_at
    ]
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


PROGRESS_INTERVAL_SECONDS = 0.25


def verification_run_execute(*, run: VerificationRun, progress: Progress | None = None, fetch: bool = True) -> dict:
    """Carry out a claimed run (see `verification_run_claim`): at its commit (pinned as `rebased`
    unless already pinned), or at every pinned commit. Progress goes to the run row and to
    `progress`."""
    pull_request = run.pull_request
    if run.commit is not None:
        pull_request_pin_commit(pull_request=pull_request, commit=run.commit, role=PinnedCommit.Role.REBASED)
        commits = [run.commit]
    else:
        commits = [pin.commit for pin in pull_request.pins.select_related("commit").in_order()]
    per_commit = Finding.objects.for_pull_request(pull_request).count()
    total = per_commit * len(commits)
    verification_run_start(run, total=total)
    fetch_problem = _fetch(pull_request) if fetch else ""
    submodules = SubmoduleMirrors(fetch=fetch)
    verdicts: dict[str, dict[str, int]] = {}
    done_before = 0
    reported = 0
    written_at = time.monotonic()
    # At most about a hundred progress writes per run, whatever its size, and a few a second: each
    # is a commit of its own, and a fast run would spend more on telling its progress than on
    # making it.
    step = max(1, total // 100)

    def advance(done: int, _total: int) -> None:
        nonlocal reported, written_at
        overall = done_before + done
        now = time.monotonic()
        if (overall - reported >= step and now - written_at >= PROGRESS_INTERVAL_SECONDS) or done == per_commit:
            verification_run_advance(run, by=overall - reported)
            reported, written_at = overall, now
            if progress:
                progress(overall, total)

    changed = 0
    for commit in commits:
        verifications = pull_request_verify(
            pull_request=pull_request, commit=commit, fetch=False, progress=advance, submodules=submodules,
            fetch_problem=fetch_problem,
        )
        done_before += per_commit
        changed = max(changed, per_commit - len(verifications))
        counts: dict[str, int] = {}
        for verification in verifications:
            counts[verification.verdict] = counts.get(verification.verdict, 0) + 1
        verdicts[commit.sha] = counts

    errors = sum(counts.get("error", 0) for counts in verdicts.values())
    message = _summary(verdicts, fetch_problem)
    if changed:
        message += (
            f"; the evidence of {changed} finding(s) changed during the run, so their results were not kept: "
            "evidence changed since the last check; re-verify"
        )
    verification_run_finish(run, message=message, failed=bool(errors) and errors == total)
    _after_verification(pull_request)
    return {"pull_request": pull_request.reference, "verdicts": verdicts, "message": message}


def _summary(verdicts: dict[str, dict[str, int]], fetch_problem: str) -> str:
    parts = []
    # The cause first: a run whose fetch failed reads as that, not as a row of errors.
    if fetch_problem:
        parts.append(f"fetch failed: {fetch_problem}")
    for sha, counts in verdicts.items():
        described = ", ".join(f"{count} {verdict.replace('_', ' ')}" for verdict, count in sorted(counts.items()))
        parts.append(f"{sha[:8]}: {described or 'no findings'}")
    return "; ".join(parts)


def _after_verification(pull_request: PullRequest) -> None:
    """Say that new verdicts are stored (presentation re-renders the stored companion pages once
    they are committed)."""
    verification_stored.send(sender=PullRequest, pull_request=pull_request)


@dataclass(frozen=True)
class EvidenceCheck:
    """What checking one evidence item at one commit found, before it is saved: the state and the
    verdict the verifier would store, with its detail; the snippet text read at the recorded
    commit; a pattern's matches (Try it); a submodule's pin in the tree. `ran` is False when the
    check could not run at all (no mirror, an unknown commit): `detail` says why."""

    state: str
    verdict: str
    detail: str
    ran: bool = True
    target: str = ""
    recorded_at: str = ""
    location: str = ""
    text: str = ""
    matches: list = field(default_factory=list)
    more_matches: bool = False
    pin: str = ""


def evidence_check(*, pull_request: PullRequest, item: dict, at: str) -> EvidenceCheck:
    """Check one evidence item (validated, in the bundle's shape) at the commit `at` names, with
    the engine and the mirror exactly as a verification run does (`_check`), without storing
    anything. The item is taken as recorded at its own `commit`, else at `at`. The mirror is read
    as it is: a check while typing does not wait for a fetch."""
    try:
        with repository_reader(pull_request.repository) as reader:
            target = reader.resolve(at)
            recorded_at = reader.resolve(item["commit"]) if item.get("commit") else target
            return _evidence_check(reader, pull_request, item, target, recorded_at)
    except RecheckError as error:
        return EvidenceCheck(state="error", verdict="error", detail=_sentence(str(error)), ran=False)


def _evidence_check(reader: GitReader, pull_request, item: dict, target: str, recorded_at: str) -> EvidenceCheck:
    from engine.verification.patterns import pattern_matches

    row = EvidenceRow(
        pk=0, finding_id=0, kind=item["kind"], commit_sha=recorded_at, path=item.get("path", ""),
        start_line=item.get("start_line"), end_line=item.get("end_line"), text=item.get("text", ""),
        regex=item.get("regex", ""), expect=item.get("expect", ""), sha=item.get("sha", ""),
        submodule_repository_id=None, reference_branch=item.get("branch", ""),
    )
    # A live check reads submodules' mirrors as they are, like the repository's own.
    checks = EvidenceChecks(reader, target)
    context = _Context(reader, target, pull_request, SubmoduleMirrors(fetch=False), checks)
    number = _check(context, row)
    result = checks.results()[number]
    extra: dict = {}
    if context.texts_read:
        extra["text"] = context.texts_read[0][1]
    if item["kind"] == Evidence.Kind.PATTERN and result.state != "error":
        extra["matches"], extra["more_matches"] = pattern_matches(
            reader, EvidenceSpec(kind="pattern", commit=recorded_at, path=row.path, regex=row.regex), target
        )
    if item["kind"] == Evidence.Kind.GITLINK:
        entry = reader.tree_entry(target, row.path) if row.path else None
        extra["pin"] = entry.sha if entry is not None and entry.type == "commit" else ""
    return EvidenceCheck(
        state=result.state, verdict=verdict_for([result]), detail=_sentence(result.detail), target=target,
        recorded_at=recorded_at, location=_location(result), **extra,
    )


def _location(result: CheckResult) -> str:
    from core.vocabulary import location

    return location(result.path or "", result.start_line, result.end_line) if result.path else ""


def _sentence(message: str) -> str:
    message = message.strip()
    if not message:
        return ""
    message = message[:1].upper() + message[1:]
    return message if message.endswith(".") else message + "."
