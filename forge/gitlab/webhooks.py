"""GitLab webhooks: checking a delivery's secret token, and acting on it once.

GitLab proves who it is with the secret token entered on the webhook, sent back as X-Gitlab-Token
(compared in constant time with RECHECK_GITLAB_WEBHOOK_SECRET). Every delivery acted on is recorded
by its X-Gitlab-Event-UUID (as `gitlab:<uuid>`, beside GitHub's delivery ids) in the same
transaction as its effect, so GitLab's retries and "Resend request" change nothing.

- `Merge Request Hook`: `open` and `reopen`, and `update` with new commits (GitLab says so with
  `oldrev`), pin the merge request's head (`last_commit.id`) through `pull_request_record_head`,
  as GitHub's `synchronize` does: a new head is pinned with role `head` and verified once.
  `merge` and `close` record the state. A merge request from a fork is pinned the same way: its
  head is in the target project as refs/merge-requests/N/head, which the mirror fetches.
- `Note Hook`: a comment written or edited on a tracked merge request has its review threads
  (the diff discussions) read again by a worker (`forge.threads.sync`).
- `Push Hook`: a push to a tracked project refreshes its mirror (queued after the commit, for a
  worker), so the commits are there for the verifications that follow.
- `Pipeline Hook` and `Job Hook`: each finished job is recorded as a CI report of its commit by
  the job's name (`forge.gitlab.reports`).

A project is found by GitLab's project id once one of its hooks told it, so a project moved or
renamed on GitLab is still tracked (the outcome says where GitLab has it now), else by its path."""
from __future__ import annotations

import hmac
import logging

from django.db import transaction

from core.documents import DocumentError, load_json
from core.errors import RecheckError
from core.forges import GITLAB
from findings.enqueue import enqueue, tasks_run_in_process
from findings.models import WebhookDelivery
from findings.services.runs import verification_run_request
from findings.services.tracking import pull_request_record_head
from forge.gitlab.reports import job_record, pipeline_jobs_record
from forge.interface import DeliveryOutcome, WebhookPayloadError, WebhookRefused, delivery_acted_on_once
from reviews.models import PullRequest, Repository
from reviews.services import pull_request_branches_record, pull_request_state_record

logger = logging.getLogger(__name__)

MERGE_REQUEST_HOOK = "Merge Request Hook"
PUSH_HOOK = "Push Hook"
NOTE_HOOK = "Note Hook"
PIPELINE_HOOK = "Pipeline Hook"
JOB_HOOK = "Job Hook"
HANDLED_EVENTS = (MERGE_REQUEST_HOOK, PUSH_HOOK, NOTE_HOOK, PIPELINE_HOOK, JOB_HOOK)
THREADS_SYNC_TASK = "forge.tasks.sync_review_threads"
MAX_UUID_LENGTH = 90
MAX_NUMBER = 2_147_483_647
DELETED_SHA = "0" * 40


def gitlab_token_check(*, secret: str, token: str | None) -> None:
    """Refuse (WebhookRefused) a delivery whose X-Gitlab-Token is not the configured secret."""
    if not secret:
        raise WebhookRefused(
            "The GitLab webhook is not configured on this server: set RECHECK_GITLAB_WEBHOOK_SECRET to the "
            "secret token entered on the GitLab webhook."
        )
    if not token:
        raise WebhookRefused(
            "No X-Gitlab-Token: enter RECHECK_GITLAB_WEBHOOK_SECRET as the webhook's secret token on GitLab.",
            status=401,
        )
    if not hmac.compare_digest(secret.encode("utf-8"), token.strip().encode("utf-8", "replace")):
        raise WebhookRefused(
            "Wrong X-Gitlab-Token: the webhook's secret token on GitLab must equal RECHECK_GITLAB_WEBHOOK_SECRET."
        )


def gitlab_payload_parse(body: bytes) -> dict:
    try:
        payload = load_json(body.decode("utf-8"))
    except (UnicodeDecodeError, DocumentError) as error:
        raise WebhookPayloadError(f"The body is not a GitLab event payload (JSON): {error}") from None
    if not isinstance(payload, dict):
        raise WebhookPayloadError("The body is not a GitLab event payload: expected a JSON object.")
    return payload


def gitlab_delivery_handle(*, event_uuid: str, event: str, payload: dict) -> DeliveryOutcome:
    """Act on one delivery, at most once per X-Gitlab-Event-UUID. Raises QueueUnavailable when its
    verification could not be queued; the delivery is then not recorded, so a resend acts on it."""
    delivery_id = f"gitlab:{event_uuid}"
    return delivery_acted_on_once(
        delivery_id, lambda: _delivery_handle(delivery_id=delivery_id, event=event, payload=payload)
    )


