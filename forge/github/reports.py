"""Other apps' checks on GitHub, recorded as CI reports of their commit: a `check_run` that
completed and a commit `status`, each through `check_report_record`, the one service every source
of a report calls, so a check item verified at that commit is derived again the moment it arrives.

A check run is named by its `name` and comes from its app's slug; a status is named by its
`context` and comes from whoever set it (the delivery's sender; a GitHub App's bot user is its
slug followed by "[bot]", which is taken off). A check item that names an app reads only that
app's reports (GitHub's required checks name an expected source the same way)."""
from django.utils.dateparse import parse_datetime

from core import vocabulary
from core.errors import ReportError
from findings.services.reports import check_report_record
from forge.content import CHECK_NAME
from forge.github.events import EventOutcome, EventPayloadError, _field, _repository, _sha

# A status's state, as a check's conclusion. `pending` has none yet. `error` says the CI could not
# run the check, not that it found something: it is recorded as cancelled, which reads "could not
# be checked", never failed and never fixed.
STATUS_CONCLUSIONS = {
    "success": vocabulary.CONCLUSION_SUCCESS,
    "failure": vocabulary.CONCLUSION_FAILURE,
    "error": vocabulary.CONCLUSION_CANCELLED,
}
BOT_SUFFIX = "[bot]"


def check_run_completed_handle(*, payload: dict) -> EventOutcome:
    """`check_run` `completed`: the run's conclusion recorded as the report of its check at its
    head SHA. Recheck's own check run is not a report of anything."""
    run = _field(payload, "check_run")
    name = str(_field(payload, "check_run", "name"))
    if name == CHECK_NAME:
        return EventOutcome(f"Ignored: {CHECK_NAME!r} is Recheck's own check.")
    conclusion = run.get("conclusion")
    if conclusion not in vocabulary.CONCLUSIONS:
        raise EventPayloadError(f"check_run.conclusion {conclusion!r} is not a conclusion GitHub gives a completed run.")
    app = (run.get("app") or {}).get("slug") or ""
    return _record(
        payload, sha=_sha(payload, "check_run", "head_sha"), check=name, conclusion=conclusion,
        app=str(app), url=str(run.get("html_url") or ""), completed_at=run.get("completed_at"),
    )


def status_handle(*, payload: dict) -> EventOutcome:
    """`status`: a commit status that has concluded, recorded as the report of its context."""
    state = str(_field(payload, "state"))
    context = str(_field(payload, "context"))
    if state == "pending":
        return EventOutcome(f"Ignored: the status {context!r} is still pending.")
    if state not in STATUS_CONCLUSIONS:
        raise EventPayloadError(f"state {state!r} is not a commit status's state.")
    sender = str((payload.get("sender") or {}).get("login") or "")
    return _record(
        payload, sha=_sha(payload, "sha"), check=context, conclusion=STATUS_CONCLUSIONS[state],
        app=sender.removesuffix(BOT_SUFFIX), url=str(payload.get("target_url") or ""),
        completed_at=payload.get("updated_at"),
    )


def _record(payload: dict, *, sha: str, check: str, conclusion: str, app: str, url: str, completed_at) -> EventOutcome:
    slug, repository = _repository(payload)
    if repository is None:
        return EventOutcome(f"Ignored: {slug} is not tracked here.")
    try:
        recorded = check_report_record(
            repository=repository, sha=sha, check=check, source=vocabulary.REPORT_GITHUB, conclusion=conclusion,
            app=app, url=url, completed_at=parse_datetime(str(completed_at)) if completed_at else None,
        )
    except (ReportError, ValueError) as error:
        raise EventPayloadError(f"The report of {check!r} at {sha[:8]} was not kept: {error}") from None
    said = f"{check} ({vocabulary.conclusion_label(conclusion).lower()}) at {sha[:8]} of {repository.slug}"
    if not recorded.created:
        return EventOutcome(f"Already recorded: {said}.")
    return EventOutcome(f"Recorded {said}" + (f" from {app}." if app else "."))
