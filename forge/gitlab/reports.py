"""GitLab CI's jobs, recorded as CI reports of their commit: each finished job of a `Pipeline Hook`
and the job of a `Job Hook`, by the job's name, through `check_report_record`, the one service
every source of a report calls, so a check item verified at that commit is derived again the
moment it arrives.

A job still to run (created, pending, running, manual, waiting) has no conclusion yet and is
not recorded. GitLab's jobs carry no app: a check item that names one does not read them."""
from __future__ import annotations

from django.utils.dateparse import parse_datetime

import logging

from django.db import transaction

from core import vocabulary
from core.errors import RecheckError, ReportError
from engine.reports import JUnitCase
from findings.enqueue import enqueue
from findings.services.reports import check_report_record
from forge.gitlab.client import pipeline_test_report
from forge.interface import WebhookPayloadError
from reviews.models import Repository

logger = logging.getLogger(__name__)

TEST_REPORT_TASK = "forge.tasks.read_pipeline_test_report"
# A pipeline that ended this way has its test report complete.
PIPELINE_COMPLETED = frozenset({"success", "failed"})
# A test case's status in GitLab's test report, as a test's outcome (an error is a failure, as in JUnit).
CASE_OUTCOMES = {
    "success": vocabulary.TEST_PASSED,
    "failed": vocabulary.TEST_FAILED,
    "error": vocabulary.TEST_FAILED,
    "skipped": vocabulary.TEST_SKIPPED,
}

# A finished job's status, as a check's conclusion.
JOB_CONCLUSIONS = {
    "success": vocabulary.CONCLUSION_SUCCESS,
    "failed": vocabulary.CONCLUSION_FAILURE,
    "canceled": vocabulary.CONCLUSION_CANCELLED,
    "skipped": vocabulary.CONCLUSION_SKIPPED,
}


def pipeline_jobs_record(repository: Repository, payload: dict) -> str:
    """`Pipeline Hook`: each finished job in `builds` recorded as the report of its name at the
    pipeline's SHA."""
    attributes = payload.get("object_attributes")
    if not isinstance(attributes, dict) or not attributes.get("sha"):
        raise WebhookPayloadError("A Pipeline Hook payload needs object_attributes.sha.")
    sha = str(attributes["sha"])
    builds = payload.get("builds")
    if not isinstance(builds, list):
        raise WebhookPayloadError("A Pipeline Hook payload needs builds, the pipeline's jobs.")
    recorded, waiting = [], 0
    for build in builds:
        if not isinstance(build, dict) or "name" not in build or "status" not in build:
            raise WebhookPayloadError("Each of a Pipeline Hook's builds needs its name and status.")
        conclusion = JOB_CONCLUSIONS.get(str(build["status"]))
        if conclusion is None:
            waiting += 1
            continue
        _record(repository, payload, sha=sha, job=str(build["name"]), conclusion=conclusion,
                job_id=build.get("id"), attempt=1, finished_at=build.get("finished_at"))
        recorded.append(f"{build['name']} ({vocabulary.conclusion_label(conclusion).lower()})")
    said = f"Pipeline {attributes.get('id')} at {sha[:8]} of {repository.slug}: "
    said += f"recorded {', '.join(recorded)}" if recorded else "no job has finished"
    said += f"; {waiting} still to run." if waiting else "."
    if str(attributes.get("status")) in PIPELINE_COMPLETED and isinstance(attributes.get("id"), int):
        pipeline_id = attributes["id"]
        # GitLab's request is answered first; its test report is read after the commit.
        transaction.on_commit(lambda: _read_test_report_later(repository.pk, pipeline_id, sha))
        said += " Its test report is read."
    return said


def _read_test_report_later(repository_id: int, pipeline_id: int, sha: str) -> None:
    try:
        enqueue(TEST_REPORT_TASK, repository_id, pipeline_id, sha)
    except Exception:
        # The jobs' conclusions are kept; only the named tests' outcomes wait for a resend.
        logger.exception("The test report of pipeline %s could not be read", pipeline_id)


def pipeline_test_report_record(*, repository: Repository, pipeline_id: int, sha: str) -> list[str]:
    """Read a completed pipeline's test report at GitLab and record each test suite (named for its
    job) as the report of that check with its test cases' outcomes. Raises
    forge.outbox.failures.Failure when GitLab does not answer with one."""
    report = pipeline_test_report(repository, pipeline_id)
    recorded = []
    for suite in report.test_suites:
        if not suite.test_cases:
            continue
        cases = [JUnitCase(classname=case.classname or "", name=case.name, file=case.file or "",
                           outcome=CASE_OUTCOMES.get(case.status, vocabulary.TEST_FAILED))
                 for case in suite.test_cases]
        check_report_record(repository=repository, sha=sha, check=suite.name, source=vocabulary.REPORT_GITLAB,
                            cases=cases, url=_pipeline_url(repository, pipeline_id))
        recorded.append(suite.name)
    return recorded


def _pipeline_url(repository: Repository, pipeline_id: int) -> str:
    web_url = repository.web_url or ""
    return f"{web_url.rstrip('/')}/-/pipelines/{int(pipeline_id)}/test_report" if web_url.startswith("http") else ""


def job_record(repository: Repository, payload: dict) -> str:
    """`Job Hook`: a finished job recorded as the report of its name at its SHA; a retried job
    (`retries_count`) is another attempt."""
    try:
        name, status, sha = str(payload["build_name"]), str(payload["build_status"]), str(payload["sha"])
    except KeyError:
        raise WebhookPayloadError("A Job Hook payload needs build_name, build_status and sha.") from None
    conclusion = JOB_CONCLUSIONS.get(status)
    if conclusion is None:
        return f"Ignored: the job {name!r} at {sha[:8]} is {status}, not finished."
    retries = payload.get("retries_count") or 0
    if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
        raise WebhookPayloadError("A Job Hook's retries_count is a whole number, 0 or more.")
    created = _record(repository, payload, sha=sha, job=name, conclusion=conclusion, job_id=payload.get("build_id"),
                      attempt=retries + 1, finished_at=payload.get("build_finished_at_iso"))
    said = f"{name} ({vocabulary.conclusion_label(conclusion).lower()}) at {sha[:8]} of {repository.slug}"
    return f"Recorded {said}." if created else f"Already recorded: {said}."


def _record(repository: Repository, payload: dict, *, sha: str, job: str, conclusion: str, job_id, attempt: int,
            finished_at) -> bool:
    web_url = str((payload.get("project") or {}).get("web_url") or "")
    url = f"{web_url}/-/jobs/{int(job_id)}" if web_url.startswith(("https://", "http://")) and job_id else ""
    try:
        finished = parse_datetime(str(finished_at).replace(" UTC", "+00:00")) if finished_at else None
        recorded = check_report_record(
            repository=repository, sha=sha, check=job, source=vocabulary.REPORT_GITLAB, conclusion=conclusion,
            url=url, attempt=attempt, completed_at=finished,
        )
    except (ReportError, RecheckError, ValueError) as error:
        raise WebhookPayloadError(f"The report of the job {job!r} at {sha[:8]} was not kept: {error}") from None
    return recorded.created
