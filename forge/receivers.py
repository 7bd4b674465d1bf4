"""The forge listens to the domain: a verification run that changed is reported to GitHub."""
from django.dispatch import receiver

from findings.signals import follow_up_changed, verification_run_changed


@receiver(verification_run_changed, dispatch_uid="forge.report_run")
def _report_run(sender, run, **kwargs) -> None:
    # Imported here: the reports' text pulls in the page objects and pictures, which a process that
    # never reports (a command) should not load at start-up.
    from forge.services import verification_run_report

    # In the sender's transaction: the report's rows commit with the run's new state.
    verification_run_report(run=run)


@receiver(follow_up_changed, dispatch_uid="forge.follow_up_issue")
def _follow_up_issue(sender, follow_up, change, **kwargs) -> None:
    from forge.issues import follow_up_issue_request

    # In the sender's transaction: the issue's call commits with the follow-up's change.
    follow_up_issue_request(follow_up=follow_up, change=change)
