"""The forge listens to the domain: a verification run that changed is reported to GitHub."""
from django.dispatch import receiver

from findings.signals import verification_run_changed


@receiver(verification_run_changed, dispatch_uid="forge.report_run")
def _report_run(sender, run, **kwargs) -> None:
    # Imported here: the reports' text pulls in the page objects and pictures, which a process that
    # never reports (a command) should not load at start-up.
    from forge.services import verification_run_report

    # In the sender's transaction: the report's rows commit with the run's new state.
    verification_run_report(run=run)
