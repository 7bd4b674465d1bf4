"""Which repository a queued task will read, so that it can be routed to the workers whose mirror
cache already holds that repository (recheck.routing). Each is one read by primary key."""
from findings.models import CheckReport, FollowUpSweep, VerificationRun
from reviews.models import PullRequest


def _run(run_id: int) -> int | None:
    return VerificationRun.objects.filter(pk=run_id).values_list("pull_request__repository_id", flat=True).first()


def _pull_request(pull_request_id: int) -> int | None:
    return PullRequest.objects.filter(pk=pull_request_id).values_list("repository_id", flat=True).first()


def _sweep(sweep_id: int) -> int | None:
    return FollowUpSweep.objects.filter(pk=sweep_id).values_list("repository_id", flat=True).first()


def _report(report_id: int) -> int | None:
    return CheckReport.objects.filter(pk=report_id).values_list("repository_id", flat=True).first()


def _repository(repository_id: int) -> int | None:
    return repository_id


# A task that reads a repository's mirror, and how its first argument names that repository.
REPOSITORY_OF_FIRST_ARGUMENT = {
    "findings.tasks.run_verification": _run,
    "findings.tasks.track_pull_request_head": _pull_request,
    "findings.tasks.check_follow_ups": _sweep,
    "findings.tasks.fetch_repository": _repository,
    "findings.tasks.rederive_report": _report,
    "presentation.tasks.render_companion_pages": _pull_request,
}


def task_repository_id(task_name: str, args) -> int | None:
    """The id of the repository the task `task_name` called with `args` reads, or None when it
    reads none (or its row is gone: the task will find that out itself)."""
    lookup = REPOSITORY_OF_FIRST_ARGUMENT.get(task_name)
    if lookup is None or not args:
        return None
    return lookup(args[0])
