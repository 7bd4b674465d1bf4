"""The GitHub events about a pull request's review threads: a review comment created, edited or
deleted, a review submitted, edited or dismissed, a thread resolved or unresolved.

Each hands the pull request's inbox to a worker to read again (`forge.tasks.sync_review_threads`,
after the delivery's transaction commits): one reading applies every change however many
deliveries announced it, and a delivery that arrives out of order changes nothing a later
reading would not. A thread's resolution, which the REST comments do not carry, is recorded from
the event itself."""
from django.db import transaction

from findings.enqueue import enqueue
from forge.github.events import EventOutcome, EventPayloadError, _field, _repository
from forge.threads.sync import review_thread_resolved_record
from reviews.models import PullRequest

THREAD_EVENTS = frozenset({"pull_request_review_comment", "pull_request_review", "pull_request_review_thread"})
THREAD_ACTIONS = {
    "pull_request_review_comment": {"created", "edited", "deleted"},
    "pull_request_review_thread": {"resolved", "unresolved"},
}
SYNC_TASK = "forge.tasks.sync_review_threads"


def review_thread_event_handle(*, event: str, payload: dict) -> EventOutcome:
    slug, repository = _repository(payload)
    try:
        number = int(_field(payload, "pull_request", "number"))
    except (TypeError, ValueError):
        raise EventPayloadError("pull_request.number is not a number.") from None
    pull_request = PullRequest.objects.filter(repository=repository, number=number).first() if repository else None
    if pull_request is None:
        return EventOutcome(f"Ignored: {slug}#{number} is not tracked here.")
    said = ""
    if event == "pull_request_review_thread":
        comments = _field(payload, "thread", "comments") or []
        if comments:
            first = comments[0]
            root_id = int(first.get("in_reply_to_id") or first["id"])
            resolved = payload.get("action") == "resolved"
            thread = review_thread_resolved_record(pull_request=pull_request, root_comment_id=root_id,
                                                   node_id=str(_field(payload, "thread", "node_id")),
                                                   resolved=resolved)
            if thread is not None:
                said = f" Thread {root_id} is {'resolved' if resolved else 'unresolved'} on GitHub."
    transaction.on_commit(lambda: enqueue(SYNC_TASK, pull_request.pk))
    return EventOutcome(f"Reading the review threads of {pull_request.reference} again.{said}")
