"""Read endpoints: repositories, pull requests, findings, evidence, verifications, status history,
verification runs, and the merge gate. Querysets fetch what the serializers show in a fixed number
of queries, whatever the page size."""
import json

from django.core.cache import cache
from django.db.models import Count, Prefetch, Q
from django.http import HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404
from django.urls import Resolver404, resolve
from django.views.decorators.csrf import csrf_exempt
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import generics
from rest_framework.filters import OrderingFilter
from rest_framework.response import Response
from rest_framework.reverse import reverse
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import JSONRenderer
from rest_framework.views import APIView

from api import docs
from findings.exchange import EXPORT_FORMATS, review_export
from findings.exchange.schema import BundleSerializer
from api.filters import (
    EvidenceFilter,
    FindingFilter,
    GivenFiltersBackend,
    PullRequestFilter,
    VerificationFilter,
    VerificationRunFilter,
)
from findings.selectors.figures import file_findings, repository_figures
from findings.selectors.related import finding_related
from findings.search import explain_matches, parse_search
from findings.selectors.gate import (
    GATE_CACHE_SECONDS,
    MergeGate,
    gate_cache_key,
    pull_request_gate,
    pull_request_generation,
)
from api.listcache import CachedListMixin
from api.lookups import pull_request_by_number, recorded_commit
from api.pagination import LongList, RecheckPagination
from api.permissions import (
    PublicReadOrAuthenticated,
    TokenScope,
    read_scope,
    repository_limit,
    request_reads_everything,
    request_repositories,
    token_repository_ids,
    visible_to,
)
from api.serializers.errors import ErrorSerializer
from api.serializers.findings import FindingDetailSerializer, FindingEventSerializer, FindingSerializer, TagSerializer
from api.serializers.gate import GateSerializer
from api.serializers.pull_requests import PullRequestDetailSerializer, PullRequestSerializer
from api.serializers.related import RelatedFindingSerializer
from api.serializers.repositories import FileFindingsSerializer, RepositoryFiguresSerializer, RepositorySerializer
from api.serializers.verifications import EvidenceSerializer, VerificationRunSerializer, VerificationSerializer
from findings.models import (
    Evidence,
    EvidenceResult,
    Finding,
    FindingEvent,
    FindingLink,
    Tag,
    Verification,
    VerificationRun,
)
from core.errors import RecheckError
from findings.selectors.findings import pins_with_verified_flag, tags_with_counts
from reviews.models import PullRequest, Repository
from reviews.selectors import pull_request_latest_head, pull_requests_version


class StableOrderingFilter(OrderingFilter):
    """`?ordering=` with the id as a last key, so pages never repeat or skip rows that tie."""

    ordering_description = "Sort keys, comma-separated; a leading - reverses (e.g. -updated_at). Ties go by id."

    def get_ordering(self, request, queryset, view):
        ordering = list(super().get_ordering(request, queryset, view) or [])
        if ordering and not {"id", "-id", "pk", "-pk"} & set(ordering):
            ordering.append("id")
        return ordering


class ReadMixin:
    permission_classes = [PublicReadOrAuthenticated, TokenScope]
    pagination_class = RecheckPagination
    filter_backends = [GivenFiltersBackend, StableOrderingFilter]
    # The path from the view's model to its repository, for tokens limited to repositories.
    repository_field = "pull_request__repository"

    def filter_queryset(self, queryset):
        # get_object() filters through here too, so a detail outside the token's repositories is a 404.
        return visible_to(super().filter_queryset(queryset), self.request, self.repository_field)

    def pull_request(self, *, owner: str, name: str, number: int) -> PullRequest:
        return pull_request_by_number(
            owner=owner, name=name, number=number, repository_ids=repository_limit(self.request)
        )


def pull_requests_with_counts():
    return PullRequest.objects.select_related("repository").annotate(
        open_blockers=Count(
            "findings", filter=Q(findings__kind=Finding.Kind.BLOCKER, findings__status=Finding.Status.OPEN)
        ),
        findings_count=Count("findings"),
    )


