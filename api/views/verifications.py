"""Verifications: what each finding's evidence says at each commit, with a result per evidence
item, the verification runs requested, with their progress, and requesting one for a pull request."""
from django.db.models import Prefetch
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import generics, status
from rest_framework.response import Response
from rest_framework.reverse import reverse

from access.permissions import Action
from api import docs
from api.filters import VerificationFilter, VerificationRunFilter
from api.lookups import pull_request_by_number
from api.permissions import object_action_check, repository_limit
from api.serializers.verifications import VerificationRunSerializer, VerificationSerializer
from api.serializers.writes import VerifyRequestSerializer, VerifyResponseSerializer
from api.views.reading import ReadMixin
from api.views.writing import ActionView
from findings.models import EvidenceResult, Verification, VerificationRun
from findings.services.runs import verification_run_request


def verifications_with_results():
    results = EvidenceResult.objects.select_related("evidence").order_by("evidence__position")
    return Verification.objects.select_related("finding", "commit").prefetch_related(
        Prefetch("results", queryset=results)
    )


@extend_schema(tags=["verifications"], responses={200: VerificationSerializer(many=True), **docs.LIST_ERRORS})
class VerificationList(ReadMixin, generics.ListAPIView):
    """What each finding's evidence says at each commit, with a result per evidence item."""

    serializer_class = VerificationSerializer
    filterset_class = VerificationFilter
    repository_field = "finding__pull_request__repository"
    ordering_fields = ["id", "checked_at", "verdict"]

    def get_queryset(self):
        return verifications_with_results().order_by("finding_id", "checked_at", "id")


@extend_schema(tags=["verifications"], responses={200: VerificationSerializer, **docs.DETAIL_ERRORS})
class VerificationDetail(ReadMixin, generics.RetrieveAPIView):
    """One finding's verdict at one commit, with a result per evidence item."""

    serializer_class = VerificationSerializer
    repository_field = "finding__pull_request__repository"

    def get_queryset(self):
        return verifications_with_results()


@extend_schema(tags=["verifications"], responses={200: VerificationRunSerializer(many=True), **docs.LIST_ERRORS})
class VerificationRunList(ReadMixin, generics.ListAPIView):
    """Requested verifications, newest first."""

    serializer_class = VerificationRunSerializer
    filterset_class = VerificationRunFilter
    ordering_fields = ["id", "created_at", "finished_at"]
    queryset = VerificationRun.objects.select_related(
        "pull_request__repository", "commit", "requested_by"
    ).order_by("-created_at", "-id")


@extend_schema(tags=["verifications"], responses={200: VerificationRunSerializer, **docs.DETAIL_ERRORS})
class VerificationRunDetail(ReadMixin, generics.RetrieveAPIView):
    """The status URL of a requested verification: status, done, total, percent and message."""

    serializer_class = VerificationRunSerializer
    queryset = VerificationRunList.queryset


@extend_schema_view(
    post=extend_schema(
        tags=["verifications"],
        operation_id="pull_request_verify",
        summary="Request a verification of a pull request",
        description=(
            "Queues a verification of the pull request at `commit` (or at every pinned commit) and answers "
            "at once; poll `status_url`. Needs the Reviewer role on the repository "
            "(or `findings.verify_pullrequest` instance-wide)."
        ),
        parameters=docs.PULL_REQUEST_PATH,
        request=VerifyRequestSerializer,
        responses={202: VerifyResponseSerializer, **docs.WRITE_ERRORS, 404: docs.NOT_FOUND},
    )
)
class PullRequestVerify(ActionView):
    required_action = Action.VERIFY
    audit_action = "verification.request"

    def post(self, request, owner: str, name: str, number: int):
        pull_request = pull_request_by_number(
            owner=owner, name=name, number=number, repository_ids=repository_limit(request)
        )
        object_action_check(request, self, pull_request.repository)
        body = VerifyRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        # The service writes the run and its commit in one transaction and enqueues the task when
        # it commits; no transaction here, or a refusal it records would roll back with the error.
        run = verification_run_request(
            pull_request=pull_request, commit_sha=body.validated_data["commit"], requested_by=request.user
        )
        run.refresh_from_db()
        status_url = reverse("api:run-detail", kwargs={"pk": run.pk}, request=request)
        return Response(
            VerifyResponseSerializer(
                {"run": run.pk, "task_id": run.task_id, "status": run.status, "status_url": status_url}
            ).data,
            status=status.HTTP_202_ACCEPTED,
            headers={"Location": status_url},
        )
