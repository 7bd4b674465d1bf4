"""Whole pages of a long list, cached as the JSON they are sent as.

The tools that read the findings list (CI jobs, merge bots, dashboards) ask the same questions
again and again between two writes. A page is cached under everything its bytes depend on:

- the URL as asked (path and query string, every value as typed, so a filter, an ordering or a
  page number is a page of its own), for the requests `worth_caching`: those asked again;
- the site the page's links point at, and the time zone its dates are written in;
- what the caller may read (`read_scope_key`): a page is only ever served to a caller who may read
  exactly what the caller it was built for could;
- the generation of the data it reads (`list_generation`), which every write a page can show
  moves forward (`findings.receivers` move the generation of the pull request written to), read
  before the page is built so that a write made while it is built moves past its key: for a list
  filtered to one pull request, that pull request's generation alone, so a write to another PR
  leaves its pages cached; for a list filtered to a repository, its pull requests' generations;
  for any other list, which may show a finding of any pull request, those of every pull request.

So a cached page is never one a write, or a change of someone's access, has made stale; nothing
needs to be deleted when data changes, and an unused page simply expires."""
import hashlib

from django.core.cache import cache
from django.db import connection
from django.http import HttpResponse
from django.utils import timezone

from api.filters import FindingFilter
from api.permissions import PUBLIC_ONLY, read_scope
from reviews.models import PullRequest, Repository
from reviews.selectors import pull_requests_version

# A bound on how long a page nobody asks for again is kept; staleness is ruled out by the version
# in the key, not by this.
LIST_CACHE_SECONDS = 600
# Only the first pages of a question are asked again (a CI job, a merge bot, a dashboard); a walk
# through deep pages or along a cursor goes one way, and caching it would only fill the cache.
LIST_CACHE_MAX_PAGE = 10
# Besides the filters: what a list's URL may carry and still be cached.
_LIST_PARAMETERS = {"ordering", "page", "page_size", "cursor", "format"}


# The filters that can narrow a list to one pull request or one repository.
_NARROWING = ("pull_request", "pull_request_number", "repository")


def list_generation(request) -> tuple:
    """The generation of what a findings list reads, as a cache key part: one indexed read.

    - `pull_request=<id>`, or `repository` with `pull_request_number`: the list shows findings of
      that pull request only (whatever else it is filtered by), so its generation says when it
      changed; a write to another pull request does not touch it. A pull request that does not
      exist (yet) reads as None, and one made later has a generation of its own.
    - `repository` alone: its pull requests' count, generations and newest id.
    - anything else may show a finding of any pull request: every pull request's count,
      generations and newest id (`reviews.selectors.pull_requests_version`).
    Each value is read as FindingFilter reads it (`equality_values`: given once, as its field
    takes it as typed); one read any other way (padded, repeated, refused) keys nothing, and the
    list falls back on a wider version. Written out in SQL: it is read on every list request."""
    values = FindingFilter.equality_values(request.query_params, _NARROWING)
    pull_requests = connection.ops.quote_name(PullRequest._meta.db_table)
    repositories = connection.ops.quote_name(Repository._meta.db_table)
    pull_request, number, slug = values.get("pull_request"), values.get("pull_request_number"), \
        values.get("repository")
    with connection.cursor() as cursor:
        if pull_request is not None:
            cursor.execute(f'SELECT "generation" FROM {pull_requests} WHERE "id" = %s', [pull_request])
            return ("pull_request", pull_request, *(cursor.fetchone() or (None,)))
        if slug and number is not None:
            cursor.execute(
                f'SELECT pr."id", pr."generation" FROM {pull_requests} pr JOIN {repositories} r '
                f'ON r."id" = pr."repository_id" WHERE r."slug" = %s AND pr."number" = %s', [slug, number],
            )
            return ("pull_request", *(cursor.fetchone() or (None, None)))
        if slug:
            cursor.execute(
                f'SELECT COUNT(*), SUM(pr."generation"), MAX(pr."id") FROM {pull_requests} pr '
                f'JOIN {repositories} r ON r."id" = pr."repository_id" WHERE r."slug" = %s', [slug],
            )
            return ("repository", *cursor.fetchone())
    return ("all", *pull_requests_version())


def read_scope_key(request) -> str:
    """What the request may read, as text: "*" for everything, "public" for an anonymous request
    (which repositories are public is data the version follows: making one private moves its pull
    requests' generation), else its readable repositories' ids (its user's roles, narrowed by its
    token), one small query: a membership granted or taken away, or a token's repositories
    changed, make another key."""
    scope = read_scope(request)
    if scope is None:
        return "*"
    if scope is PUBLIC_ONLY:
        return "public"
    return ",".join(str(pk) for pk in sorted(scope.values_list("pk", flat=True)))


def list_cache_key(request, version: tuple) -> str:
    parts = (
        request.path,
        sorted(request.GET.lists()),
        request.accepted_media_type,
        request.build_absolute_uri("/"),
        timezone.get_current_timezone_name(),
        read_scope_key(request),
        version,
    )
    # The path and the query string are the caller's text: hashed, so the key is valid for any
    # cache backend whatever was typed.
    digest = hashlib.sha256(repr(parts).encode("utf-8", "surrogatepass")).hexdigest()
    return f"list:1:{digest}"


def worth_caching(request, filters) -> bool:
    """Whether a list request is one asked again: one of the first pages (or the first of a
    cursor walk), and nothing in its URL beside `filters` and the list's own parameters. An
    unknown parameter changes nothing but the page's links, so each would be a copy of its own: a
    way to fill the cache (which in production shares its Redis with the broker) with one URL."""
    if set(request.GET) - set(filters) - _LIST_PARAMETERS:
        return False
    if request.GET.get("cursor"):
        return False
    page = request.GET.get("page", "1")
    return page.isdigit() and int(page) <= LIST_CACHE_MAX_PAGE


class CachedListMixin:
    """For a ListAPIView with a `long_list` (pagination.LongList) and a `filterset_class`: its
    JSON pages are written as bytes (`list_content`), and those `worth_caching` cached by
    `list_cache_key`. The browsable API is built every time, as DRF builds it."""

    def list(self, request, *args, **kwargs):
        if request.accepted_renderer.format != "json":
            return super().list(request, *args, **kwargs)
        key = None
        if worth_caching(request, self.filterset_class.base_filters):
            key = list_cache_key(request, self.long_list.version(request))
            content = cache.get(key)
            if content is not None:
                return HttpResponse(content, content_type=request.accepted_renderer.media_type)
        content = self.list_content(request, *args, **kwargs)
        if not isinstance(content, bytes):
            return content  # a response of its own: not a page
        if key is not None:
            cache.set(key, content, LIST_CACHE_SECONDS)
        return HttpResponse(content, content_type=request.accepted_renderer.media_type)

    def list_content(self, request, *args, **kwargs):
        """The page as the JSON bytes it is sent as (or a response that is not a page)."""
        response = super().list(request, *args, **kwargs)
        if response.status_code != 200:
            return response
        return self.render_content(response.data)

    def render_content(self, data) -> bytes:
        request = self.request
        return request.accepted_renderer.render(data, request.accepted_media_type, self.get_renderer_context())
