"""What each kind of call does at GitHub, safe to do again after a failure part-way through.

- A check run is one per head and name. A create carries an `external_id` naming the call, and a
  create tried again looks the run up first (GitHub may have made it and answered after the
  client's timeout), so it is never made twice. GitHub appends the annotations of every update,
  so an update sends only those the run does not hold yet (read back from GitHub, so an update
  that landed unanswered is not sent twice), 50 to a request; when the run holds one the report
  no longer has (a blocker fixed since), GitHub cannot delete it: the run is ended as replaced and
  a new one carries the report.
- A commit status is the latest per context: sending it again is harmless.
- The comment is edited in place, found by its id or by its hidden marker before one is created.
- A review thread's reply and resolution: `forge.threads.calls`."""
from django.conf import settings

from forge import content
from forge.github.client import github_call, rate_limit_wait
from forge.github.issues import issue_send
from forge.github.replies import thread_call_send
from forge.outbox.failures import Failure
from forge.outbox.models import ForgeCall

REPLACED_TITLE = "Replaced by a newer Recheck run"


def call_send(call: ForgeCall) -> tuple[int | None, int, float | None]:
    """Send `call`; returns GitHub's id of what it made or changed, the HTTP status of the last
    answer, and how long to hold back when that answer used up the rate limit."""
    repository = call.repository
    owner, name = repository.owner, repository.name
    if call.kind == ForgeCall.Kind.ISSUE:
        return issue_send(call)
    if call.kind == ForgeCall.Kind.COMMIT_STATUS:
        answer = github_call(repository, lambda gh: gh.rest.repos.create_commit_status(owner, name, call.sha,
                                                                                        data=call.body))
        github_id = answer.parsed_data.id
    elif call.kind == ForgeCall.Kind.CHECK_RUN:
        github_id, answer = _send_check_run(call, owner, name)
    elif call.kind in ForgeCall.THREAD_KINDS:
        github_id, answer = thread_call_send(call)
        return github_id, 200, rate_limit_wait(answer)
    else:
        github_id, answer = _send_comment(call, owner, name)
    return github_id, answer.status_code, rate_limit_wait(answer)


def external_id(call: ForgeCall) -> str:
    return f"recheck-call-{call.pk}"


def _annotation_key(annotation) -> tuple:
    get = annotation.get if isinstance(annotation, dict) else lambda key: getattr(annotation, key, None)
    return (get("path"), get("start_line"), get("end_line"), get("annotation_level"), get("title") or "",
            get("message"))


def _current_run(call: ForgeCall) -> int | None:
    """The check run this SHA's calls made last (this one's own, when it made one already)."""
    made = ForgeCall.objects.for_target(call).filter(github_id__isnull=False, pk__lte=call.pk)
    return made.order_by("-id").values_list("github_id", flat=True).first()


def _made_unanswered(call: ForgeCall, owner: str, name: str) -> int | None:
    """The run an earlier attempt of `call` created without Recheck hearing the answer."""
    def find(gh):
        answer = gh.rest.checks.list_for_ref(
            owner, name, call.sha, check_name=content.CHECK_NAME, filter_="all",
            app_id=int(settings.RECHECK_GITHUB_APP_ID), per_page=100,
        )
        return answer.parsed_data.check_runs
    for run in github_call(call.repository, find):
        if run.external_id == external_id(call):
            return run.id
    return None


def _held_annotations(call: ForgeCall, owner: str, name: str, run_id: int) -> set[tuple]:
    def read(gh):
        return [_annotation_key(annotation) for annotation in gh.rest.paginate(
            gh.rest.checks.list_annotations, owner=owner, repo=name, check_run_id=run_id, per_page=100)]
    return set(github_call(call.repository, read))


def _remember(call: ForgeCall, run_id: int | None) -> None:
    # At once, not when the call ends: a later failure of this call must not make a second run.
    ForgeCall.objects.filter(pk=call.pk).update(github_id=run_id)
    call.github_id = run_id