@transaction.atomic
def _delivery_handle(*, delivery_id: str, event: str, payload: dict) -> DeliveryOutcome:
    if event not in HANDLED_EVENTS:
        return DeliveryOutcome(
            f"Ignored: Recheck acts on {', '.join(HANDLED_EVENTS)} events, not {event or 'unnamed'} events."
        )
    project_id, path = _project(payload)
    action = _action(event, payload)
    delivery, created = WebhookDelivery.objects.get_or_create(
        delivery_id=delivery_id, defaults={"event": event[:50], "action": action[:50]}
    )
    if not created:
        return DeliveryOutcome(f"Already handled delivery {delivery_id}: {delivery.outcome}", duplicate=True)
    repository, moved = _tracked_repository(project_id, path)
    if repository is None:
        message, run = f"Ignored: the GitLab project {path} is not tracked here.", None
    elif event == PUSH_HOOK:
        message, run = _push(repository, payload), None
    elif event == NOTE_HOOK:
        message, run = _note(repository, payload), None
    elif event == PIPELINE_HOOK:
        message, run = pipeline_jobs_record(repository, payload), None
    elif event == JOB_HOOK:
        message, run = job_record(repository, payload), None
    else:
        message, run = _merge_request(repository, action, payload)
    if moved:
        message += (f" GitLab has this project at {path} now; Recheck tracks it as {repository.slug}: "
                    "change its slug in the admin to match.")
    delivery.outcome = message
    delivery.save(update_fields=["outcome"])
    return DeliveryOutcome(message, run=run)


def _project(payload: dict) -> tuple[int, str]:
    try:
        project = payload["project"]
        project_id = int(project["id"])
        path = str(project["path_with_namespace"])
    except (KeyError, TypeError, ValueError):
        raise WebhookPayloadError("A GitLab event payload needs project.id and project.path_with_namespace.") from None
    return project_id, path


def _action(event: str, payload: dict) -> str:
    if event == PUSH_HOOK:
        return "push"
    if event == PIPELINE_HOOK:
        attributes = payload.get("object_attributes")
        return str((attributes.get("status") if isinstance(attributes, dict) else None) or "pipeline")
    if event == JOB_HOOK:
        return str(payload.get("build_status") or "job")
    if event == NOTE_HOOK:
        # GitLab says `create` or `update` since 16.11; an older server sends no action.
        attributes = payload.get("object_attributes")
        return str((attributes.get("action") if isinstance(attributes, dict) else None) or "note")
    attributes = payload.get("object_attributes")
    if not isinstance(attributes, dict) or not attributes.get("action"):
        raise WebhookPayloadError("A Merge Request Hook payload needs object_attributes.action.")
    return str(attributes["action"])


def _tracked_repository(project_id: int, path: str) -> tuple[Repository | None, bool]:
    """The tracked GitLab repository: by project id (remembered from an earlier hook), else by
    path, which then remembers the id. Whether GitLab's path is no longer the recorded slug."""
    gitlab = Repository.objects.filter(forge=GITLAB)
    repository = gitlab.filter(forge_project_id=project_id).first()
    if repository is None:
        repository = gitlab.filter(slug=path).first() or gitlab.filter(slug__iexact=path).first()
        if repository is None:
            return None, False
        if repository.forge_project_id is None:
            Repository.objects.filter(pk=repository.pk).update(forge_project_id=project_id)
            repository.forge_project_id = project_id
    return repository, repository.slug.lower() != path.lower()


def _branches_record(pull_request: PullRequest, attributes: dict, *, fork: bool) -> bool:
    """The MR's target and source branches as the hook names them (a fork's source as
    project:branch, which no branch of the project can be a target of); whether the target changed."""
    target, source = attributes.get("target_branch"), attributes.get("source_branch")
    if not isinstance(target, str) or not isinstance(source, str):
        return False
    head = f"{attributes.get('source_project_id')}:{source}" if fork else source
    return pull_request_branches_record(pull_request=pull_request, base_branch=target, head_branch=head)


