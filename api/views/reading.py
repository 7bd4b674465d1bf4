"""What every read endpoint starts from: who may read (anyone when the server allows public reads,
else a signed-in user; a token within its scope and its repositories), how a list is paged,
filtered and ordered, and how a pull request is addressed as on the forge. Querysets fetch what the
serializers show in a fixed number of queries, whatever the page size."""
from rest_framework.filters import OrderingFilter

from api.filters import GivenFiltersBackend
from api.lookups import pull_request_by_number
from api.pagination import RecheckPagination
from api.permissions import PublicReadOrAuthenticated, TokenScope, repository_limit, visible_to
from reviews.models import PullRequest


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
