"""A pull request's review, exported as a bundle (the import format), SARIF or Markdown."""
from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.views import APIView

from api import docs
from api.views.reading import ReadMixin
from findings.exchange import EXPORT_FORMATS, review_export
from findings.exchange.schema import BundleSerializer


class _ExportNegotiation(DefaultContentNegotiation):
    """`format` names the export format here, not one of DRF's renderers; errors are JSON."""

    def select_renderer(self, request, renderers, format_suffix=None):
        return renderers[0], renderers[0].media_type


@extend_schema(
    tags=["pull requests"],
    summary="Export a pull request's review",
    description=(
        "The review as a bundle (the import format, YAML), as SARIF 2.1.0 (one result per open finding, "
        "located at the latest verified commit) or as Markdown to paste into a PR comment."
    ),
    parameters=docs.PULL_REQUEST_PATH
    + [
        OpenApiParameter(
            "format", OpenApiTypes.STR, enum=list(EXPORT_FORMATS), default="bundle", description="Export format."
        )
    ],
    responses={
        (200, "application/yaml"): OpenApiResponse(BundleSerializer, description="A review bundle, in YAML."),
        (200, "application/sarif+json"): OpenApiResponse(OpenApiTypes.OBJECT, description="A SARIF 2.1.0 log."),
        (200, "text/markdown"): OpenApiResponse(OpenApiTypes.STR, description="A Markdown summary."),
        **docs.DETAIL_ERRORS,
        400: docs.BAD_REQUEST,
    },
)
class PullRequestExport(ReadMixin, APIView):
    content_negotiation_class = _ExportNegotiation

    def get(self, request, owner: str, name: str, number: int):
        pull_request = self.pull_request(owner=owner, name=name, number=number)
        result = review_export(
            pull_request=pull_request, format=request.query_params.get("format", "bundle"), reader=request.user
        )
        response = HttpResponse(result.content, content_type=result.content_type)
        response["Content-Disposition"] = f'inline; filename="{result.filename}"'
        return response
