"""Verifications: what each finding's evidence says at each commit, with a result per evidence
item, and the verification runs requested, with their progress."""
from django.db.models import Prefetch
from drf_spectacular.utils import extend_schema
from rest_framework import generics

from api import docs
from api.filters import VerificationFilter, VerificationRunFilter
from api.serializers.verifications import VerificationRunSerializer, VerificationSerializer
from api.views.reading import ReadMixin
from findings.models import EvidenceResult, Verification, VerificationRun


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
