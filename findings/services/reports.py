"""A CI report of a commit arrives: the one service every source calls (the upload API, the
command, the gate client through the API, and the forges' check runs, statuses, pipelines and
test reports), which checks the actor, reads the report with the plain readers
(`engine.reports`), keeps it once however often it is sent, and audits it."""
from __future__ import annotations

import datetime as dt
import hashlib
import io
import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import BinaryIO

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from access.audit import audit_record, audit_refusal, writes
from access.permissions import Action, actor_check
from core import vocabulary
from core.errors import RecheckError, ReportError
from engine.reports import MAX_REPORT_BYTES, JUnitCase, Tally
from engine.reports.junit import junit_rows
from engine.reports.sarif import placer, sarif_results
from engine.reports.testids import bare_name, case_key
from engine.verification.checks import MAX_APP, check_name_checked, name_problem
from findings.enqueue import enqueue
from findings.models import CheckReport, Evidence, ReportedResult, ReportedTest
from findings.services.runs import enqueue_errors
from findings.services.verification.run import pull_request_verify
from reviews.mirrors import commit_resolve, repository_reader
from reviews.models import PullRequest, Repository
from reviews.services import commit_get_or_create, commit_sha_checked

logger = logging.getLogger(__name__)

REDERIVE_TASK = "findings.tasks.rederive_report"
# Why re-deriving checks no person: the report it follows was checked and audited when recorded.
REDERIVATION = "a worker verifying again, at a report's commit, what check_report_record checked and recorded"

# Rows written to the database at a time while a report's test cases stream in.
BATCH = 2000
_READ_CHUNK = 1 << 20
# SARIF levels that make a scanner's check fail when no conclusion is given ("note" and "none" do not).
_FAILING_LEVELS = ("error", "warning")


@dataclass
class ReportRecorded:
    """What became of a report: the row kept, and whether this call made it (False when the same
    report had been sent before)."""

    report: CheckReport
    created: bool


@writes("report.record")
def check_report_record(
    *,
    repository: Repository,
    sha: str,
    check: str,
    source: str,
    actor=None,
    conclusion: str = "",
    file: BinaryIO | bytes | None = None,
    cases: Iterable[JUnitCase] | None = None,
    url: str = "",
    attempt: int = 1,
    completed_at: dt.datetime | None = None,
    app: str = "",
    checkout_root: str = "",
) -> ReportRecorded:
    """Record the report of ``check`` at the commit ``sha`` names in ``repository``.

    What it carries is one of: a ``file`` (JUnit XML or a SARIF 2.1.0 log, told apart by its first
    character, at most `MAX_REPORT_BYTES`), test ``cases`` a forge has already parsed, or
    nothing but the ``conclusion``. Without a conclusion a JUnit report fails when a test failed
    and a SARIF log when it has an error or a warning. ``checkout_root`` is the CI's checkout
    directory, taken off the SARIF paths written absolute to it (else each is placed by the
    longest ending of it that names a file at the commit).

    The same report sent again (the same commit, check, app, attempt and content) is the one
    already kept: ``created`` is False and nothing is written. Raises ActionRefused when the actor
    may not send reports to the repository, ReportError naming the part at fault for anything
    else, with nothing kept. None is the operator or a forge's signed delivery."""
    target = f"{repository.slug}@{sha} {check}"
    actor_check(actor, Action.REPORT, repository, audit_action="report.record", target=target)
    try:
        return _record(
            repository=repository, sha=sha, check=check, source=source, actor=actor, conclusion=conclusion,
            file=file, cases=cases, url=url, attempt=attempt, completed_at=completed_at, app=app,
            checkout_root=checkout_root,
        )
    except ReportError as error:
        audit_refusal(action="report.record", actor=actor, target=target, repository=repository, message=str(error))
        raise


