"""GitLab: merge request and push hooks at /api/hooks/gitlab (`forge.gitlab.webhooks`), a commit
status named `recheck` and one sticky merge request note through the outbox
(`forge.gitlab.calls`), review threads from the merge request's diff discussions
(`forge.gitlab.threads`), sign-in through the groups of the account.

The status is what a project can require as an external status check or through "Pipelines must
succeed": `running` while Recheck verifies, `success` when the gate lets the merge request merge,
`failed` when it refuses (an open blocker still present, or one a person must decide on, or a
check that could not run: "the gate cannot say" never lets a merge through)."""
from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import urlsplit

from django.conf import settings

from core.forges import GITLAB
from forge.interface import DeliveryOutcome, WebhookPayloadError, forge_register

# The gate's conclusions (forge.content) as GitLab's commit status states.
STATUS_STATES = {"success": "success", "failure": "failed", "action_required": "failed", "cancelled": "canceled"}


class GitLabForge:
    name = GITLAB
    label = "GitLab"

    def webhook_receive(self, *, headers: Mapping[str, str], body: bytes, content_type: str) -> DeliveryOutcome:
        from forge.gitlab.webhooks import MAX_UUID_LENGTH, gitlab_delivery_handle, gitlab_payload_parse, gitlab_token_check

        gitlab_token_check(secret=settings.RECHECK_GITLAB_WEBHOOK_SECRET, token=headers.get("X-Gitlab-Token"))
        event_uuid = (headers.get("X-Gitlab-Event-UUID") or "").strip()
        if not event_uuid or len(event_uuid) > MAX_UUID_LENGTH:
            raise WebhookPayloadError("X-Gitlab-Event-UUID: GitLab sends each event's id in this header; it is missing.")
        payload = gitlab_payload_parse(body)
        return gitlab_delivery_handle(event_uuid=event_uuid, event=(headers.get("X-Gitlab-Event") or "").strip(),
                                      payload=payload)

    def verdict_calls(self, *, pull_request, commit, report):
        from forge import content
        from forge.outbox.models import ForgeCall
        from forge.outbox.services import record_calls

        kind = ForgeCall.Kind.COMMIT_STATUS
        if not settings.RECHECK_GITLAB_TOKEN:
            return record_calls(pull_request, commit, kind, "not configured", [{}],
                                failure=("No GitLab token is configured.",
                                         "Set RECHECK_GITLAB_TOKEN to a token with the api scope (a project or "
                                         "group access token with the Developer role)."))
        body = {"name": content.STATUS_CONTEXT}
        details_url = content.site_url(content.Links(pull_request=pull_request).blockers)
        if details_url:
            body["target_url"] = details_url
        if report is None:
            body.update(state="running", description=content.in_progress_title(commit))
            state = "running"
        else:
            body.update(state=STATUS_STATES[report.conclusion], description=report.status_description)
            state = f"{body['state']}: {report.conclusion}"
        return record_calls(pull_request, commit, kind, state, [body])

    def call_send(self, call):
        from forge.gitlab.calls import gitlab_call_send

        return gitlab_call_send(call)

    def rate_limit_scope(self, call) -> dict[str, object]:
        return {}  # one token: its limit covers every project it reaches

    def budget_key(self, call) -> str:
        # One token per GitLab server: its limits count every project of that server.
        return f"gitlab:{urlsplit(call.repository.forge_base_url).netloc}"

    def failure_hint(self, call, failure, *, gave_up: bool) -> str:
        from forge.gitlab.hints import gitlab_hint

        return gitlab_hint(call, failure, gave_up=gave_up)

    def signin_memberships(self, *, token: str) -> list[str]:
        from forge.signin import forge_paged

        # Every group the account is a member of, subgroups by their full path (group/subgroup).
        rows = forge_paged(f"{settings.RECHECK_GITLAB_URL}/api/v4/groups?min_access_level=10",
                           {"Authorization": f"Bearer {token}"})
        return [row["full_path"] for row in rows]


    def commit_checks_readable(self, repository) -> bool:
        # GitLab's reports arrive with its Pipeline and Job hooks and the pipeline's test report.
        return False

    def commit_checks_read(self, *, repository, sha: str) -> list[str]:
        return []

    def review_threads_read(self, *, repository, number: int):
        from forge.gitlab.threads import discussions_read

        # One reading carries both: each discussion says whether it is resolved.
        return discussions_read(repository, number)


forge_register(GitLabForge())
