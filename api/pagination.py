import functools
from collections.abc import Callable
from dataclasses import dataclass, field

from django.core.paginator import Paginator
from django.utils.functional import cached_property
from rest_framework.pagination import CursorPagination, PageNumberPagination

MAX_PAGE_SIZE = 200
PAGE_SIZE = 50


class RecheckCursorPagination(CursorPagination):
    """Keyset pagination: each page starts where the last one ended, so a deep page costs what the
    first does, and nothing is counted."""

    ordering = "id"
    page_size = PAGE_SIZE
    page_size_query_param = "page_size"
    max_page_size = MAX_PAGE_SIZE
    cursor_query_description = "Cursor pagination: start with `cursor=` (empty) and follow `next`."


# A page-number list counts its matches only up to the next multiple of this past the page asked
# for: page 1 of 100,000 findings reads a thousand ids from the list's index, not 100,000. Past the
# bound the count says "at least" (`count_exact` false, "1,000+").
COUNT_BOUND = 1000


class BoundedCountPaginator(Paginator):
    """A paginator for long lists, whose cost does not grow with the table. One read of the list's
    index gives the page's ids and its count: the ids from the page's first row up to a bound past
    it (COUNT_BOUND), so the count is exact below the bound and "at least the bound" above it
    (`count_exact`). Then the page's rows are read by primary key, with the annotations they are
    shown with: finding the ids needs none of their joins, which can turn the database from the
    list's index to a sort of every match, however deep the `OFFSET`."""

    def __init__(self, *args, annotations=None, ids_only=False, **kwargs):
        super().__init__(*args, **kwargs)
        self.annotations = annotations or {}
        # With `ids_only`, a page's items are its rows' ids, for a caller that reads the rows itself.
        self.ids_only = ids_only
        self.bound = None
        self._ids = None

    def page(self, number):
        try:
            wanted = int(number)
        except (TypeError, ValueError):
            wanted = 0  # validate_number refuses it in its own words
        if wanted >= 1:
            # Within what a LIMIT takes: a page past every match is refused by its count.
            self.bound = min((wanted * self.per_page // COUNT_BOUND + 1) * COUNT_BOUND, 2**62)
            bottom = (wanted - 1) * self.per_page
            if hasattr(self.object_list, "page_and_count"):
                ids, found = self.object_list.page_and_count(bottom, self.per_page, self.bound)
            else:
                ids = self._read_ids(bottom, self.bound)
                found = len(ids or ())
            if ids:  # else the page is past the end, or there is nothing: `count` counts
                self.__dict__["count"] = bottom + found
                self._ids = ids[: self.per_page]
        number = self.validate_number(number)
        bottom = (number - 1) * self.per_page
        top = bottom + self.per_page
        if top + self.orphans >= self.count:
            top = self.count
        return self._get_page(self._rows(bottom, top), number, self)

    def _read_ids(self, bottom: int, top: int) -> list | None:
        """The ids of the rows from `bottom` to `top`: of a queryset, or of an object list that
        reads them itself (`page_and_count`, `ids_between`, `count_up_to`:
        findings.selectors.list_rows.ListIds)."""
        if hasattr(self.object_list, "ids_between"):
            return self.object_list.ids_between(bottom, top)
        if hasattr(self.object_list, "values_list"):
            return list(self.object_list.values_list("pk", flat=True)[bottom:top])
        return None

    def _rows(self, bottom: int, top: int) -> list:
        queryset = self.object_list
        ids = self._ids if self._ids is not None else self._read_ids(bottom, top)
        if ids is None:
            return queryset[bottom:top]
        if not ids or self.ids_only:
            return ids
        rows = {row.pk: row for row in queryset.order_by().filter(pk__in=ids).annotate(**self.annotations)}
        return [rows[pk] for pk in ids]

    @property
    def count_exact(self) -> bool:
        """Whether `count` is every match, rather than the bound it stopped at."""
        return self.bound is None or self.count < self.bound

    @cached_property
    def count(self):
        if self.bound is None:
            return super().count
        if hasattr(self.object_list, "count_up_to"):
            return self.object_list.count_up_to(self.bound)
        # COUNT(*) over a subquery LIMITed to the bound, without the list's ordering.
        return self.object_list.order_by()[: self.bound].count()


@dataclass(frozen=True)
class LongList:
    """What a view with a long list tells its pagination and its cache (`long_list`): the version
    its pages are cached by, read from the request (api.listcache.list_generation), and the
    annotations its rows are read with, added once the page's ids are known so that finding them
    needs none of their joins (see BoundedCountPaginator)."""

    version: Callable[..., tuple]
    annotations: dict = field(default_factory=dict)


class RecheckPagination(PageNumberPagination):
    """Page-number pagination: `?page=2&page_size=100`, at most MAX_PAGE_SIZE items a page, with a
    `count` of the matches (for a long list, up to a bound past the page: `count_exact` says whether
    it is every match). Deep or whole-table reads ask for cursor pagination instead
    (`?cursor=`, then follow `next`): no count, and no OFFSET that grows with the page."""

    page_size_query_param = "page_size"
    max_page_size = MAX_PAGE_SIZE
    page_size_query_description = f"Items per page (default {PAGE_SIZE}, at most {MAX_PAGE_SIZE})."
    invalid_page_message = "Page {page_number} does not exist ({message}): start at page 1 and follow `next`."

    cursor = None

    def paginate_queryset(self, queryset, request, view=None):
        long_list = getattr(view, "long_list", None)
        if RecheckCursorPagination.cursor_query_param in request.query_params:
            self.cursor = RecheckCursorPagination()
            if long_list is not None:
                queryset = queryset.annotate(**long_list.annotations)
            return self.cursor.paginate_queryset(queryset, request, view)
        if long_list is not None:
            self.django_paginator_class = functools.partial(
                BoundedCountPaginator, annotations=long_list.annotations,
            )
        return super().paginate_queryset(queryset, request, view)

    def paginate_ids(self, queryset, request, view=None) -> list | None:
        """As `paginate_queryset`, for a view with a `long_list`: the page's ids alone, in the
        list's order, for a caller that reads the rows itself; `get_paginated_response` then as
        after `paginate_queryset`. `queryset` may also be an object that reads the ids itself
        (see BoundedCountPaginator), for page numbers."""
        if RecheckCursorPagination.cursor_query_param in request.query_params:
            self.cursor = RecheckCursorPagination()
            # The position a cursor holds is read from the page's first and last rows.
            ordering = self.cursor.get_ordering(request, queryset, view)
            fields = dict.fromkeys(["id", *(name.lstrip("-") for name in ordering)])
            rows = self.cursor.paginate_queryset(queryset.values(*fields), request, view)
            return None if rows is None else [row["id"] for row in rows]
        self.django_paginator_class = functools.partial(BoundedCountPaginator, ids_only=True)
        return super().paginate_queryset(queryset, request, view)

    def get_paginated_response(self, data):
        if self.cursor is not None:
            return self.cursor.get_paginated_response(data)
        response = super().get_paginated_response(data)
        paginator = self.page.paginator
        response.data = {
            "count": response.data["count"],
            "count_exact": getattr(paginator, "count_exact", True),
            **{name: value for name, value in response.data.items() if name != "count"},
        }
        return response

    def get_schema_operation_parameters(self, view):
        page_number = super().get_schema_operation_parameters(view)
        cursor = [
            parameter
            for parameter in RecheckCursorPagination().get_schema_operation_parameters(view)
            if parameter["name"] == RecheckCursorPagination.cursor_query_param
        ]
        return page_number + cursor

    def get_paginated_response_schema(self, schema):
        described = super().get_paginated_response_schema(schema)
        described["properties"]["count"]["description"] = (
            f"The matches, counted up to the next multiple of {COUNT_BOUND:,} past the page asked for (so "
            "a page's cost does not grow with the table); absent with cursor pagination."
        )
        described["properties"] = {
            "count": described["properties"]["count"],
            "count_exact": {
                "type": "boolean",
                "description": f"False when there are more matches than `count` (read it as \"{COUNT_BOUND:,}+\").",
            },
            **{name: value for name, value in described["properties"].items() if name != "count"},
        }
        described["required"] = ["results"]
        return described