def _record(*, repository, sha, check, source, actor, conclusion, file, cases, url, attempt, completed_at, app,
            checkout_root) -> ReportRecorded:
    _check_fields(check=check, source=source, conclusion=conclusion, url=url, attempt=attempt, app=app,
                  has_content=file is not None or cases is not None)
    if isinstance(file, bytes):
        file = io.BytesIO(file)
    size, digest, kind = _measure(file, conclusion)
    full_sha = _commit_sha(repository, sha)
    commit = commit_get_or_create(repository=repository, sha=full_sha)
    once = {"commit": commit, "check_name": check, "app": app, "attempt": attempt}
    if cases is not None:
        # A forge's parsed cases have no bytes of their own: they are kept once per attempt.
        digest = hashlib.sha256(f"cases\n{conclusion}".encode()).hexdigest()
    existing = CheckReport.objects.filter(**once, digest=digest).first()
    if existing is not None:
        return ReportRecorded(existing, created=False)
    try:
        with transaction.atomic():
            report = CheckReport.objects.create(
                **once, repository=repository, digest=digest, size=size, source=source,
                conclusion=conclusion or vocabulary.CONCLUSION_SUCCESS, format=kind if kind else "",
                url=url, completed_at=completed_at, received_by=actor if getattr(actor, "pk", None) else None,
            )
            tally = Tally()
            if kind == vocabulary.REPORT_JUNIT:
                _store_cases(report, junit_rows(file, tally))
            elif kind == vocabulary.REPORT_SARIF:
                _store_results(report, file, tally, repository=repository, sha=full_sha, checkout_root=checkout_root)
            elif cases is not None:
                report.format = vocabulary.REPORT_JUNIT
                _store_cases(report, _counted(cases, tally))
            report.conclusion = conclusion or _derived_conclusion(tally)
            report.tests, report.tests_failed, report.tests_skipped = tally.tests, tally.failed, tally.skipped
            report.results, report.tool = tally.results, tally.tool[:255]
            report.save(update_fields=["conclusion", "format", "tests", "tests_failed", "tests_skipped", "results",
                                       "tool"])
            audit_record(
                action="report.record", actor=actor, target=f"{repository.slug}@{full_sha[:12]} {check}",
                repository=repository, message=_summary(report),
            )
    except IntegrityError:
        # The same report sent twice at once: the other request kept it.
        existing = CheckReport.objects.filter(**once, digest=digest).first()
        if existing is None:
            raise
        return ReportRecorded(existing, created=False)
    _rederive_after_commit(report)
    return ReportRecorded(report, created=True)


def _rederive_after_commit(report: CheckReport) -> None:
    """Hand the report's re-derivation to a worker once the report is committed, so an upload or a
    forge's delivery is answered at once (decision 0001). With no broker configured the task runs
    in-process as the transaction commits, so the state is current when the request returns."""

    def send():
        try:
            enqueue(REDERIVE_TASK, report.pk)
        except enqueue_errors() as error:
            # The report is kept: the next verification at its commit reads it. The broker's own
            # message names hosts and ports, for staff's log only.
            logger.error("Report %s kept, its re-derivation not queued: %s", report.pk, error)
        except Exception:
            # Run in-process, the re-derivation failed; the report is kept and answered for.
            logger.exception("Report %s kept, its re-derivation failed", report.pk)

    transaction.on_commit(send)


@writes("verification.run", system=REDERIVATION)
def check_report_rederive(*, report_id: int) -> list[str]:
    """Verify again, without a fetch, the pull requests already verified at the report's commit
    with evidence of its check (their mirror has the commit: they were verified at it), so their
    stored state says what the report says: a report before the verification and one after it give
    the same state. Returns the pull requests verified again.

    The report is claimed with a conditional update (decision 0003): a duplicated or redelivered
    message finds it claimed and does nothing twice. The claim is marked done at the end; a worker
    that dies after claiming leaves it undone, and the reaper (`check_reports_reap`) hands it to
    another once no task could still be running it."""
    claimed_at = timezone.now()
    claimed = CheckReport.objects.filter(pk=report_id, rederived_at__isnull=True).update(rederived_at=claimed_at)
    if not claimed:
        return []
    report = CheckReport.objects.select_related("commit").get(pk=report_id)
    pull_requests = PullRequest.objects.filter(
        findings__evidence__kind=Evidence.Kind.CHECK, findings__evidence__check_name=report.check_name,
        findings__verifications__commit=report.commit,
    ).distinct().select_related("repository").order_by("pk")
    verified = []
    for pull_request in pull_requests:
        pull_request_verify(pull_request=pull_request, commit=report.commit, fetch=False)
        verified.append(str(pull_request))
    # Done under this claim only: a reaped claim taken by another worker is that worker's to finish.
    CheckReport.objects.filter(pk=report_id, rederived_at=claimed_at).update(rederive_done_at=timezone.now())
    return verified