def pull_requests_with_pins():
    return (
        pull_requests_with_counts()
        .select_related("attested_commit")
        .prefetch_related(Prefetch("pins", queryset=pins_with_verified_flag()))
    )


# --- Repositories and pull requests ---------------------------------------------------------------


@extend_schema(tags=["repositories"], responses={200: RepositorySerializer(many=True), **docs.LIST_ERRORS})
class RepositoryList(ReadMixin, generics.ListAPIView):
    """Repositories whose pull requests were reviewed."""

    queryset = Repository.objects.order_by("slug")
    serializer_class = RepositorySerializer
    ordering_fields = ["slug", "created_at"]
    repository_field = "pk"


@extend_schema(
    tags=["repositories"], parameters=docs.REPOSITORY_PATH, responses={200: RepositorySerializer, **docs.DETAIL_ERRORS}
)
class RepositoryDetail(ReadMixin, generics.RetrieveAPIView):
    """A repository, addressed as on the forge: owner/name."""

    serializer_class = RepositorySerializer
    queryset = Repository.objects.all()
    repository_field = "pk"

    def get_object(self):
        slug = f"{self.kwargs['owner']}/{self.kwargs['name']}"
        return get_object_or_404(self.filter_queryset(self.get_queryset()), slug=slug)


@extend_schema(
    tags=["repositories"],
    parameters=docs.REPOSITORY_PATH,
    responses={200: RepositoryFiguresSerializer, **docs.DETAIL_ERRORS},
)
class RepositoryFigures(ReadMixin, APIView):
    """What the repository's page shows, across its pull requests: its open blockers by age, how
    long fixes took, how findings ended, the files with the most findings and the tags that recur."""

    def get(self, request, owner: str, name: str):
        repository = get_object_or_404(visible_to(Repository.objects.all(), request, "pk"), slug=f"{owner}/{name}")
        return Response(RepositoryFiguresSerializer(repository_figures(repository), context={"request": request}).data)


@extend_schema(
    tags=["repositories"],
    parameters=docs.REPOSITORY_PATH
    + [OpenApiParameter("path", OpenApiTypes.STR, OpenApiParameter.PATH, description="A file path in the repository.")],
    responses={200: FileFindingsSerializer, **docs.DETAIL_ERRORS},
)
class RepositoryFile(ReadMixin, APIView):
    """Every finding ever recorded on a file, across pull requests, including under the names
    verification saw it have before or after a rename."""

    def get(self, request, owner: str, name: str, path: str):
        repository = get_object_or_404(visible_to(Repository.objects.all(), request, "pk"), slug=f"{owner}/{name}")
        return Response(FileFindingsSerializer(file_findings(repository, path), context={"request": request}).data)


@extend_schema(tags=["pull requests"], responses={200: PullRequestSerializer(many=True), **docs.LIST_ERRORS})
class PullRequestList(ReadMixin, generics.ListAPIView):
    """Reviewed pull requests, with how many blockers are still open."""

    serializer_class = PullRequestSerializer
    filterset_class = PullRequestFilter
    ordering_fields = ["number", "created_at", "updated_at", "open_blockers"]
    repository_field = "repository"

    def get_queryset(self):
        return pull_requests_with_counts().order_by("repository__slug", "-number")


@extend_schema(
    tags=["pull requests"],
    parameters=docs.REPOSITORY_PATH,
    responses={200: PullRequestSerializer(many=True), **docs.LIST_ERRORS},
)
class RepositoryPullRequestList(PullRequestList):
    """The reviewed pull requests of one repository."""

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):  # the schema generator has no URL kwargs
            return PullRequest.objects.none()
        repositories = visible_to(Repository.objects.all(), self.request, "pk")
        repository = get_object_or_404(repositories, slug=f"{self.kwargs['owner']}/{self.kwargs['name']}")
        return super().get_queryset().filter(repository=repository)


@extend_schema(tags=["pull requests"], responses={200: PullRequestDetailSerializer, **docs.DETAIL_ERRORS})
class PullRequestDetail(ReadMixin, generics.RetrieveAPIView):
    """A pull request with its pinned commits and the links to its findings, gate and verify action."""

    serializer_class = PullRequestDetailSerializer
    repository_field = "repository"

    def get_queryset(self):
        return pull_requests_with_pins()


