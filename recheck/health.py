import logging

from django.db import connection
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.http import require_GET

logger = logging.getLogger(__name__)


def healthz(request: HttpRequest) -> JsonResponse:
    """For load balancers and the compose healthcheck: the process serves and the database answers."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except Exception:  # any database failure means "not healthy", whatever its type
        # The driver's message names hosts and users: it goes to the log, not to whoever asks.
        logger.exception("Health check: the database does not answer")
        return JsonResponse({"status": "error", "database": "not answering"}, status=503)
    return JsonResponse({"status": "ok"})


def _operator(request: HttpRequest) -> bool:
    """Whether the request carries the operations token (RECHECK_OPERATIONS_TOKEN). Without one
    configured, nobody does: the figures name workers and hosts, which are not for everyone."""
    import hmac

    from django.conf import settings

    token = settings.RECHECK_OPERATIONS_TOKEN
    given = request.headers.get("Authorization", "").removeprefix("Bearer ").strip()
    return bool(token) and hmac.compare_digest(given.encode(), token.encode())


@require_GET
def healthz_operations(request: HttpRequest) -> HttpResponse:
    """The queues, the workers, the mirror caches and push-to-verdict latency, as JSON."""
    if not _operator(request):
        raise Http404
    from recheck.operations import operations_figures

    return JsonResponse(operations_figures())


@require_GET
def metrics(request: HttpRequest) -> HttpResponse:
    """The same figures for Prometheus."""
    if not _operator(request):
        raise Http404
    from prometheus_client import CONTENT_TYPE_LATEST

    from recheck.operations import operations_figures, prometheus_text

    return HttpResponse(prometheus_text(operations_figures()), content_type=CONTENT_TYPE_LATEST)
