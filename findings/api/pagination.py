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


class RecheckPagination(PageNumberPagination):
    """Page-number pagination: `?page=2&page_size=100`, at most MAX_PAGE_SIZE items a page, with a
    `count` of every match. Deep or whole-table reads ask for cursor pagination instead
    (`?cursor=`, then follow `next`): no count, and no OFFSET that grows with the page."""

    page_size_query_param = "page_size"
    max_page_size = MAX_PAGE_SIZE
    page_size_query_description = f"Items per page (default {PAGE_SIZE}, at most {MAX_PAGE_SIZE})."
    invalid_page_message = "Page {page_number} does not exist ({message}): start at page 1 and follow `next`."

    cursor = None

    def paginate_queryset(self, queryset, request, view=None):
        if RecheckCursorPagination.cursor_query_param in request.query_params:
            self.cursor = RecheckCursorPagination()
            return self.cursor.paginate_queryset(queryset, request, view)
        return super().paginate_queryset(queryset, request, view)

    def get_paginated_response(self, data):
        if self.cursor is not None:
            return self.cursor.get_paginated_response(data)
        return super().get_paginated_response(data)

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
        described["properties"]["count"]["description"] = "Every match; absent with cursor pagination."
        described["required"] = ["results"]
        return described
