"""The GitHub webhook endpoint. GitHub proves who it is with an HMAC signature of the raw body, not
with a session or a token, so the view has no authentication (and so no CSRF check, which only
session authentication applies) and refuses anything unsigned. The delivery only records and
enqueues: the verification is queued on commit, and what to tell GitHub is written to the outbox,
which a sender sends later (never this request), so GitHub gets its answer well within its
ten-second timeout whatever GitHub's API is doing."""
from django.conf import settings
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import status
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.reverse import reverse
from rest_framework.views import APIView

from api.serializers.errors import ErrorSerializer, ValidationErrorSerializer
from api.serializers.writes import WebhookResponseSerializer
from forge.deliveries import github_delivery_handle, github_payload_parse, github_signature_is_valid

MAX_DELIVERY_ID_LENGTH = 100


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
        secret = settings.RECHECK_GITHUB_WEBHOOK_SECRET
        if not secret:
            raise PermissionDenied(
                "The GitHub webhook is not configured on this server: set RECHECK_GITHUB_WEBHOOK_SECRET to the "
                "secret entered on GitHub."
            )
        # The raw bytes, as GitHub signed them: never the parsed and re-serialised data.
        body = request.body
        if not github_signature_is_valid(
            secret=secret, body=body, signature=request.headers.get("X-Hub-Signature-256")
        ):
            raise PermissionDenied(
                "Missing or wrong X-Hub-Signature-256: the webhook's secret on GitHub must equal "
                "RECHECK_GITHUB_WEBHOOK_SECRET."
            )
        delivery_id = request.headers.get("X-GitHub-Delivery", "").strip()
        if not delivery_id or len(delivery_id) > MAX_DELIVERY_ID_LENGTH:
            raise ValidationError({"X-GitHub-Delivery": "GitHub sends a delivery id in this header; it is missing."})
        payload = github_payload_parse(body, request.content_type or "")
        outcome = github_delivery_handle(
            delivery_id=delivery_id, event=request.headers.get("X-GitHub-Event", "").strip(), payload=payload
        )
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