def _merge_request(repository: Repository, action: str, payload: dict):
    attributes = payload["object_attributes"]
    try:
        iid = int(attributes["iid"])
        if not 0 < iid <= MAX_NUMBER:
            raise ValueError(iid)
    except (KeyError, TypeError, ValueError):
        raise WebhookPayloadError("A Merge Request Hook payload needs object_attributes.iid.") from None
    pull_request = PullRequest.objects.filter(repository=repository, number=iid).select_related("repository").first()
    reference = f"{repository.slug}!{iid}"
    if pull_request is None:
        return f"Ignored: {reference} is not tracked here.", None
    fork = attributes.get("source_project_id") not in (None, attributes.get("target_project_id"))
    retargeted = _branches_record(pull_request, attributes, fork=fork)
    if action in ("merge", "close"):
        state = PullRequest.State.MERGED if action == "merge" else PullRequest.State.CLOSED
        pull_request_state_record(pull_request=pull_request, state=state)
        return f"Recorded {reference} as {state}.", None
    moves_head = action in ("open", "reopen") or (action == "update" and attributes.get("oldrev"))
    if action == "update" and not moves_head and (retargeted or "target_branch" in (payload.get("changes") or {})):
        # A new target branch: the stack is read again (recording it moved the generations), and
        # the head verified again as a push would, every finding kept on its code.
        head_sha = str((attributes.get("last_commit") or {}).get("id") or "")
        if not head_sha:
            raise WebhookPayloadError("A Merge Request Hook payload needs object_attributes.last_commit.id.")
        run = verification_run_request(pull_request=pull_request, commit_sha=head_sha, commit_known=True)
        return (f"Retargeted {reference} onto {pull_request.base_branch}: verifying {head_sha[:8]} again "
                f"(run {run.pk})."), run if run.created else None
    if not moves_head:
        return f"Ignored: action {action!r} does not move the head of {reference}.", None
    try:
        head_sha = str(attributes["last_commit"]["id"])
    except (KeyError, TypeError):
        raise WebhookPayloadError("A Merge Request Hook payload needs object_attributes.last_commit.id.") from None
    if action == "reopen":
        pull_request_state_record(pull_request=pull_request, state=PullRequest.State.OPEN)
    note = f"pushed ({action}{', from a fork' if fork else ''})"
    try:
        recorded = pull_request_record_head(pull_request=pull_request, sha=head_sha, note=note)
    except RecheckError as error:
        raise WebhookPayloadError(f"object_attributes.last_commit.id: {error}") from None
    message = recorded.describe()
    if fork:
        message += f" (from the fork project {attributes.get('source_project_id')})"
    return message, recorded.run if recorded.queued else None


def _note(repository: Repository, payload: dict) -> str:
    """A comment written or edited: on a tracked merge request, its review threads are read again
    (after the commit, by a worker), so one reading applies every change however many hooks said it."""
    attributes = payload.get("object_attributes")
    noteable = attributes.get("noteable_type") if isinstance(attributes, dict) else None
    if noteable != "MergeRequest":
        return (f"Ignored: the comment in {repository.slug} is on {noteable or 'something'}, not on a merge "
                "request.")
    try:
        iid = int(payload["merge_request"]["iid"])
        if not 0 < iid <= MAX_NUMBER:
            raise ValueError(iid)
    except (KeyError, TypeError, ValueError):
        raise WebhookPayloadError("A Note Hook payload on a merge request needs merge_request.iid.") from None
    pull_request = PullRequest.objects.filter(repository=repository, number=iid).first()
    reference = f"{repository.slug}!{iid}"
    if pull_request is None:
        return f"Ignored: {reference} is not tracked here."
    transaction.on_commit(lambda: enqueue(THREADS_SYNC_TASK, pull_request.pk))
    return f"Reading the review threads of {reference} again."


def _push(repository: Repository, payload: dict) -> str:
    ref = str(payload.get("ref", ""))
    if str(payload.get("after", "")) == DELETED_SHA:
        return f"Ignored: {ref} was deleted from {repository.slug}."
    if tasks_run_in_process():
        # Without a worker the fetch would run inside this request, and GitLab waits 10 s at most
        # (and turns off a hook that keeps timing out).
        return f"Push to {ref} of {repository.slug}: its mirror is fetched by the next verification."
    transaction.on_commit(lambda: _refresh(repository))
    return f"Push to {ref} of {repository.slug}: its mirror is fetched."


def _refresh(repository: Repository) -> None:
    # Best effort: every verification fetches the mirror itself, so a refresh that could not be
    # queued loses nothing but time.
    try:
        enqueue("findings.tasks.fetch_repository", repository.pk)
    except Exception:
        logger.exception("Could not queue the fetch of %s after a GitLab push", repository.slug)