def _send_check_run(call: ForgeCall, owner: str, name: str):
    repository = call.repository
    body = dict(call.body)
    output = dict(body.pop("output", {}))
    wanted = output.pop("annotations", None)  # None: an in_progress report, which leaves them as they are
    run_id = call.github_id
    if run_id is None and call.attempts > 1:
        # An earlier attempt may have created the run and timed out before GitHub's answer.
        run_id = _made_unanswered(call, owner, name)
        if run_id is not None:
            _remember(call, run_id)
    if run_id is None:
        run_id = _current_run(call)
    missing = list(wanted or [])
    if run_id is not None and wanted is not None:
        held = _held_annotations(call, owner, name, run_id)
        if held - {_annotation_key(annotation) for annotation in wanted}:
            _end_replaced(call, owner, name, run_id)
            run_id = None
            _remember(call, None)
        else:
            missing = [annotation for annotation in wanted if _annotation_key(annotation) not in held]
    batches = [missing[start:start + content.ANNOTATIONS_PER_REQUEST]
               for start in range(0, len(missing), content.ANNOTATIONS_PER_REQUEST)] or [[]]
    first = {**body, "output": {**output, **({"annotations": batches[0]} if batches[0] else {})}}
    if run_id is None:
        first["external_id"] = external_id(call)
        answer = github_call(repository, lambda gh: gh.rest.checks.create(owner, name, data=first))
        run_id = answer.parsed_data.id
        _remember(call, run_id)
    else:
        update = {key: value for key, value in first.items() if key != "head_sha"}
        answer = github_call(repository, lambda gh: gh.rest.checks.update(owner, name, run_id, data=update))
    for batch in batches[1:]:
        more = {"output": {**output, "annotations": batch}}
        answer = github_call(repository, lambda gh, more=more: gh.rest.checks.update(owner, name, run_id, data=more))
    return run_id, answer


def _end_replaced(call: ForgeCall, owner: str, name: str, run_id: int) -> None:
    """End a run whose annotations the report no longer has: `cancelled`, so it never passes a
    required check should GitHub count it, saying where the current report is."""
    data = {
        "status": "completed", "conclusion": "cancelled",
        "output": {"title": REPLACED_TITLE,
                   "summary": "This run showed findings that changed since. Recheck's current report on this "
                              "commit is the newer Recheck run."},
    }
    github_call(call.repository, lambda gh: gh.rest.checks.update(owner, name, run_id, data=data))


def _send_comment(call: ForgeCall, owner: str, name: str):
    """Edit Recheck's comment on the PR (remembered, or found by its hidden marker), else create it."""
    number = call.pull_request.number
    comment_id = (
        ForgeCall.objects.for_target(call).filter(status=ForgeCall.Status.SENT, github_id__isnull=False)
        .order_by("-id").values_list("github_id", flat=True).first()
    )
    repository = call.repository
    if comment_id is not None:
        try:
            answer = github_call(repository, lambda gh: gh.rest.issues.update_comment(owner, name, comment_id,
                                                                                       data=call.body))
            return answer.parsed_data.id, answer
        except Failure as failure:
            if failure.status != 404:
                raise
    comment_id = github_call(repository, lambda gh: _find_marked_comment(gh, owner, name, number))
    if comment_id is not None:
        answer = github_call(repository, lambda gh: gh.rest.issues.update_comment(owner, name, comment_id,
                                                                                   data=call.body))
    else:
        answer = github_call(repository, lambda gh: gh.rest.issues.create_comment(owner, name, number,
                                                                                   data=call.body))
    return answer.parsed_data.id, answer


def _find_marked_comment(gh, owner: str, name: str, number: int) -> int | None:
    for comment in gh.rest.paginate(gh.rest.issues.list_comments, owner=owner, repo=name, issue_number=number,
                                    per_page=100):
        if content.COMMENT_MARKER in (comment.body or ""):
            return comment.id
    return None
