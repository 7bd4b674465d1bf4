"""Importing a large review bundle in the background. The request keeps the parsed bundle as an
ImportJob and answers at once; a worker claims the job and imports it with the same
`review_import` the command and the synchronous API use, so the rules are the same."""
import logging

from django.db import transaction
from django.utils import timezone

from access.audit import audit_record, audit_refusal, writes
from findings.enqueue import enqueue
from findings.services.review_import import BundleInvalid, ImportRefused, review_import, review_import_check
from findings.models import ImportJob
from findings.services.runs import QUEUE_RETRY_AFTER_SECONDS, QueueUnavailable, enqueue_errors
from core.errors import BundleError

logger = logging.getLogger(__name__)


@writes("review.import")
def import_job_request(*, data: dict, requested_by=None) -> ImportJob:
    """Keep `data` (a parsed bundle) as a job and queue its import once the transaction commits,
    once `requested_by` may import it (ImportRefused, recorded, when not; the worker checks again).
    Raises QueueUnavailable (the job marked failed) when the broker cannot take it."""
    repository = data.get("repository") if isinstance(data, dict) else None
    target = str(repository.get("slug", "")) if isinstance(repository, dict) else ""
    try:
        review_import_check(data=data, actor=requested_by)
    except ImportRefused as error:
        audit_refusal(action="review.import", actor=requested_by, target=target, message=str(error))
        raise
    return _import_job_request(data, requested_by, target)


@transaction.atomic
def _import_job_request(data: dict, requested_by, target: str) -> ImportJob:
    findings = data.get("findings")
    job = ImportJob.objects.create(
        data=data, findings=len(findings) if isinstance(findings, list) else 0, requested_by=requested_by
    )

    def send():
        try:
            enqueue("findings.tasks.run_import", job.pk)
        except enqueue_errors() as error:
            logger.error("Import job %s could not be queued: %s", job.pk, error)
            ImportJob.objects.filter(pk=job.pk, status=ImportJob.Status.QUEUED).update(
                status=ImportJob.Status.FAILED, finished_at=timezone.now(),
                message="The import could not be queued: the task queue is not answering. Send the bundle again.",
            )
            raise QueueUnavailable(
                f"Import {job.pk} could not be queued: the task queue is not answering. Nothing was imported; "
                f"send the bundle again in {QUEUE_RETRY_AFTER_SECONDS} seconds."
            ) from None

    transaction.on_commit(send)
    audit_record(action="review.import", actor=requested_by, target=target, message=f"Import {job.pk} queued.")
    return job


@writes("review.import", system="a worker imports the bundle with review_import, as its requester")
def import_job_run(job_id: int) -> ImportJob | None:
    """Claim the job (queued -> running) and import it; None when another worker has it."""
    claimed = ImportJob.objects.filter(pk=job_id, status=ImportJob.Status.QUEUED).update(
        status=ImportJob.Status.RUNNING, started_at=timezone.now()
    )
    if claimed != 1:
        return None
    job = ImportJob.objects.select_related("requested_by").get(pk=job_id)
    try:
        report = review_import(data=job.data, actor=job.requested_by)
    except BundleError as error:
        pairs = error.errors if isinstance(error, BundleInvalid) else [(error.field, error.message)]
        ImportJob.objects.filter(pk=job_id).update(
            status=ImportJob.Status.FAILED, finished_at=timezone.now(), data={},
            errors=[{"field": field, "message": message} for field, message in pairs],
            message="Nothing was imported. Fix the bundle and send it again.",
        )
    else:
        ImportJob.objects.filter(pk=job_id).update(
            status=ImportJob.Status.DONE, finished_at=timezone.now(), data={}, report=report.as_dict(),
            message=f"Imported {report.pull_request}.",
        )
    return ImportJob.objects.get(pk=job_id)
