"""Other apps' checks on GitHub, recorded as CI reports of their commit: a `check_run` that
completed and a commit `status`, each through `check_report_record`, the one service every source
of a report calls, so a check item verified at that commit is derived again the moment it arrives.

The same are read back from GitHub's API on a verification that found a check item with no report
of its check at a pinned commit (`commit_checks_read`): the commit's latest check runs and its
combined status.

A check run is named by its `name` and comes from its app's slug; a status is named by its
`context` and comes from whoever set it (the delivery's sender; a GitHub App's bot user is its
slug followed by "[bot]", which is taken off). A check item that names an app reads only that
app's reports (GitHub's required checks name an expected source the same way)."""
import logging

from django.utils.dateparse import parse_datetime

from core import vocabulary
from core.errors import ReportError
from findings.services.reports import check_report_record
from forge.content import CHECK_NAME, STATUS_CONTEXT
from forge.github.client import budget_key, github_call
from forge.github.events import EventOutcome, EventPayloadError, _field, _repository, _sha
from forge.outbox.budget import BudgetUnavailable, forge_budget
from forge.outbox.failures import Failure

logger = logging.getLogger(__name__)

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


# Check runs read back per commit: GitHub pages them by 100; a commit with more is rare.
READ_PAGES = 5


def _budget_taken(repository) -> None:
    """One call from the forge's budget, shared with the outbox (decision 0025); a Failure that
    says when to try again when it cannot take one now."""
    try:
        wait = forge_budget().acquire(budget_key(repository))
    except BudgetUnavailable as error:
        raise Failure(None, f"The forge budget is not answering: {error}", retryable=True, retry_after=30) from None
    if wait:
        raise Failure(None, "The calls to GitHub are spent for now.", retryable=True, retry_after=wait)


def commit_checks_read(*, repository, sha: str) -> list[str]:
    """Read the commit's latest completed check runs (`GET /repos/{o}/{r}/commits/{ref}/check-runs`)
    and its combined status (`GET /repos/{o}/{r}/commits/{ref}/status`) back from GitHub, each
    answer validated with githubkit's models, and record each concluded one as the webhook would
    have: a run by its name from its app's slug, a status by its context. GitHub's combined status
    does not say who set each status: a status read back names no app, so a check item that names
    an app is moved only by that app's own reports. Recheck's own run and status are not reports.
    Returns the checks recorded (new or already kept)."""
    owner, name = repository.owner, repository.name

    def runs_read(gh):
        runs, page = [], 1
        while True:
            _budget_taken(repository)
            answer = gh.rest.checks.list_for_ref(owner, name, sha, filter_="latest", status="completed",
                                                 per_page=100, page=page).parsed_data
            runs += answer.check_runs
            if len(runs) >= answer.total_count or not answer.check_runs or page >= READ_PAGES:
                return runs
            page += 1

    def statuses_read(gh):
        _budget_taken(repository)
        return gh.rest.repos.get_combined_status_for_ref(owner, name, sha, per_page=100).parsed_data.statuses

    recorded = []
    for run in github_call(repository, runs_read):
        if run.name == CHECK_NAME or run.status != "completed" or run.conclusion not in vocabulary.CONCLUSIONS:
            continue
        app = run.app.slug if run.app is not None and isinstance(run.app.slug, str) else ""
        if _read_back(repository, sha=sha, check=run.name, conclusion=run.conclusion, app=app,
                      url=run.html_url or "", completed_at=run.completed_at):
            recorded.append(run.name)
    for status in github_call(repository, statuses_read):
        conclusion = STATUS_CONCLUSIONS.get(status.state)
        if status.context == STATUS_CONTEXT or conclusion is None:
            continue
        if _read_back(repository, sha=sha, check=status.context, conclusion=conclusion, app="",
                      url=status.target_url or "", completed_at=status.updated_at):
            recorded.append(status.context)
    return recorded


def _read_back(repository, *, sha: str, check: str, conclusion: str, app: str, url: str, completed_at) -> bool:
    try:
        check_report_record(repository=repository, sha=sha, check=check, source=vocabulary.REPORT_GITHUB,
                            conclusion=conclusion, app=app, url=url, completed_at=completed_at)
    except ReportError as error:
        # One check GitHub names in a way Recheck does not keep (control characters): the rest are.
        logger.warning("The check %r read back at %s of %s was not kept: %s", check, sha[:8], repository.slug, error)
        return False
    return True
