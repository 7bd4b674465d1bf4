"""Finding one's way around the API: the root lists the collections, the schema and its
documentation; a URL under /api/ that matches no endpoint gets a JSON 404 that points at the one
meant."""
from django.http import JsonResponse
from django.urls import Resolver404, resolve
from django.views.decorators.csrf import csrf_exempt
from drf_spectacular.utils import extend_schema
from rest_framework.response import Response
from rest_framework.reverse import reverse
from rest_framework.views import APIView

from api.views.reading import ReadMixin


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
