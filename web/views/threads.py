"""A pull request's inbox of review threads (GitHub's, or a GitLab merge request's diff
discussions): the list, reading them again from the forge (in the background), and a Reviewer's
triage of one thread."""
from django.contrib import messages
from django.db import transaction
from django.shortcuts import get_object_or_404, redirect
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from access.permissions import Action
from core.errors import RecheckError
from findings.enqueue import enqueue
from findings.models import Finding
from forge.threads.models import ReviewThread
from forge.threads.selectors import pull_request_thread_sync, pull_request_threads
from forge.threads.triage import TRIAGE_OUTCOMES, review_thread_attach, review_thread_triage
from web.doors import pull_request_for, readable, require_action
from web.pagecache import kept_query, page_served
from web.views.keys import pull_request_page_key, pull_request_read


def _inbox_url(pull_request) -> str:
    repository = pull_request.repository
    return reverse("findings:threads", args=[repository.owner, repository.name, pull_request.number])


# The findings a thread may be attached to are offered as a list up to this many; past it, the
# finding's number is typed (a list of ten thousand beside each thread would be most of the page).
ATTACH_CHOICES = 200


@require_GET
@readable
def pull_request_threads_page(request, owner: str, name: str, number: int):
    # Kept by the PR's generation, which a thread's, a comment's or a reading's write moves.
    read = pull_request_read(request, owner, name, number)
    key, _ = pull_request_page_key(request, read, "threads", query=kept_query(request, {}))

    def build():
        pull_request = pull_request_for(request, owner, name, number)
        findings = Finding.objects.filter(pull_request=pull_request).order_by("number").only("number", "title")
        return "findings/threads.html", {
            "pull_request": pull_request,
            "threads": list(pull_request_threads(pull_request)),
            "sync": pull_request_thread_sync(pull_request),
            "findings": list(findings[:ATTACH_CHOICES + 1]),
            "attach_choices": ATTACH_CHOICES,
            "can_write": key.reader.may(Action.WRITE),
            "outcomes": TRIAGE_OUTCOMES,
        }

    return page_served(request, key, build)


@require_POST
@readable
def threads_sync_now(request, owner: str, name: str, number: int):
    pull_request = pull_request_for(request, owner, name, number)
    require_action(request, Action.WRITE, pull_request.repository, audit_action="review_threads.sync",
                   target=pull_request.reference)
    # In the background: a request never waits on the forge.
    actor_id = request.user.pk
    transaction.on_commit(lambda: enqueue("forge.tasks.sync_review_threads", pull_request.pk, actor_id))
    messages.info(request, f"Reading the review threads of {pull_request.reference} from "
                           f"{pull_request.repository.get_forge_display()}.")
    return redirect(_inbox_url(pull_request))


@require_POST
@readable
def thread_triage_now(request, owner: str, name: str, number: int, thread_id: int):
    pull_request = pull_request_for(request, owner, name, number)
    thread = get_object_or_404(ReviewThread.objects.select_related("pull_request__repository"),
                               pull_request=pull_request, root_comment_id=thread_id)
    outcome = request.POST.get("outcome", "")
    attach = request.POST.get("attach", "").strip() if outcome == "attach" else ""
    try:
        if outcome == "attach" and not attach:
            raise RecheckError("Choose the finding to attach the thread to.")
        if attach:
            finding = Finding.objects.filter(pull_request=pull_request, number=int(attach)).first() \
                if attach.isdigit() else None
            if finding is None:
                raise RecheckError(f"{pull_request.reference} has no finding {attach}.")
            review_thread_attach(thread=thread, finding=finding, actor=request.user)
            messages.success(request, f"Thread attached to finding {finding.number}.")
        else:
            thread = review_thread_triage(thread=thread, actor=request.user, outcome=outcome)
            done = (f"Recorded as finding {thread.finding.number}." if thread.finding
                    else "Recorded as not a finding.")
            messages.success(request, done)
    except RecheckError as error:
        messages.error(request, str(error))
    return redirect(_inbox_url(pull_request) + f"#thread-{thread_id}")
