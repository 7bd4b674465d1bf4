"""Asking for a verification from the site (Verify now on a pull request's or a finding's page, and
saving a finding in the editor) and saying what came of it in the vocabulary's words: with the
tasks run in-process the run has ended by the time the answer is written, so the message says so
rather than "queued" over results already on the page."""
from django.contrib import messages

from core import vocabulary as v
from core.errors import RecheckError
from findings.models import VerificationRun
from findings.services.runs import QueueUnavailable, verification_run_request


def verification_request_and_say(request, pull_request) -> VerificationRun | None:
    """Request a verification of `pull_request` at every pinned commit as the signed-in user, and
    leave a message saying where it stands. None when it was refused or could not be queued (the
    message says why)."""
    try:
        run = verification_run_request(pull_request=pull_request, requested_by=request.user)
    except QueueUnavailable as error:
        messages.error(request, str(error))
        return None
    except RecheckError as error:
        messages.error(request, f"Not verified: {error}")
        return None
    created = run.created
    run.refresh_from_db(fields=["status", "message", "done", "total"])
    subject = f"Verification of {pull_request.reference}"
    if not created and run.status in (v.RUN_QUEUED, v.RUN_RUNNING):
        messages.info(request, f"A verification of {pull_request.reference} is already "
                               f"{v.run_request_phrase(run.status)}.")
    elif run.status == v.RUN_FAILED:
        messages.error(request, f"{subject} {v.run_request_phrase(run.status)}: "
                                f"{run.message or 'no cause was recorded'}")
    else:
        messages.success(request, f"{subject} {v.run_request_phrase(run.status)}"
                                  f"{f' ({run.message})' if run.status == v.RUN_DONE and run.message else ''}.")
    return run
