"""Findings and their evidence: the list (filtered, ordered and searched, its count cached), one
finding with its write-up, evidence, tags and links, its status history, the findings related to it,
and the evidence items on their own."""
from django.db.models import Prefetch
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import generics
from rest_framework.response import Response
from rest_framework.views import APIView

from api import docs
from api.filters import EvidenceFilter, FindingFilter
from api.listcache import CachedListMixin
from api.pagination import LongList
from api.permissions import request_reads_everything, request_repositories, token_repository_ids, visible_to
from api.serializers.findings import FindingDetailSerializer, FindingEventSerializer, FindingSerializer
from api.serializers.related import RelatedFindingSerializer
from api.serializers.verifications import EvidenceSerializer
from api.views.reading import ReadMixin
from findings.models import Evidence, Finding, FindingEvent, FindingLink
from findings.search import explain_matches, parse_search
from findings.selectors.related import finding_related
from reviews.selectors import pull_requests_version


FINDING_LIST_FIELDS = (
    "id", "pull_request", "number", "kind", "caught_by", "title", "summary", "path", "line", "status",
    "possibly_regressed", "resolved_by", "resolved_at", "resolved_commit", "created_at", "updated_at",
)


@extend_schema(tags=["findings"], responses={200: FindingSerializer(many=True), **docs.LIST_ERRORS})
class FindingList(CachedListMixin, ReadMixin, generics.ListAPIView):
    """Findings, filtered and ordered. `?verdict=present&commit=<sha>` lists the findings whose
    evidence still holds at a commit."""

    serializer_class = FindingSerializer
    filterset_class = FindingFilter
    ordering_fields = ["id", "number", "kind", "status", "created_at", "updated_at", "resolved_at"]
    # The write-up is on the detail page only, and of the related rows only what a row shows, as
    # values: leaving out the long texts keeps a page of 50 light.
    queryset = Finding.objects.only(*FINDING_LIST_FIELDS).order_by("pull_request_id", "number")
    # Every write to findings (and to what their filters read) moves a pull request's generation.
    long_list = LongList(version=pull_requests_version, annotations=FindingSerializer.LIST_ANNOTATIONS)

    def paginate_queryset(self, queryset):
        page = super().paginate_queryset(queryset)
        text = self.request.query_params.get("q", "").strip()
        if page is not None and text:
            # The filter has already refused a query that cannot be parsed.
            page = explain_matches(page, parse_search(text))
        return page


def findings_with_evidence(request):
    """What FindingDetailSerializer shows, in a fixed number of queries: the finding with its
    evidence, its tags and its links from either end — those whose other end the request may
    read (a link to a hidden repository's finding is not shown)."""
    links_out = FindingLink.objects.select_related("target__pull_request__repository")
    links_in = FindingLink.objects.select_related("source__pull_request__repository")
    if not request_reads_everything(request):
        links_out = links_out.filter(target__pull_request__repository__in=request_repositories(request))
        links_in = links_in.filter(source__pull_request__repository__in=request_repositories(request))
    return Finding.objects.with_evidence().prefetch_related(
        "tags", Prefetch("links_out", queryset=links_out), Prefetch("links_in", queryset=links_in),
    )


@extend_schema(tags=["findings"], responses={200: FindingDetailSerializer, **docs.DETAIL_ERRORS})
class FindingDetail(ReadMixin, generics.RetrieveAPIView):
    """A finding with its write-up and evidence."""

    serializer_class = FindingDetailSerializer

    def get_queryset(self):
        return findings_with_evidence(self.request)


@extend_schema(tags=["findings"], responses={200: FindingEventSerializer(many=True), **docs.DETAIL_ERRORS})
class FindingHistory(ReadMixin, generics.ListAPIView):
    """Every status change of a finding, oldest first: who, when, at which commit, why, and from where."""

    serializer_class = FindingEventSerializer
    repository_field = "finding__pull_request__repository"
    pagination_class = None
    filter_backends = []

    def get_queryset(self):
        findings = visible_to(Finding.objects.all(), self.request, "pull_request__repository")
        finding = get_object_or_404(findings, pk=self.kwargs["pk"])
        return FindingEvent.objects.filter(finding=finding).select_related("actor", "commit").order_by("at", "id")


@extend_schema(
    tags=["findings"],
    parameters=docs.ID_PATH,
    responses={200: RelatedFindingSerializer(many=True), **docs.DETAIL_ERRORS},
)
class FindingRelated(ReadMixin, APIView):
    """What the finding's page lists as related: every finding linked to it (either way) first,
    then up to five in all from other pull requests, on the same file (under any of its names),
    sharing tags, or with a similar title; each says why."""

    queryset = Finding.objects.none()  # for the schema: the path's id is a finding's
    pagination_class = None
    filter_backends = []

    def get(self, request, pk: int):
        findings = Finding.objects.select_related("pull_request__repository").prefetch_related("tags")
        finding = get_object_or_404(visible_to(findings, request, "pull_request__repository"), pk=pk)
        allowed = token_repository_ids(request)
        # No card of a finding the user may not read, nor, for a token limited to repositories, of another's.
        related = [
            item for item in finding_related(finding, reader=request.user)
            if allowed is None or item.finding.pull_request.repository_id in allowed
        ]
        return Response(RelatedFindingSerializer(related, many=True, context={"request": request}).data)


@extend_schema(tags=["findings"], responses={200: EvidenceSerializer(many=True), **docs.LIST_ERRORS})
class EvidenceList(ReadMixin, generics.ListAPIView):
    """Evidence items: what each finding points at, and the commit it was recorded at."""

    serializer_class = EvidenceSerializer
    filterset_class = EvidenceFilter
    repository_field = "finding__pull_request__repository"
    ordering_fields = ["id", "position"]
    queryset = Evidence.objects.select_related(
        "commit", "submodule_repository", "finding__pull_request__repository"
    ).order_by(
        "finding_id", "position"
    )


@extend_schema(tags=["findings"], responses={200: EvidenceSerializer, **docs.DETAIL_ERRORS})
class EvidenceDetail(ReadMixin, generics.RetrieveAPIView):
    """One evidence item, with its permalink on the forge where one can be built."""

    serializer_class = EvidenceSerializer
    repository_field = "finding__pull_request__repository"
    queryset = Evidence.objects.select_related("commit", "submodule_repository", "finding__pull_request__repository")
