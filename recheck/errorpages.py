"""What a request that failed outside a view's own error handling gets: JSON under /api/ (API
clients parse every answer), a page elsewhere. A database that is down or restarting is a 503
with Retry-After, not a 500: nothing is wrong with the request, and asking again shortly works."""
import logging
import sys

from django.db import InterfaceError, OperationalError
from django.core.exceptions import BadRequest
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, JsonResponse
from django.template import loader
from django.views import defaults

from core.errors import DATABASE_RETRY_AFTER_SECONDS, DATABASE_UNAVAILABLE

logger = logging.getLogger(__name__)

RETRY_AFTER_SECONDS = DATABASE_RETRY_AFTER_SECONDS


def is_api(request: HttpRequest) -> bool:
    return request.path.startswith("/api/")


def database_unavailable(request: HttpRequest) -> HttpResponse:
    if is_api(request):
        response = JsonResponse({"detail": DATABASE_UNAVAILABLE}, status=503)
    else:
        # Rendered without the request: its context processors would ask the database again.
        response = HttpResponse(loader.render_to_string("503.html", {"detail": DATABASE_UNAVAILABLE}), status=503)
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response


def bad_request(request, exception, template_name="400.html"):
    if is_api(request):
        return JsonResponse({"detail": f"Bad request: {exception or 'the request could not be read'}."}, status=400)
    # Recheck's own refusals (BadRequest) say why; Django's (a suspicious operation) say nothing more,
    # as Django's own page does. Rendered without the request, like the 503: nothing to look up.
    detail = str(exception) if type(exception) is BadRequest else ""
    return HttpResponseBadRequest(loader.render_to_string(template_name, {"detail": detail}))


def permission_denied(request, exception, template_name="403.html"):
    if is_api(request):
        return JsonResponse({"detail": str(exception) or "You may not do this."}, status=403)
    return defaults.permission_denied(request, exception, template_name=template_name)


def page_not_found(request, exception, template_name="404.html"):
    if is_api(request):
        return JsonResponse({"detail": "Nothing here. GET /api/ lists what exists."}, status=404)
    return defaults.page_not_found(request, exception, template_name=template_name)


def server_error(request, template_name="500.html"):
    # Called while the exception is being handled, so it is still at hand.
    error = sys.exc_info()[1]
    if isinstance(error, (OperationalError, InterfaceError)):
        return database_unavailable(request)
    if is_api(request):
        return JsonResponse({"detail": "Something went wrong on the server; it has been logged. Retry later."},
                            status=500)
    return defaults.server_error(request, template_name=template_name)
