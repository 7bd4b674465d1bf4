"""Pull requests: the list (every repository's or one repository's) with how many blockers are
still open, and one pull request, by id or as on the forge (owner/name and number), with its pinned
commits."""
from django.db.models import Count, Prefetch, Q
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import generics

from api import docs
from api.filters import PullRequestFilter
from api.permissions import visible_to
from api.serializers.pull_requests import PullRequestDetailSerializer, PullRequestSerializer
from api.revalidation import RevalidatedMixin
from api.views.reading import ReadMixin
from findings.models import Finding
from findings.selectors.findings import pins_with_verified_flag
from findings.state.stored import pull_request_states
from reviews.models import PullRequest, Repository


def pull_requests_with_counts():
    # Annotated to order by open blockers; what a row shows comes from the PR's stored state.
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


@extend_schema(tags=["pull requests"], responses={200: PullRequestSerializer(many=True), **docs.LIST_ERRORS})
class PullRequestList(ReadMixin, generics.ListAPIView):
    """Reviewed pull requests, with how many blockers are still open."""

    serializer_class = PullRequestSerializer
    filterset_class = PullRequestFilter
    ordering_fields = ["number", "created_at", "updated_at", "open_blockers"]
    repository_field = "repository"

    def get_queryset(self):
        return pull_requests_with_counts().order_by("repository__slug", "-number")

    def paginate_queryset(self, queryset):
        page = super().paginate_queryset(queryset)
        if page is not None:
            # Each row's counts from its stored state: one read for the page.
            states = pull_request_states(pull_request.pk for pull_request in page)
            for pull_request in page:
                pull_request.review_state = states.get(pull_request.pk)
        return page


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
class PullRequestDetail(RevalidatedMixin, ReadMixin, generics.RetrieveAPIView):
    """A pull request with its pinned commits and the links to its findings, gate and verify action."""

    serializer_class = PullRequestDetailSerializer
    repository_field = "repository"

    def get_queryset(self):
        return pull_requests_with_pins()

    def revalidation_pull_request_id(self) -> int:
        return self.kwargs["pk"]

    def revalidation_version(self) -> tuple | None:
        # The answer shows the PR's stored state and its rows: its generation says when they changed.
        pk = self.revalidation_pull_request_id()
        # Read within what the caller may read: another's PR is a 404, never a 304.
        generation = visible_to(PullRequest.objects.filter(pk=pk), self.request, self.repository_field) \
            .values_list("generation", flat=True).first()
        return None if generation is None else ("pull_request", pk, generation)


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

    def revalidation_pull_request_id(self) -> int:
        return self.pull_request(**self.kwargs).pk
