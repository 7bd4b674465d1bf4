"""Findings and their evidence: the list (filtered, ordered and searched, its count cached), one
finding with its write-up, evidence, tags and links, its status history, the findings related to it,
and the evidence items on their own; and what a reviewer does to a finding: mark it fixed, dismissed
or open, set its tags, link it to another finding or remove a link."""
from django.conf import settings
from django.db.models import Prefetch, Q
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import generics, status
from rest_framework.exceptions import NotFound
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from access.permissions import Action
from api import docs
from api.filters import EvidenceFilter, FindingFilter
from api.listcache import CachedListMixin, list_generation
from api.pagination import LongList
from api.permissions import (
    PUBLIC_ONLY,
    object_action_check,
    read_scope,
    request_reads_everything,
    request_repositories,
    token_repository_ids,
    visible_to,
)
from api.serializers.findings import FindingDetailSerializer, FindingEventSerializer, FindingSerializer
from api.serializers.related import FindingLinkSerializer, RelatedFindingSerializer, finding_link_data
from api.serializers.verifications import EvidenceSerializer
from api.serializers.writes import (
    LinkRequestSerializer,
    ResolveRequestSerializer,
    ResolveResponseSerializer,
    TagsRequestSerializer,
)
from api.revalidation import RevalidatedMixin
from api.views.reading import ReadMixin
from api.views.writing import ActionView
from findings.models import Evidence, Finding, FindingEvent, FindingLink
from reviews.selectors import pull_requests_version
from findings.search import explain_matches, parse_search
from findings.selectors.list_rows import ListIds, list_rows
from findings.selectors.related import finding_related
from findings.services.resolution import finding_resolve
from findings.state.listed_reads import listed_attach
from findings.services.tags_and_links import (
    finding_by_reference,
    finding_link_create,
    finding_link_delete,
    finding_tags_set,
)


