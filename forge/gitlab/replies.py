"""What Recheck says in a GitLab merge request's review threads (its diff discussions), sent by the
outbox as GitHub's thread calls are (`forge.threads.calls` writes the rows for both forges).

- A verdict reply is a note in the discussion, made once and then edited in place (its id is kept
  on the thread at once); a reply deleted on GitLab (404 on the edit) is made again.
- A reply tried again after GitLab did not answer in time is looked for in the discussion first
  (the same text), so it is never made twice.
- A resolution resolves or unresolves the whole discussion; doing it twice is harmless.

The discussion's id is the thread's `node_id`, which every reading of the threads records; a
thread read before it was known is looked up once more."""
from __future__ import annotations

from forge.outbox.failures import Failure
from forge.gitlab.threads import (
    discussion_reply_create,
    discussion_reply_edit,
    discussion_resolution_set,
    discussions_read,
)
from forge.outbox.models import ForgeCall
from forge.threads.calls import VERDICT
from forge.threads.models import ReviewThread


def gitlab_thread_call_send(call: ForgeCall) -> tuple[int | None, int, float | None]:
    thread = ReviewThread.objects.select_related("pull_request__repository").get(pk=call.review_thread_id)
    repository, iid = thread.pull_request.repository, thread.pull_request.number
    discussion_id = thread.node_id or _discussion_id(thread)
    if call.kind == ForgeCall.Kind.THREAD_RESOLVE:
        resolved = discussion_resolution_set(repository, iid, discussion_id, bool(call.body["resolved"]))
        ReviewThread.objects.filter(pk=thread.pk).update(resolved=resolved)
        return None, 200, None
    body = call.body["body"]
    if call.state == VERDICT and thread.reply_comment_id:
        try:
            return discussion_reply_edit(repository, iid, discussion_id, thread.reply_comment_id, body), 200, None
        except Failure as failure:
            if failure.status != 404:
                raise
    if call.github_id:  # an earlier attempt made it, and the call failed after
        return call.github_id, 200, None
    made = _made_unanswered(call, thread) if call.attempts > 1 else None
    reply_id = made if made is not None else discussion_reply_create(repository, iid, discussion_id, body)
    ForgeCall.objects.filter(pk=call.pk).update(github_id=reply_id)
    if call.state == VERDICT:
        ReviewThread.objects.filter(pk=thread.pk).update(reply_comment_id=reply_id)
    return reply_id, 201, None


def _discussion_id(thread: ReviewThread) -> str:
    _, threads = discussions_read(thread.pull_request.repository, thread.pull_request.number)
    found = threads.get(thread.root_comment_id)
    if found is None:
        raise Failure(404, f"GitLab shows no discussion starting with note {thread.root_comment_id}.",
                      retryable=False)
    ReviewThread.objects.filter(pk=thread.pk).update(node_id=found.node_id)
    return found.node_id


def _made_unanswered(call: ForgeCall, thread: ReviewThread) -> int | None:
    comments, _ = discussions_read(thread.pull_request.repository, thread.pull_request.number)
    return next((comment.id for comment in comments if comment.in_reply_to_id == thread.root_comment_id
                 and comment.body == call.body["body"]), None)
