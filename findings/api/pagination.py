from rest_framework.pagination import PageNumberPagination

MAX_PAGE_SIZE = 200


class RecheckPagination(PageNumberPagination):
    """Page-number pagination: `?page=2&page_size=100`, at most MAX_PAGE_SIZE items a page."""

    page_size_query_param = "page_size"
    max_page_size = MAX_PAGE_SIZE
    page_size_query_description = f"Items per page (default 50, at most {MAX_PAGE_SIZE})."
    invalid_page_message = "Page {page_number} does not exist ({message}): start at page 1 and follow `next`."
