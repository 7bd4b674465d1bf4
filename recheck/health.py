import logging

from django.db import connection
from django.http import HttpRequest, JsonResponse

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