@writes("verification.run", system=REDERIVATION)
def check_reports_reap(*, now=None) -> list[int]:
    """Hand on the re-derivations no worker will finish: claimed and not done for longer than a
    task may run (RECHECK_RUN_STALE_SECONDS, the verification runs' own measure: its worker was
    killed). Each claim is released with a conditional update that matches only while it is still
    that claim and still undone, and queued again once that commits; the task claims it afresh, so
    a reaper running twice, or beside a live worker, queues nothing twice. Returns the reports
    queued again. (One whose message never reached a worker is read by the next verification at
    its commit, as before.)"""
    now = now or timezone.now()
    cutoff = now - dt.timedelta(seconds=settings.RECHECK_RUN_STALE_SECONDS)
    stale = CheckReport.objects.filter(rederive_done_at__isnull=True, rederived_at__lt=cutoff)
    reaped = []
    for report_id, claimed_at in stale.order_by("pk").values_list("pk", "rederived_at"):
        with transaction.atomic():
            released = CheckReport.objects.filter(
                pk=report_id, rederive_done_at__isnull=True, rederived_at=claimed_at
            ).update(rederived_at=None)
            if released != 1:
                continue
            _rederive_after_commit(CheckReport(pk=report_id))
        logger.warning("Report %s: its re-derivation was claimed by a worker that stopped; queued again", report_id)
        reaped.append(report_id)
    return reaped


def _check_fields(*, check, source, conclusion, url, attempt, app, has_content) -> None:
    try:
        check_name_checked(check)
    except RecheckError as error:
        raise ReportError("check", str(error)) from None
    if source not in vocabulary.REPORT_SOURCES:
        raise ReportError("source", f"Unknown source {source!r}: use one of {', '.join(vocabulary.REPORT_SOURCES)}.")
    if conclusion and conclusion not in vocabulary.CONCLUSIONS:
        raise ReportError(
            "conclusion", f"Unknown conclusion {conclusion!r}: use one of {', '.join(vocabulary.CONCLUSIONS)}."
        )
    if not conclusion and not has_content:
        raise ReportError("conclusion", "Give the check's conclusion, or a JUnit or SARIF report to read it from.")
    if url and (len(url) > 500 or not url.startswith(("https://", "http://"))):
        raise ReportError("url", "The run's URL is an http(s) address of at most 500 characters.")
    if isinstance(attempt, bool) or not isinstance(attempt, int) or not 1 <= attempt <= 2_147_483_647:
        raise ReportError("attempt", "The attempt is a whole number, 1 or more.")
    if app:
        problem = name_problem(app, what="app", limit=MAX_APP)
        if problem:
            raise ReportError("app", problem)


def _measure(file: BinaryIO | None, conclusion: str) -> tuple[int, str, str]:
    """The report's size, digest and format (junit, sarif), read once before it is parsed."""
    digest = hashlib.sha256(f"{conclusion}\n".encode())
    if file is None:
        return 0, digest.hexdigest(), ""
    size, first = 0, b""
    while chunk := file.read(_READ_CHUNK):
        size += len(chunk)
        if size > MAX_REPORT_BYTES:
            raise ReportError(
                "file", f"The report is over {MAX_REPORT_BYTES:,} bytes ({MAX_REPORT_BYTES // (1024 * 1024)} MB), "
                f"the most Recheck reads; {size:,} bytes were read before stopping. Split it, or send what failed.",
                status=413,
            )
        if not first:
            first = chunk.lstrip()[:1]
        digest.update(chunk)
    file.seek(0)
    if first == b"<":
        return size, digest.hexdigest(), vocabulary.REPORT_JUNIT
    if first == b"{":
        return size, digest.hexdigest(), vocabulary.REPORT_SARIF
    if size == 0:
        raise ReportError("file", "The report is empty.")
    raise ReportError("file", "Neither JUnit XML nor a SARIF log: a report starts with < (XML) or { (JSON).")


def _commit_sha(repository: Repository, sha: str) -> str:
    """The full SHA of a commit of the repository, fetching once when the mirror does not know it."""
    try:
        sha = commit_sha_checked(sha)
        try:
            return commit_resolve(repository=repository, sha=sha, fetch=False)
        except RecheckError:
            return commit_resolve(repository=repository, sha=sha, fetch=True)
    except RecheckError as error:
        raise ReportError("commit", f"No report is kept for {sha}: {error}", status=404) from None


