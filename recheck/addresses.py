"""Requests whose path holds a NUL character are refused before anything reads them.

No path of Recheck's may hold one (slugs, SHAs, numbers, file paths), and PostgreSQL refuses NUL
in text, so a NUL that reached a query would be a 500 rather than the 400 it is. Parameters are
each checked where they are read, so that the answer names the field (the search says "remove
the control characters" beside its box); forms and the API's serializers refuse NUL in bodies."""
from django.core.exceptions import BadRequest

REFUSED = "the address holds a NUL character (%00), which no Recheck address may hold"


class RefuseNulMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if "\x00" in request.path:  # as decoded: %00 in the address
            # BadRequest becomes the 400 of `recheck.errorpages.bad_request`: JSON under /api/.
            raise BadRequest(REFUSED)
        return self.get_response(request)
