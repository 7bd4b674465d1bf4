"""Presentation listens to the domain: new verdicts make the stored companion pages stale."""
from django.db import transaction
from django.dispatch import receiver

from findings.enqueue import enqueue, tasks_run_in_process
from findings.signals import verification_stored


@receiver(verification_stored, dispatch_uid="presentation.render_after_verification")
def _render_after_verification(sender, pull_request, **kwargs) -> None:
    """Have a worker re-render the stored companion pages once the new verdicts are committed.

    Without a worker (tasks run in-process) nothing is rendered now: whoever verified would wait
    for pages they do not look at. The stored pages are out of date by their generation, so the
    next download or `render_companion` renders them afresh."""
    if tasks_run_in_process():
        return
    transaction.on_commit(lambda: enqueue("presentation.tasks.render_companion_pages", pull_request.pk))