FINDING_LIST_FIELDS = (
    "id", "pull_request", "number", "kind", "caught_by", "title", "summary", "path", "line", "status",
    "resolved_by", "resolved_at", "resolved_commit", "created_at", "updated_at",
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
    # Every write to findings (and to what their filters read) moves a pull request's generation:
    # the list's pages and counts are cached by the generations of the pull requests it may show.
    long_list = LongList(version=list_generation, annotations=FindingSerializer.LIST_ANNOTATIONS)

    def list_content(self, request, *args, **kwargs):
        # A page read as values and written out (no model objects, no fields' machinery), unless
        # searched: a searched page says why each row matched, from the search's own annotations.
        if self.paginator is None or request.query_params.get("q", "").strip():
            return super().list_content(request, *args, **kwargs)
        listed = self._unfiltered(request)
        if listed is None:
            listed = self.filter_queryset(self.get_queryset())
        ids = self.paginator.paginate_ids(listed, request, view=self)
        rows = list_rows(ids or [], read=listed.rows if isinstance(listed, ListIds) else None)
        serializer = self.get_serializer()
        data = self.get_paginated_response([]).data
        if self._compact_json(request):
            # The page around an empty list (its results last), the rows written into it.
            head = self.render_content(data)
            if head.endswith(b'"results":[]}'):
                # As DRF's renderer escapes them, for JavaScript.
                body = serializer.list_json(rows).replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
                return head[:-2] + body.encode() + b"]}"
        data["results"] = serializer.list_rows(rows)
        return self.render_content(data)

    def _compact_json(self, request) -> bool:
        """Whether the page is rendered as FindingSerializer.list_json writes its rows: by DRF's
        JSONRenderer, compact, not ASCII-only, not indented (as `Accept: ...; indent=4` asks)."""
        renderer = request.accepted_renderer
        return (
            type(renderer) is JSONRenderer and renderer.compact and not renderer.ensure_ascii
            and renderer.get_indent(request.accepted_media_type, {}) is None
        )

    def _unfiltered(self, request) -> ListIds | None:
        """For a page number of the list in its own order, filtered by nothing or by equalities
        alone (FindingFilter.equalities: its plain equality filters, each given once with a value
        its field takes as typed), asked by a caller who reads every repository or (anonymously,
        where the server allows it) the public ones: its ids read with SQL written out, what
        `filter_queryset` would have built. Else None: the filter set reads the request (and
        refuses there what it refuses)."""
        parameters = request.query_params
        if "ordering" in parameters or "cursor" in parameters or not parameters.get("page", "1").isdigit():
            return None
        filters = self.filterset_class.equalities(parameters)
        if filters is None:
            return None
        scope = read_scope(request)
        if scope is None:
            return ListIds(public_only=False, filters=filters)
        if scope is PUBLIC_ONLY and settings.RECHECK_PUBLIC_READ:
            return ListIds(public_only=True, filters=filters)
        return None

    def paginate_queryset(self, queryset):
        page = super().paginate_queryset(queryset)
        if page is not None:
            # Each row's verdict and flags from its PR's stored state: one read of the page's rows.
            page = listed_attach(page)
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
class FindingDetail(RevalidatedMixin, ReadMixin, generics.RetrieveAPIView):
    """A finding with its write-up and evidence."""

    serializer_class = FindingDetailSerializer

    def get_queryset(self):
        return findings_with_evidence(self.request)

    def revalidation_version(self) -> tuple | None:
        # Its own PR's rows, and through its links findings of any PR: every PR's generation. Read
        # within what the caller may read: another's finding is a 404, never a 304.
        pk = self.kwargs["pk"]
        if not visible_to(Finding.objects.filter(pk=pk), self.request, self.repository_field).exists():
            return None
        return ("finding", pk, pull_requests_version())


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


@extend_schema_view(
    post=extend_schema(
        tags=["findings"],
        operation_id="finding_resolve",
        summary="Mark a finding fixed, dismissed or open",
        description=(
            "The same change the site and the admin make, recorded in the finding's history with source `api`. "
            "Fixing needs the commit it was fixed in, which must resolve in the repository's mirror (an unknown "
            "SHA, an ambiguous one, whose `candidates` are listed, and a repository not fetched yet are refused "
            "on `commit`). Where the latest verification at that commit says the evidence still holds, the "
            "change is refused with `still_holds` (the commit and the verdict) unless `anyway` is true and a "
            "note says why. Dismissing needs a note. Needs the Maintainer role on the repository (or `findings.resolve_finding` instance-wide)."
        ),
        parameters=docs.ID_PATH,
        request=ResolveRequestSerializer,
        responses={200: ResolveResponseSerializer, **docs.WRITE_ERRORS, 404: docs.NOT_FOUND},
        examples=[
            OpenApiExample("Fixed", value={"status": "fixed", "commit": "3f2c9a1d", "note": "Tolerance back to 100."},
                           request_only=True),
            OpenApiExample("Fixed anyway", value={"status": "fixed", "commit": "3f2c9a1d", "anyway": True,
                                                  "note": "The flag stays, but nothing reads it any more."},
                           request_only=True),
            OpenApiExample("Dismissed", value={"status": "dismissed", "note": "Out of scope for this PR."},
                           request_only=True),
        ],
    )
)
class FindingResolve(ActionView):
    required_action = Action.RESOLVE
    audit_action = "finding.resolve"

    def post(self, request, pk: int):
        finding = _finding_for_action(request, self, pk)
        body = ResolveRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        event = finding_resolve(
            finding=finding,
            status=data["status"],
            actor=request.user,
            source=FindingEvent.Source.API,
            commit_sha=data["commit"] or "",
            note=data["note"],
            still_holds_confirmed=data["anyway"],
        )
        finding = _get_finding(request, pk)
        context = {"request": request}
        return Response(
            {
                "finding": FindingDetailSerializer(finding, context=context).data,
                "event": FindingEventSerializer(event, context=context).data,
            }
        )


def _get_finding(request, pk: int) -> Finding:
    return get_object_or_404(visible_to(findings_with_evidence(request), request, "pull_request__repository"), pk=pk)


def _finding_for_action(request, view, pk: int) -> Finding:
    """The finding a write names: a 404 unless the request may read it, then a 403 unless its user
    may do the view's action on its repository."""
    finding = _get_finding(request, pk)
    object_action_check(request, view, finding.pull_request.repository)
    return finding


@extend_schema_view(
    put=extend_schema(
        tags=["tags"],
        operation_id="finding_tags_set",
        summary="Set a finding's tags",
        description=(
            "Gives the finding exactly these tags (slugs: lower-case words joined by hyphens); a slug not "
            "seen before is created (slugs are shared; what a tag means is each repository's own). Audited. Needs the Reviewer role on the "
            "finding's repository (or `findings.change_finding` instance-wide)."
        ),
        parameters=docs.ID_PATH,
        request=TagsRequestSerializer,
        responses={200: FindingDetailSerializer, **docs.WRITE_ERRORS, 404: docs.NOT_FOUND},
        examples=[OpenApiExample("Two tags", value={"tags": ["silent-failure", "dependency"]}, request_only=True)],
    )
)
class FindingTags(ActionView):
    required_action = Action.WRITE
    audit_action = "finding.tags"

    def put(self, request, pk: int):
        finding = _finding_for_action(request, self, pk)
        body = TagsRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        finding_tags_set(finding=finding, slugs=body.validated_data["tags"], actor=request.user)
        return Response(FindingDetailSerializer(_get_finding(request, pk), context={"request": request}).data)


def _other_finding(request, value: str) -> Finding:
    """The finding a link names, by id or as `owner/name#4108/4`; a token limited to repositories
    reaches only theirs."""
    value = value.strip()
    if value.isdigit():
        return _get_finding(request, int(value))
    finding = finding_by_reference(value, repositories=request_repositories(request))
    allowed = token_repository_ids(request)
    if allowed is not None and finding.pull_request.repository_id not in allowed:
        raise NotFound(f"No finding {value} is recorded here.")
    return finding


@extend_schema_view(
    post=extend_schema(
        tags=["findings"],
        operation_id="finding_link_create",
        summary="Link a finding to another",
        description=(
            "Records that this finding is a duplicate of another, a follow-up of it, or has the same cause, in "
            "any pull request or repository. The link shows on both findings. Two findings are linked once. "
            "Needs the Reviewer role on this finding's repository (or `findings.change_finding` instance-wide); "
            "the other finding must be one you may read."
        ),
        parameters=docs.ID_PATH,
        request=LinkRequestSerializer,
        responses={201: FindingLinkSerializer, **docs.WRITE_ERRORS, 404: docs.NOT_FOUND},
        examples=[
            OpenApiExample("Duplicate", value={"kind": "duplicate_of", "finding": "acme/loader#4108/4"},
                           request_only=True)
        ],
    )
)
class FindingLinks(ActionView):
    required_action = Action.WRITE
    audit_action = "finding.link"

    def post(self, request, pk: int):
        finding = _finding_for_action(request, self, pk)
        body = LinkRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        link = finding_link_create(
            source=finding, target=_other_finding(request, data["finding"]), kind=data["kind"], actor=request.user,
            note=data["note"],
        )
        link = FindingLink.objects.select_related("target__pull_request__repository").get(pk=link.pk)
        return Response(
            FindingLinkSerializer(finding_link_data(link, finding), context={"request": request}).data,
            status=status.HTTP_201_CREATED,
        )


@extend_schema_view(
    delete=extend_schema(
        tags=["findings"],
        operation_id="finding_link_delete",
        summary="Remove a link between two findings",
        description="From either end. Needs the Reviewer role on the finding's repository (or "
        "`findings.change_finding` instance-wide).",
        parameters=docs.ID_PATH + [OpenApiParameter("link", OpenApiTypes.INT, OpenApiParameter.PATH)],
        responses={204: None, **docs.WRITE_ERRORS, 404: docs.NOT_FOUND},
    )
)
class FindingLinkDetail(ActionView):
    required_action = Action.WRITE
    audit_action = "finding.unlink"

    def delete(self, request, pk: int, link: int):
        finding = _finding_for_action(request, self, pk)
        found = get_object_or_404(FindingLink.objects.filter(Q(source=finding) | Q(target=finding)), pk=link)
        finding_link_delete(link=found, actor=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)