@extend_schema(
    tags=["pull requests"],
    parameters=docs.PULL_REQUEST_PATH,
    responses={200: PullRequestDetailSerializer, **docs.DETAIL_ERRORS},
)
class PullRequestByNumber(PullRequestDetail):
    """The same pull request, addressed as on the forge: owner/name and number."""

    def get_object(self):
        pull_request = self.pull_request(**self.kwargs)
        return get_object_or_404(self.filter_queryset(self.get_queryset()), pk=pull_request.pk)


# --- Findings and their evidence, verifications and history ---------------------------------------


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


# --- Tags ----------------------------------------------------------------------------------------


class TagReadMixin(ReadMixin):
    """Tags are shared by every repository; a limited token sees those its repositories' findings
    carry, counted over its own findings."""

    def get_queryset(self):
        if request_reads_everything(self.request):
            return tags_with_counts()
        return tags_with_counts(request_repositories(self.request))

    def filter_queryset(self, queryset):
        return super(ReadMixin, self).filter_queryset(queryset)


@extend_schema(tags=["tags"], responses={200: TagSerializer(many=True), **docs.LIST_ERRORS})
class TagList(TagReadMixin, generics.ListAPIView):
    """Tags: kinds of mistake, shared by every repository, with how many findings carry each."""

    serializer_class = TagSerializer
    ordering_fields = ["slug", "findings_count"]
    queryset = Tag.objects.none()  # for the schema: get_queryset answers


@extend_schema(
    tags=["tags"],
    parameters=[OpenApiParameter("slug", OpenApiTypes.STR, OpenApiParameter.PATH, description="The tag's slug.")],
    responses={200: TagSerializer, **docs.DETAIL_ERRORS},
)
class TagDetail(TagReadMixin, generics.RetrieveAPIView):
    """A tag: its description, and where to list its findings (newest first)."""

    serializer_class = TagSerializer
    queryset = Tag.objects.none()  # for the schema: get_queryset answers
    lookup_field = "slug"


# --- The merge gate -------------------------------------------------------------------------------

_BLOCKED_EXAMPLE = {
    "pull_request": "acme/loader#4108",
    "commit": "3f2c9a1d0b8e7f6a5c4d3e2f1a0b9c8d7e6f5a4b",
    "mergeable": False,
    "verified": True,
    "reason": "2 open blocker(s) at 3f2c9a1d (1 look likely fixed: a human marks them fixed).",
    "open_blockers": [
        {"id": 17, "number": 1, "title": "Tolerance lowered to 10", "verdict": "present",
         "url": "https://recheck.example.com/acme/loader/pull/4108/findings/1/"},
        {"id": 18, "number": 3, "title": "Cache key ignores the dtype", "verdict": "likely_fixed",
         "url": "https://recheck.example.com/acme/loader/pull/4108/findings/3/"},
    ],
    "possibly_regressed": [],
    "how_to_verify": None,
    "verification_run": None,
}
_UNVERIFIED_EXAMPLE = {
    **_BLOCKED_EXAMPLE,
    "verified": False,
    "reason": "2 open blocker(s); 2 not yet verified at 3f2c9a1d: request a verification (how_to_verify).",
    "open_blockers": [{**entry, "verdict": None} for entry in _BLOCKED_EXAMPLE["open_blockers"]],
    "how_to_verify": 'POST https://recheck.example.com/api/repos/acme/loader/pulls/4108/verify '
    '{"commit": "3f2c9a1d0b8e7f6a5c4d3e2f1a0b9c8d7e6f5a4b"}',
}
_MERGEABLE_EXAMPLE = {
    **_BLOCKED_EXAMPLE,
    "mergeable": True,
    "reason": "No open blocker at 3f2c9a1d.",
    "open_blockers": [],
}


