"""Requests whose address holds a NUL character are refused before anything reads them.

No path or query parameter of Recheck's may hold one (slugs, SHAs, numbers, search words), and
PostgreSQL refuses NUL in text, so a NUL that reached a query would be a 500 rather than the 400 it
is. Forms and the API's serializers already refuse NUL in what they read from a body."""
from django.core.exceptions import BadRequest

REFUSED = "the address holds a NUL character (%00), which no Recheck address or parameter may hold"


class RefuseNulMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        # The query string as sent (a NUL in it can only be %00) and the path as decoded.
        if "\x00" in request.path or "%00" in request.META.get("QUERY_STRING", ""):
            # BadRequest becomes the 400 of `recheck.errorpages.bad_request`: JSON under /api/.
            raise BadRequest(REFUSED)
        return self.get_response(request)
