"""GitHub, through the modules that speak to it: webhooks signed with X-Hub-Signature-256
(`forge.github.webhooks`), check runs or commit statuses and the comment (`forge.outbox.services`,
`forge.github.calls`), sign-in through the organisations of the account (`forge.signin`).

Those modules are imported when a method runs, not with this one: the app registers its forges at
start-up, and a process that never reports (a command) should not load the reports' machinery."""
from __future__ import annotations

import logging
from collections.abc import Mapping

from django.conf import settings

from core.forges import GITHUB
from forge.interface import DeliveryOutcome, WebhookPayloadError, WebhookRefused, forge_register

MAX_DELIVERY_ID_LENGTH = 100
logger = logging.getLogger(__name__)


class GitHubForge:
    name = GITHUB
    label = "GitHub"

    def webhook_receive(self, *, headers: Mapping[str, str], body: bytes, content_type: str) -> DeliveryOutcome:
        secret = settings.RECHECK_GITHUB_WEBHOOK_SECRET
        if not secret:
            raise WebhookRefused(
                "The GitHub webhook is not configured on this server: set RECHECK_GITHUB_WEBHOOK_SECRET to the "
                "secret entered on GitHub."
            )
        from forge.github.webhooks import github_signature_is_valid

        # The raw bytes, as GitHub signed them: never the parsed and re-serialised data.
        if not github_signature_is_valid(secret=secret, body=body, signature=headers.get("X-Hub-Signature-256")):
            raise WebhookRefused(
                "Missing or wrong X-Hub-Signature-256: the webhook's secret on GitHub must equal "
                "RECHECK_GITHUB_WEBHOOK_SECRET."
            )
        delivery_id = (headers.get("X-GitHub-Delivery") or "").strip()
        if not delivery_id or len(delivery_id) > MAX_DELIVERY_ID_LENGTH:
            raise WebhookPayloadError("X-GitHub-Delivery: GitHub sends a delivery id in this header; it is missing.")
        from forge.github.webhooks import github_delivery_handle, github_payload_parse

        return github_delivery_handle(
            delivery_id=delivery_id, event=(headers.get("X-GitHub-Event") or "").strip(),
            payload=github_payload_parse(body, content_type),
        )

    def verdict_calls(self, *, pull_request, commit, report):
        from forge.github.services import github_verdict_calls

        return github_verdict_calls(pull_request, commit, report)

    def call_send(self, call):
        from forge.github import calls

        return calls.call_send(call)

    def rate_limit_scope(self, call) -> dict[str, object]:
        from forge.github.client import credentials_kind

        # An App's limit counts per installation; a token's covers every repository it reaches.
        if credentials_kind() == "app" and call.repository.github_installation_id:
            return {"repository__github_installation_id": call.repository.github_installation_id}
        return {}

    def budget_key(self, call) -> str:
        from forge.github.client import budget_key

        return budget_key(call.repository)

    def failure_hint(self, call, failure, *, gave_up: bool) -> str:
        from forge.github.hints import github_hint

        return github_hint(call, failure, gave_up=gave_up)

    def signin_memberships(self, *, token: str) -> list[str]:
        from allauth.socialaccount.providers.github.views import GitHubOAuth2Adapter

        from forge.signin import forge_paged

        rows = forge_paged(f"{GitHubOAuth2Adapter.api_url}/user/orgs", {"Authorization": f"token {token}"})
        return [row["login"] for row in rows]

    def commit_checks_readable(self, repository) -> bool:
        from forge.github.client import credentials_kind

        return bool(credentials_kind())

    def commit_checks_read(self, *, repository, sha: str) -> list[str]:
        from forge.github.reports import commit_checks_read

        return commit_checks_read(repository=repository, sha=sha)

    def review_threads_read(self, *, repository, number: int):
        from forge.outbox.failures import Failure
        from forge.github.threads import review_comments_read, review_threads_read

        comments = review_comments_read(repository, number)
        try:
            # REST has no threads: whether each is resolved comes from GraphQL.
            threads = review_threads_read(repository, number)
        except Failure as failure:
            # Only whether each thread is resolved is lost; the webhook's events still say it.
            logger.warning("Reading the review threads' resolution of %s#%s failed: %s", repository.slug, number,
                           failure)
            threads = None
        return comments, threads


forge_register(GitHubForge())