@extend_schema_view(
    get=extend_schema(
        tags=["merge gate"],
        operation_id="pull_request_gate",
        summary="May this pull request merge at this commit?",
        description=(
            "`mergeable` is true when the commit is verified and no blocker is open. A blocker that "
            "verification finds `likely_fixed` stays open (and listed, with its verdict) until a human "
            "marks it fixed. An unverified commit gives `verified: false`, `mergeable: false` and "
            "`how_to_verify`. Without `commit`, the latest pinned head is used.\n\n"
            "In CI: `curl -fsS -H \"Authorization: Token $RECHECK_TOKEN\" "
            "\"$RECHECK/api/repos/OWNER/NAME/pulls/N/gate?commit=$SHA\" | jq -e .mergeable`"
        ),
        parameters=docs.PULL_REQUEST_PATH
        + [
            OpenApiParameter(
                "commit", OpenApiTypes.STR, OpenApiParameter.QUERY,
                description="Full or abbreviated SHA (7-40 hex digits). Default: the latest pinned head.",
            )
        ],
        responses={
            200: GateSerializer,
            400: OpenApiResponse(
                ErrorSerializer, description="Unknown, ambiguous or malformed commit, or no pinned head to default to."
            ),
            **docs.DETAIL_ERRORS,
        },
        examples=[
            OpenApiExample("Open blockers", value=_BLOCKED_EXAMPLE, response_only=True),
            OpenApiExample("Not yet verified", value=_UNVERIFIED_EXAMPLE, response_only=True),
            OpenApiExample("Mergeable", value=_MERGEABLE_EXAMPLE, response_only=True),
            OpenApiExample(
                "Ambiguous commit", status_codes=["400"], response_only=True,
                value={
                    "detail": "Commit 3f2c9a1 of acme/loader is ambiguous: it could be 3f2c9a1d…, 3f2c9a1e…. "
                    "Give more digits."
                },
            ),
        ],
    )
)
class PullRequestGate(ReadMixin, APIView):
    def get(self, request, owner: str, name: str, number: int):
        sha = request.query_params.get("commit", "").strip().lower()
        # Cached by the PR's generation, which every change to what the gate reads moves forward
        # (findings.receivers): a cached answer is never one a write has made stale. The generation
        # is read before the answer is built, so a write made meanwhile moves past the key.
        found = pull_request_generation(slug=f"{owner}/{name}", number=number, repositories=read_scope(request))
        key = found and gate_cache_key(
            pull_request_id=found[0], generation=found[1], sha=sha, origin=request.build_absolute_uri("/")
        )
        content = cache.get(key) if key else None
        if content is None:
            gate = self._gate(owner=owner, name=name, number=number, sha=sha)
            # Built as plain data: a pull request with thousands of open blockers would spend most of
            # its time in serializer fields. GateSerializer describes the shape in the schema.
            answer = self._present(gate, self._verify_url(owner, name, number))
            # Kept as the JSON it is sent as, so a cached answer is neither unpickled nor encoded again.
            content = JSONRenderer().render(answer)
            # Answers with a run under way are not cached, since they report its progress.
            if key and gate.active_run is None:
                cache.set(key, content, GATE_CACHE_SECONDS)
        if request.accepted_renderer.format == "json":
            return HttpResponse(content, content_type=JSONRenderer.media_type)
        return Response(json.loads(content))  # the browsable API

    def _verify_url(self, owner: str, name: str, number: int) -> str:
        return reverse(
            "api:pull-request-verify", kwargs={"owner": owner, "name": name, "number": number}, request=self.request
        )

    def _gate(self, *, owner: str, name: str, number: int, sha: str) -> MergeGate:
        pull_request = self.pull_request(owner=owner, name=name, number=number)
        if sha:
            commit = recorded_commit(
                repository=pull_request.repository,
                sha=sha,
                hint=f'Request its verification first: POST {self._verify_url(owner, name, number)} '
                f'{{"commit": "{sha}"}}',
            )
        else:
            commit = pull_request_latest_head(pull_request)
            if commit is None:
                raise RecheckError(
                    f"{pull_request.reference} has no pinned head commit: pass ?commit=<sha>, or let the GitHub "
                    "webhook pin each push."
                )
        return pull_request_gate(pull_request=pull_request, commit=commit)

    def _present(self, gate: MergeGate, verify_url: str) -> dict:
        def entry(item):
            finding = item.finding
            url = self.request.build_absolute_uri(finding.get_absolute_url())
            return {
                "id": finding.pk, "number": finding.number, "title": finding.title, "verdict": item.verdict, "url": url
            }

        run = gate.active_run
        return {
            "pull_request": gate.pull_request.reference,
            "commit": gate.commit.sha,
            "mergeable": gate.mergeable,
            "verified": gate.verified,
            "reason": gate.reason,
            "open_blockers": [entry(item) for item in gate.open_blockers],
            "possibly_regressed": [entry(item) for item in gate.possibly_regressed],
            "how_to_verify": None if gate.verified else f'POST {verify_url} {{"commit": "{gate.commit.sha}"}}',
            "verification_run": {
                "id": run.pk,
                "status": run.status,
                "status_url": reverse("api:run-detail", kwargs={"pk": run.pk}, request=self.request),
            }
            if run
            else None,
        }


