"""The forge listens to the domain: a verification run that changed is reported to GitHub, and to
the review threads its findings came from; a finding's status change reaches its threads."""
from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from findings.signals import (
    check_reports_awaited, follow_up_changed, gate_override_changed, verification_run_changed,
)


@receiver(verification_run_changed, dispatch_uid="forge.report_run")
def _report_run(sender, run, **kwargs) -> None:
    # Imported here: the reports' text pulls in the page objects and pictures, which a process that
    # never reports (a command) should not load at start-up.
    from forge.outbox.services import verification_run_report

    # In the sender's transaction: the report's rows commit with the run's new state.
    verification_run_report(run=run)


@receiver(verification_run_changed, dispatch_uid="forge.report_run_to_threads")
def _report_run_to_threads(sender, run, **kwargs) -> None:
    from forge.threads.verdicts import thread_verdicts_report

    thread_verdicts_report(run=run)


def _status_changed(sender, instance, created, **kwargs) -> None:
    # Only a status change (marked fixed, dismissed, reopened): the event every resolution writes.
    if created and instance.kind == instance.Kind.STATUS:
        from forge.threads.verdicts import finding_threads_follow

        finding_threads_follow(finding=instance.finding, status=instance.to_status)


post_save.connect(_status_changed, sender="findings.FindingEvent", dispatch_uid="forge.finding_status_to_threads")


@receiver(follow_up_changed, dispatch_uid="forge.follow_up_issue")
def _follow_up_issue(sender, follow_up, change, **kwargs) -> None:
    from forge.follow_up_issues.services import follow_up_issue_request

    # In the sender's transaction: the issue's call commits with the follow-up's change.
    follow_up_issue_request(follow_up=follow_up, change=change)


def _thread_row_changed(sender, instance, **kwargs) -> None:
    # A PR's review threads, their comments and how their last reading went show on its inbox
    # page, kept by the PR's generation (`web.pagecache`); the deliveries, the sync and the
    # triage write them. Bulk writes move it in their querysets (`forge.threads.models`).
    from reviews.services import pull_request_changed

    if sender.__name__ == "ReviewComment" and type(instance).thread.is_cached(instance):
        pull_request_id = instance.thread.pull_request_id
    elif sender.__name__ == "ReviewComment":
        from forge.threads.models import ReviewThread

        # A comment deleted with its thread finds none: the thread's own delete moves the PR.
        pull_request_id = ReviewThread.objects.filter(pk=instance.thread_id).values_list(
            "pull_request_id", flat=True).first()
    else:
        pull_request_id = instance.pull_request_id
    if pull_request_id is not None:
        pull_request_changed(pull_request_id=pull_request_id)


for _model in ("reporting.ReviewThread", "reporting.ReviewComment", "reporting.ThreadSync"):
    post_save.connect(_thread_row_changed, sender=_model, dispatch_uid=f"forge.thread_rows.{_model}.save")
    post_delete.connect(_thread_row_changed, sender=_model, dispatch_uid=f"forge.thread_rows.{_model}.delete")
@receiver(check_reports_awaited, dispatch_uid="forge.read_awaited_checks")
def _read_awaited_checks(sender, repository, sha, checks, **kwargs) -> None:
    from forge.check_reads import commit_checks_read_request

    commit_checks_read_request(repository=repository, sha=sha)


@receiver(gate_override_changed, dispatch_uid="forge.report_override")
def _report_override(sender, override, change, **kwargs) -> None:
    from forge.outbox.services import gate_override_report

    # The check's conclusion and summary follow the gate: it was overridden, or is no longer.
    gate_override_report(pull_request_id=override.pull_request_id, commit_id=override.commit_id)