def _store_cases(report: CheckReport, rows: Iterable[tuple[str, str, str, str]]) -> None:
    """Write the test cases, (classname, name, file, outcome) rows, as they stream in. Not through
    model instances and bulk_create: a report of a hundred thousand cases spent most of its time
    making instances that are never used (8x a bare parse of the file on SQLite, see
    bench/reports_bench.py). PostgreSQL takes them through COPY, as text written a batch of lines
    at a time (one `write_row` a row adapted each value on its own: a third of the record);
    SQLite, in-process, through executemany a batch at a time."""
    columns = ("report_id", "classname", "name", "file", "key", "bare_name", "outcome")
    quote = connection.ops.quote_name
    table = f"{quote(ReportedTest._meta.db_table)} ({', '.join(quote(column) for column in columns)})"
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            with cursor.cursor.copy(f"COPY {table} FROM STDIN") as copy:
                for lines in _copy_lines(report.pk, rows):
                    copy.write(lines)
            return
        sql = f"INSERT INTO {table} VALUES ({', '.join(['%s'] * len(columns))})"
        batch: list[tuple] = []
        for classname, name, file, outcome in rows:
            batch.append((report.pk, classname, name, file, case_key(classname, name), bare_name(name)[:1000],
                          outcome))
            if len(batch) >= BATCH:
                cursor.executemany(sql, batch)
                batch.clear()
        if batch:
            cursor.executemany(sql, batch)


# What COPY's text format escapes in a value (a backslash, and the characters that end a column or
# a row); nothing else needs it, and most reports have none of these in any name.
_COPY_SPECIAL = re.compile(r"[\\\t\n\r]")
_COPY_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})


def _copy_lines(report_id: int, rows: Iterable[tuple[str, str, str, str]]) -> Iterable[str]:
    """The rows as COPY's text format, `BATCH` lines to a string. A report's id is written once."""
    prefix = f"{report_id}\t"
    special = _COPY_SPECIAL.search
    lines: list[str] = []
    for classname, name, file, outcome in rows:
        key, bare = case_key(classname, name), bare_name(name)[:1000]
        if special(classname) or special(name) or special(file):
            classname, name, file, key, bare = (value.translate(_COPY_ESCAPES)
                                                for value in (classname, name, file, key, bare))
        lines.append(f"{prefix}{classname}\t{name}\t{file}\t{key}\t{bare}\t{outcome}\n")
        if len(lines) >= BATCH:
            yield "".join(lines)
            lines.clear()
    if lines:
        yield "".join(lines)


def _counted(cases: Iterable[JUnitCase], tally: Tally) -> Iterable[tuple[str, str, str, str]]:
    for case in cases:
        tally.tests += 1
        tally.failed += case.outcome == vocabulary.TEST_FAILED
        tally.skipped += case.outcome == vocabulary.TEST_SKIPPED
        yield case.classname, case.name, case.file, case.outcome


def _store_results(report, file: BinaryIO, tally: Tally, *, repository, sha: str, checkout_root: str) -> None:
    with repository_reader(repository) as reader:
        place = placer(files=lambda: frozenset(reader.list_paths(sha)), checkout_root=checkout_root)
        results = sarif_results(file.read(), tally, place=place)
    ReportedResult.objects.bulk_create(
        [
            ReportedResult(report=report, rule=result.rule, path=result.path, start_line=result.start_line,
                           level=result.level, message=result.message, fingerprint=result.fingerprint)
            for result in results
        ],
        batch_size=BATCH,
    )
    tally.failed = sum(result.level in _FAILING_LEVELS for result in results)


def _derived_conclusion(tally: Tally) -> str:
    return vocabulary.CONCLUSION_FAILURE if tally.failed else vocabulary.CONCLUSION_SUCCESS


def _summary(report: CheckReport) -> str:
    said = f"{report.check_name}: {vocabulary.conclusion_label(report.conclusion).lower()}"
    if report.format == vocabulary.REPORT_JUNIT:
        return f"{said}, {report.tests} tests, {report.tests_failed} failed, {report.tests_skipped} skipped"
    if report.format == vocabulary.REPORT_SARIF:
        return f"{said}, {report.results} results from {report.tool or 'a scanner'}"
    return said