# --- Navigation -----------------------------------------------------------------------------------


@extend_schema(exclude=True)
class ApiRoot(ReadMixin, APIView):
    """Where to start: the collections, the schema and its documentation."""

    def get(self, request):
        names = {
            "repositories": "api:repository-list",
            "pull_requests": "api:pull-request-list",
            "findings": "api:finding-list",
            "evidence": "api:evidence-list",
            "verifications": "api:verification-list",
            "runs": "api:run-list",
            "audit": "api:audit-log",
            "tags": "api:tag-list",
            "schema": "api:schema",
            "docs": "api:docs",
            "redoc": "api:redoc",
        }
        return Response({key: reverse(name, request=request) for key, name in names.items()})


# It changes nothing, so it needs no CSRF token: a DELETE to a URL that matches no endpoint gets
# this JSON 404 rather than the CSRF middleware's HTML 403.
@csrf_exempt
def api_not_found(request, path: str = ""):
    """A JSON 404 for URLs under /api/ that match no endpoint, pointing at the one meant when only a
    trailing slash differs (a redirect would turn a POST into a GET)."""
    detail = f"No API endpoint at {request.path}: see {reverse('api:docs', request=request)}."
    alternative = request.path[:-1] if request.path.endswith("/") else request.path + "/"
    try:
        if resolve(alternative).func is not api_not_found:
            detail = f"No API endpoint at {request.path}: did you mean {alternative}?"
    except Resolver404:
        pass
    return JsonResponse({"detail": detail}, status=404)


# --- Export ---------------------------------------------------------------------------------------


class _ExportNegotiation(DefaultContentNegotiation):
    """`format` names the export format here, not one of DRF's renderers; errors are JSON."""

    def select_renderer(self, request, renderers, format_suffix=None):
        return renderers[0], renderers[0].media_type


@extend_schema(
    tags=["pull requests"],
    summary="Export a pull request's review",
    description=(
        "The review as a bundle (the import format, YAML), as SARIF 2.1.0 (one result per open finding, "
        "located at the latest verified commit) or as Markdown to paste into a PR comment."
    ),
    parameters=docs.PULL_REQUEST_PATH
    + [
        OpenApiParameter(
            "format", OpenApiTypes.STR, enum=list(EXPORT_FORMATS), default="bundle", description="Export format."
        )
    ],
    responses={
        (200, "application/yaml"): OpenApiResponse(BundleSerializer, description="A review bundle, in YAML."),
        (200, "application/sarif+json"): OpenApiResponse(OpenApiTypes.OBJECT, description="A SARIF 2.1.0 log."),
        (200, "text/markdown"): OpenApiResponse(OpenApiTypes.STR, description="A Markdown summary."),
        **docs.DETAIL_ERRORS,
        400: docs.BAD_REQUEST,
    },
)
class PullRequestExport(ReadMixin, APIView):
    content_negotiation_class = _ExportNegotiation

    def get(self, request, owner: str, name: str, number: int):
        pull_request = self.pull_request(owner=owner, name=name, number=number)
        result = review_export(
            pull_request=pull_request, format=request.query_params.get("format", "bundle"), reader=request.user
        )
        response = HttpResponse(result.content, content_type=result.content_type)
        response["Content-Disposition"] = f'inline; filename="{result.filename}"'
        return response
