"""How the API reports errors: always JSON with a `detail` that says what to do, plus `errors`
(field, message) pairs when particular fields are at fault. The one domain error, RecheckError,
becomes a 400 here, so no view needs its own try/except around a service call."""
import logging

from django.db import InterfaceError, OperationalError
from django.http import Http404
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler
from rest_framework.views import set_rollback

from api.permissions import TOKEN_HINT
from findings.services.review_import import BundleInvalid
from findings.exchange.schema import flatten_errors
from findings.services.runs import QueueUnavailable
from core.errors import DATABASE_RETRY_AFTER_SECONDS as RETRY_AFTER_SECONDS
from core.errors import DATABASE_UNAVAILABLE
from core import vocabulary
from core.errors import (
    BundleError,
    EvidenceStillHolds,
    RecheckError,
    ReportError,
    ResolutionCommitError,
    ResolutionError,
)

logger = logging.getLogger(__name__)

NOT_FOUND = "Check the id, slug or number in the URL; GET /api/ lists what exists."


def _field_errors(pairs: list[tuple[str, str]]) -> list[dict]:
    return [{"field": field, "message": message} for field, message in pairs]


def _summary(pairs: list[tuple[str, str]]) -> str:
    return "; ".join(f"{field}: {message}" if field else message for field, message in pairs)


def _resolution_error(error: ResolutionError) -> dict:
    """A refused status change, with the input at fault; the commit and verdict where the evidence
    still holds, the candidates of an ambiguous SHA."""
    body = {"detail": str(error), "errors": _field_errors([(error.field, str(error))])}
    if isinstance(error, EvidenceStillHolds):
        body["detail"] += ' Send "anyway": true with a note to mark it fixed anyway.'
        body["errors"] = _field_errors([("commit", body["detail"])])
        body["still_holds"] = {
            "commit": error.sha, "verdict": error.verdict, "verdict_label": vocabulary.verdict_label(error.verdict),
        }
    if isinstance(error, ResolutionCommitError) and error.candidates:
        body["candidates"] = list(error.candidates)
    return body


def exception_handler(exc, context):
    if isinstance(exc, (OperationalError, InterfaceError)):
        logger.warning("The database did not answer: %s", exc)
        set_rollback()
        return Response({"detail": DATABASE_UNAVAILABLE}, status=status.HTTP_503_SERVICE_UNAVAILABLE,
                        headers={"Retry-After": str(RETRY_AFTER_SECONDS)})
    if isinstance(exc, QueueUnavailable):
        return Response({"detail": str(exc)}, status=status.HTTP_503_SERVICE_UNAVAILABLE,
                        headers={"Retry-After": str(exc.retry_after)})
    if isinstance(exc, BundleError):
        pairs = exc.errors if isinstance(exc, BundleInvalid) else [(exc.field, exc.message)]
        set_rollback()
        return Response(
            {
                "detail": f"Nothing was imported. Fix the bundle and send it again: {_summary(pairs)}",
                "errors": _field_errors(pairs),
            },
            status=status.HTTP_400_BAD_REQUEST,
        )
    if isinstance(exc, ResolutionError):
        set_rollback()
        return Response(_resolution_error(exc), status=status.HTTP_400_BAD_REQUEST)
    if isinstance(exc, ReportError):
        set_rollback()
        return Response(
            {"detail": f"Nothing was kept: {exc}", "errors": _field_errors([(exc.field, exc.message)])},
            status=exc.status,
        )
    if isinstance(exc, RecheckError):
        set_rollback()
        return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
    if isinstance(exc, exceptions.ValidationError):
        pairs = flatten_errors(exc.detail) or [("", "Invalid request.")]
        set_rollback()
        return Response(
            {"detail": f"Fix these and send the request again: {_summary(pairs)}", "errors": _field_errors(pairs)},
            status=status.HTTP_400_BAD_REQUEST,
        )
    if isinstance(exc, (exceptions.NotAuthenticated, exceptions.AuthenticationFailed)):
        # DRF answers these before any permission's message is consulted; say how to authenticate.
        exc.detail = exceptions.ErrorDetail(f"{exc.detail} {TOKEN_HINT}", code=exc.detail.code)
    if isinstance(exc, exceptions.UnsupportedMediaType):
        view = context.get("view")
        accepted = ", ".join(parser.media_type for parser in view.get_parsers()) if view else ""
        exc = exceptions.UnsupportedMediaType(exc.detail, detail=f"{exc.detail} Send the body as one of: {accepted}.")
    if isinstance(exc, Http404):
        # Django's "No Finding matches the given query." names the thing; add what to do next.
        exc = exceptions.NotFound(f"{exc.args[0]} {NOT_FOUND}" if exc.args else NOT_FOUND)
    elif isinstance(exc, exceptions.NotFound) and exc.detail == exceptions.NotFound.default_detail:
        exc = exceptions.NotFound(NOT_FOUND)
    return drf_exception_handler(exc, context)
