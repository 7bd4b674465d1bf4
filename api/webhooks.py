"""The GitHub webhook endpoint. GitHub proves who it is with an HMAC signature of the raw body, not
with a session or a token, so the view has no authentication (and so no CSRF check, which only
session authentication applies) and refuses anything unsigned. The delivery only records and
enqueues: the verification is queued on commit, and what to tell GitHub is written to the outbox,
which a sender sends later (never this request), so GitHub gets its answer well within its
ten-second timeout whatever GitHub's API is doing."""
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import status
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.reverse import reverse
from rest_framework.views import APIView

from api.serializers.errors import ErrorSerializer, ValidationErrorSerializer
from api.serializers.writes import WebhookResponseSerializer
from core.forges import GITHUB, GITLAB
from forge.interface import WebhookRefused, forge_named


def forge_webhook_answer(request, forge_name: str) -> Response:
    """One delivery to the forge's hook, through the forge interface: its secret checked, acted
    on at most once, answered with what was done (202 when a verification was queued)."""
    try:
        outcome = forge_named(forge_name).webhook_receive(
            headers=request.headers, body=request.body, content_type=request.content_type or ""
        )
    except WebhookRefused as refused:
        # Answered here, not raised: DRF turns a 401 of a view without authentication into a 403.
        return Response({"detail": str(refused)}, status=refused.status)
    run = outcome.run
    data = {
        "detail": outcome.message,
        "duplicate": outcome.duplicate,
        "run": run.pk if run else None,
        "status_url": reverse("api:run-detail", kwargs={"pk": run.pk}, request=request) if run else None,
    }
    return Response(
        WebhookResponseSerializer(data).data, status=status.HTTP_202_ACCEPTED if run else status.HTTP_200_OK
    )


@extend_schema_view(
    post=extend_schema(
        tags=["webhooks"],
        operation_id="github_webhook",
        summary="GitHub webhook (pull requests, check re-runs, merge groups, installations)",
        description=(
            "Point a GitHub App's (or a repository's) webhook here with content type application/json and the "
            "secret set in RECHECK_GITHUB_WEBHOOK_SECRET. `pull_request` opened, synchronize and reopened of a "
            "tracked pull request pin the new head (role `head`) and queue its verification (202); `closed` "
            "records whether it was merged. `check_run` and `check_suite` `rerequested` (someone pressed "
            "\"Re-run\" on the Recheck check) verify that commit again; `merge_group` `checks_requested` "
            "verifies the merge queue's commit and reports on it; `installation` and "
            "`installation_repositories` keep the App's installation ids. Other actions and events are "
            "acknowledged and ignored (200); `ping` answers 200. A redelivery of the same X-GitHub-Delivery "
            "has no further effect. Unsigned or badly signed deliveries, and any delivery while no secret "
            "is configured, get 403 and change nothing."
        ),
        auth=[],
        parameters=[
            OpenApiParameter("X-Hub-Signature-256", OpenApiTypes.STR, OpenApiParameter.HEADER, required=True,
                             description="sha256=<HMAC-SHA256 of the raw body, hex>"),
            OpenApiParameter("X-GitHub-Event", OpenApiTypes.STR, OpenApiParameter.HEADER, required=True),
            OpenApiParameter("X-GitHub-Delivery", OpenApiTypes.STR, OpenApiParameter.HEADER, required=True),
        ],
        request={"application/json": OpenApiTypes.OBJECT},
        responses={
            200: OpenApiResponse(
                WebhookResponseSerializer, description="Acknowledged: ping, ignored, or a redelivery."
            ),
            202: OpenApiResponse(WebhookResponseSerializer, description="Head pinned and verification queued."),
            400: OpenApiResponse(ValidationErrorSerializer, description="Signed, but not a GitHub event delivery."),
            403: OpenApiResponse(ErrorSerializer, description="Missing or wrong signature, or no secret configured."),
        },
    )
)
class GitHubWebhook(APIView):
    authentication_classes = []
    permission_classes = [AllowAny]
    throttle_classes = []

    def post(self, request):
        return forge_webhook_answer(request, GITHUB)


@extend_schema_view(
    post=extend_schema(
        tags=["webhooks"],
        operation_id="gitlab_webhook",
        summary="GitLab webhook (merge request and push events)",
        description=(
            "Point a GitLab project's (or group's) webhook here with the secret token set in "
            "RECHECK_GITLAB_WEBHOOK_SECRET, for merge request events and push events. `Merge Request Hook` "
            "open, reopen and update with new commits of a tracked merge request pin its new head (role `head`) "
            "and queue its verification (202); merge and close record its state. `Push Hook` refreshes the "
            "project's mirror. Other events and actions are acknowledged and ignored (200). A delivery with an "
            "X-Gitlab-Event-UUID already handled has no further effect. No X-Gitlab-Token gets 401; a wrong one, "
            "or any delivery while no secret is configured, gets 403; neither changes anything."
        ),
        auth=[],
        parameters=[
            OpenApiParameter("X-Gitlab-Token", OpenApiTypes.STR, OpenApiParameter.HEADER, required=True,
                             description="The webhook's secret token."),
            OpenApiParameter("X-Gitlab-Event", OpenApiTypes.STR, OpenApiParameter.HEADER, required=True),
            OpenApiParameter("X-Gitlab-Event-UUID", OpenApiTypes.STR, OpenApiParameter.HEADER, required=True),
        ],
        request={"application/json": OpenApiTypes.OBJECT},
        responses={
            200: OpenApiResponse(WebhookResponseSerializer, description="Acknowledged: ignored, or a redelivery."),
            202: OpenApiResponse(WebhookResponseSerializer, description="Head pinned and verification queued."),
            400: OpenApiResponse(ValidationErrorSerializer, description="Not a GitLab event delivery."),
            401: OpenApiResponse(ErrorSerializer, description="No X-Gitlab-Token."),
            403: OpenApiResponse(ErrorSerializer, description="Wrong X-Gitlab-Token, or no secret configured."),
        },
    )
)
class GitLabWebhook(APIView):
    authentication_classes = []
    permission_classes = [AllowAny]
    throttle_classes = []

    def post(self, request):
        return forge_webhook_answer(request, GITLAB)
