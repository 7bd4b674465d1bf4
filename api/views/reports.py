"""CI reports of a repository's commits, sent by a CI job: a JUnit XML report, a SARIF log or a bare
conclusion, kept by the one service every source calls."""
import tempfile

from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import status
from rest_framework.response import Response

from access.permissions import Action
from api import docs
from api.permissions import object_action_check, visible_to
from api.serializers.reports import CheckReportSerializer, ReportParametersSerializer
from api.views.writing import ActionView
from core import vocabulary
from core.errors import ReportError
from engine.reports import MAX_REPORT_BYTES
from findings.services.reports import check_report_record
from reviews.models import Repository

_CHUNK = 1 << 20
# Past this a report being received is written to a temporary file rather than held in memory.
_SPOOL_BYTES = 4 * 1024 * 1024


@extend_schema_view(post=extend_schema(
    tags=["reports"],
    operation_id="commit_report_create",
    summary="Send a CI report of a commit",
    description=(
        "The body is the report itself: JUnit XML or a SARIF 2.1.0 log (told apart by its first character), at "
        f"most {MAX_REPORT_BYTES:,} bytes; or nothing, with `conclusion`. The parameters go in the query string. "
        "The same report sent again is the one kept (200); a new one is 201. A report for a commit the "
        "repository does not have is a 404 on `commit`, one too large a 413. Needs a token with the "
        "`reports:write` scope (limit it to the repository) of someone with the Reviewer role there."
    ),
    parameters=[ReportParametersSerializer, OpenApiParameter("sha", OpenApiTypes.STR, OpenApiParameter.PATH)],
    request={"application/xml": OpenApiTypes.BINARY, "application/sarif+json": OpenApiTypes.BINARY},
    responses={200: CheckReportSerializer, 201: CheckReportSerializer, **docs.WRITE_ERRORS, 404: docs.NOT_FOUND},
))
class CommitReports(ActionView):
    required_action = Action.REPORT
    audit_action = "report.record"

    def post(self, request, owner: str, name: str, sha: str):
        repository = get_object_or_404(visible_to(Repository.objects.all(), request, "pk"), slug=f"{owner}/{name}")
        object_action_check(request, self, repository)
        parameters = ReportParametersSerializer(data=request.query_params)
        parameters.is_valid(raise_exception=True)
        with tempfile.SpooledTemporaryFile(max_size=_SPOOL_BYTES) as body:
            size = _received(request, body)
            recorded = check_report_record(
                repository=repository, sha=sha, source=vocabulary.REPORT_UPLOAD, actor=request.user,
                file=body if size else None, **parameters.validated_data,
            )
        recorded.report.created = recorded.created
        return Response(
            CheckReportSerializer(recorded.report).data,
            status=status.HTTP_201_CREATED if recorded.created else status.HTTP_200_OK,
        )


def _received(request, body) -> int:
    """Read the request's body into ``body`` as it arrives, refusing it past the size a report may
    have without reading the rest (Django's own body limit is for forms, not reports)."""
    size = 0
    while chunk := request._request.read(_CHUNK):
        size += len(chunk)
        if size > MAX_REPORT_BYTES:
            raise ReportError(
                "file", f"The report is over {MAX_REPORT_BYTES:,} bytes ({MAX_REPORT_BYTES // (1024 * 1024)} MB), "
                "the most Recheck reads. Split it, or send what failed.", status=413,
            )
        body.write(chunk)
    body.seek(0)
    return size
