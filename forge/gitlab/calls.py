"""What each kind of call does at GitLab, safe to do again after a failure part-way through.

- The commit status `recheck` is the latest per name and SHA: sending it again is harmless, and
  GitLab's refusal to "transition" a status to the state it already has (a 400 after an answer
  that was lost) means the status is as Recheck wants it.
- The merge request note is edited in place, found by its id or by its hidden marker before one is
  created, so a retried or repeated report never leaves a second note.
- A review thread's reply and resolution: `forge.gitlab.replies`."""
from forge import content
from forge.outbox.failures import Failure
from forge.gitlab.client import CommitStatus, Note, gitlab_request, parsed, parsed_list
from forge.gitlab.replies import gitlab_thread_call_send
from forge.outbox.models import ForgeCall

NOTES_PER_PAGE = 100
MAX_NOTE_PAGES = 20


def gitlab_call_send(call: ForgeCall) -> tuple[int | None, int, float | None]:
    if call.kind == ForgeCall.Kind.COMMIT_STATUS:
        return _send_status(call)
    if call.kind == ForgeCall.Kind.COMMENT:
        return _send_note(call)
    if call.kind in ForgeCall.THREAD_KINDS:
        return gitlab_thread_call_send(call)
    raise Failure(None, f"GitLab has no {call.get_kind_display().lower()}; Recheck sends it commit statuses, "
                  "a merge request note and replies in its review threads.", retryable=False)


def _send_status(call: ForgeCall):
    try:
        response = gitlab_request(call.repository, "POST", f"/statuses/{call.sha}", json=call.body)
    except Failure as failure:
        if failure.status == 400 and "cannot transition status" in failure.message.lower():
            # Already in this state: an earlier attempt landed and its answer was lost.
            return call.github_id, 400, None
        raise
    status = parsed(CommitStatus, response)
    return status.id, response.status_code, None


def _send_note(call: ForgeCall):
    """Edit Recheck's note on the merge request (remembered, or found by its marker), else create it."""
    repository = call.repository
    iid = call.pull_request.number
    notes = f"/merge_requests/{iid}/notes"
    note_id = (
        ForgeCall.objects.for_target(call).filter(status=ForgeCall.Status.SENT, github_id__isnull=False)
        .order_by("-id").values_list("github_id", flat=True).first()
    )
    if note_id is not None:
        try:
            response = gitlab_request(repository, "PUT", f"{notes}/{note_id}", json=call.body)
            return parsed(Note, response).id, response.status_code, None
        except Failure as failure:
            if failure.status != 404:
                raise
    note_id = _find_marked_note(call, notes)
    if note_id is not None:
        response = gitlab_request(repository, "PUT", f"{notes}/{note_id}", json=call.body)
    else:
        response = gitlab_request(repository, "POST", notes, json=call.body)
    return parsed(Note, response).id, response.status_code, None


def _find_marked_note(call: ForgeCall, notes: str) -> int | None:
    for page in range(1, MAX_NOTE_PAGES + 1):
        response = gitlab_request(call.repository, "GET", notes,
                                  params={"per_page": NOTES_PER_PAGE, "page": page, "sort": "asc"})
        rows = parsed_list(Note, response)
        for note in rows:
            if not note.system and content.COMMENT_MARKER in note.body:
                return note.id
        if not response.headers.get("x-next-page"):
            return None
    return None
