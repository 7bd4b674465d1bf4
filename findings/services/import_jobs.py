"""Importing a large review bundle in the background. The request keeps the parsed bundle as an
ImportJob and answers at once; a worker claims the job and imports it with the same
`review_import` the command and the synchronous API use, so the rules are the same."""
import logging

from django.db import transaction
from django.utils import timezone

from findings.enqueue import enqueue
from findings.services.review_import import BundleInvalid, review_import
from findings.models import ImportJob
from findings.services.runs import ENQUEUE_ERRORS, QUEUE_RETRY_AFTER_SECONDS, QueueUnavailable
from core.errors import BundleError

logger = logging.getLogger(__name__)


@transaction.atomic
def import_job_request(*, data: dict, requested_by=None) -> ImportJob:
    """Keep `data` (a parsed bundle) as a job and queue its import once the transaction commits.
    Raises QueueUnavailable (the job marked failed) when the broker cannot take it."""
    findings = data.get("findings")
    job = ImportJob.objects.create(
        data=data, findings=len(findings) if isinstance(findings, list) else 0, requested_by=requested_by
    )

    def send():
        try:
            enqueue("findings.tasks.run_import", job.pk)
        except ENQUEUE_ERRORS as error:
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
    return job


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
