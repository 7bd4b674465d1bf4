"""Importing a review bundle: the parsers that hand its body to the reader the import command uses,
the import itself (inline, or queued for a worker when large), and the status of a background import."""
from django.conf import settings
from django.http import Http404
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import status
from rest_framework.exceptions import PermissionDenied
from rest_framework.parsers import BaseParser
from rest_framework.response import Response
from rest_framework.reverse import reverse
from rest_framework.views import APIView

from access.audit import audit_refusal
from access.permissions import Action
from api import docs
from api.permissions import HasActionPermission, request_repositories, token_repository_ids
from api.serializers.writes import ImportJobSerializer, ImportReportSerializer
from api.views.writing import ActionView
from findings.exchange.schema import BundleSerializer
from findings.models import ImportJob
from findings.services.import_jobs import import_job_request
from findings.services.review_import import (
    MAX_BUNDLE_BYTES,
    ImportRefused,
    parse_bundle,
    review_import,
    review_import_check,
)
from reviews.models import Repository


class BundleParser(BaseParser):
    """Hands the raw body to parse_bundle, the reader the import command uses, so the API and the
    command accept and refuse exactly the same bundles. At most one byte more than the limit is
    read: parse_bundle then refuses the bundle as too large without holding all of it."""

    def parse(self, stream, media_type=None, parser_context=None):
        raw = stream.read(MAX_BUNDLE_BYTES + 1) if stream is not None else b""
        return parse_bundle(raw)


class JSONBundleParser(BundleParser):
    media_type = "application/json"


class YAMLBundleParser(BundleParser):
    media_type = "application/yaml"


class LegacyYAMLBundleParser(BundleParser):
    media_type = "application/x-yaml"


class TextYAMLBundleParser(BundleParser):
    media_type = "text/yaml"


class PlainTextBundleParser(BundleParser):
    media_type = "text/plain"


@extend_schema_view(
    post=extend_schema(
        tags=["reviews"],
        operation_id="review_import",
        summary="Import a review bundle",
        description=(
            "Creates or updates the review a bundle describes, in one transaction, exactly as "
            "`manage.py import_review` does: importing the same bundle twice changes nothing the second "
            "time. Send JSON, or YAML with `Content-Type: application/yaml`. A malformed bundle changes "
            "nothing; `errors` names every field at fault (e.g. `findings[0].evidence[1].regex`). "
            "Answers 201 when the pull request is new, 200 otherwise. Needs the Reviewer role on "
            "the bundle's repository (or `findings.import_review` instance-wide, which a repository new to the "
            "server needs). With `?dry_run=1` the import is carried out and rolled back: the answer says "
            "what it would create and change, each changed field's before and after (`changes`), and nothing "
            "is written."
        ),
        parameters=[
            OpenApiParameter("dry_run", OpenApiTypes.BOOL, OpenApiParameter.QUERY,
                             description="Carry the import out and roll it back: say what it would do."),
        ],
        request={
            "application/json": BundleSerializer,
            "application/yaml": BundleSerializer,
        },
        responses={
            200: OpenApiResponse(ImportReportSerializer, description="An existing pull request, updated or unchanged."),
            201: OpenApiResponse(ImportReportSerializer, description="A new pull request."),
            202: OpenApiResponse(
                ImportJobSerializer,
                description="A large bundle (or `?background=1`): imported by a worker; poll `status_url`.",
            ),
            **docs.WRITE_ERRORS,
        },
        examples=[
            OpenApiExample(
                "Invalid bundle",
                status_codes=["400"],
                response_only=True,
                value={
                    "detail": "Nothing was imported. Fix the bundle and send it again: findings[0].evidence[1].regex: "
                    "Not a valid regular expression: missing ), unterminated subpattern at position 0.",
                    "errors": [
                        {
                            "field": "findings[0].evidence[1].regex",
                            "message": "Not a valid regular expression: missing ), unterminated subpattern "
                            "at position 0.",
                        }
                    ],
                },
            )
        ],
    )
)
class ReviewImport(ActionView):
    required_action = Action.IMPORT
    audit_action = "review.import"
    parser_classes = [
        JSONBundleParser, YAMLBundleParser, LegacyYAMLBundleParser, TextYAMLBundleParser, PlainTextBundleParser
    ]

    def post(self, request):
        self._check_token_repositories(request)
        data = request.data
        # Checked before a background import is queued too (the worker checks again).
        try:
            review_import_check(data=data, actor=request.user)
        except ImportRefused as error:
            slug = (data.get("repository") or {}).get("slug", "") if isinstance(data, dict) else ""
            audit_refusal(action="review.import", actor=request.user, target=str(slug), message=str(error))
            raise PermissionDenied(str(error)) from None
        findings = data.get("findings") if isinstance(data, dict) else None
        large = isinstance(findings, list) and len(findings) > settings.RECHECK_IMPORT_INLINE_FINDINGS
        dry_run = request.query_params.get("dry_run") in ("1", "true", "yes")
        if not dry_run and (large or request.query_params.get("background") in ("1", "true", "yes")):
            job = import_job_request(data=data, requested_by=request.user)
            job.refresh_from_db()
            status_url = reverse("api:import-detail", kwargs={"pk": job.pk}, request=request)
            return Response(
                ImportJobSerializer(job, context={"request": request}).data,
                status=status.HTTP_202_ACCEPTED,
                headers={"Location": status_url},
            )
        report = review_import(data=data, actor=request.user, dry_run=dry_run)
        slug, number = report.pull_request.rsplit("#", 1)
        owner, name = slug.rsplit("/", 1)
        url = reverse(
            "api:pull-request-by-number", kwargs={"owner": owner, "name": name, "number": number}, request=request
        )
        created = f"pull request {report.pull_request}" in report.created and not dry_run
        return Response(
            ImportReportSerializer({**report.as_dict(), "url": url, "dry_run": dry_run}).data,
            status=status.HTTP_201_CREATED if created else status.HTTP_200_OK,
            headers={} if dry_run else {"Location": url},
        )

    def _check_token_repositories(self, request) -> None:
        """A token limited to repositories imports into those only. Said without a 404: the
        bundle names the repository, so the answer tells nothing about whether it exists."""
        ids = token_repository_ids(request)
        if ids is None:
            return
        repository = request.data.get("repository") if isinstance(request.data, dict) else None
        slug = repository.get("slug") if isinstance(repository, dict) else None
        allowed = sorted(Repository.objects.filter(pk__in=ids).values_list("slug", flat=True))
        if slug in allowed:
            return
        message = f"This token may import into {', '.join(allowed)} only; the bundle is for {slug or 'no repository'}."
        audit_refusal(action="review.import", actor=request.user, target=str(slug or ""), message=message)
        raise PermissionDenied(message)


@extend_schema_view(
    get=extend_schema(
        tags=["reviews"],
        operation_id="import_job",
        summary="The status of a background import",
        description=(
            "A bundle of more than RECHECK_IMPORT_INLINE_FINDINGS findings (or one sent with `?background=1`) "
            "is imported by a worker: the import answers 202 with this URL. `status` is queued, running, done "
            "(with `report`) or failed (with `errors`, and nothing imported). Needs `findings.import_review`."
        ),
        responses={200: ImportJobSerializer, **docs.WRITE_ERRORS, 404: docs.NOT_FOUND},
    )
)
class ImportJobDetail(APIView):
    permission_classes = [HasActionPermission]
    required_action = Action.IMPORT
    audit_action = "review.import"

    def get(self, request, pk: int):
        # An import is its requester's, and a token limited to repositories sees only imports into
        # those: another's job is answered as if it did not exist.
        job = get_object_or_404(ImportJob, pk=pk, requested_by=request.user.pk)
        allowed = token_repository_ids(request)
        slug = _import_slug(job)
        hidden = allowed is not None and not Repository.objects.filter(pk__in=allowed, slug=slug).exists()
        # An import into a repository its requester may no longer read is not shown either.
        hidden = hidden or (
            Repository.objects.filter(slug=slug).exists() and not request_repositories(request).filter(slug=slug).exists()
        )
        if hidden:
            # In the very words of an id that was never used.
            raise Http404(f"No {ImportJob._meta.object_name} matches the given query.")
        return Response(ImportJobSerializer(job, context={"request": request}).data)


def _import_slug(job: ImportJob) -> str:
    """The repository an import is for: from its report once done, else from its bundle."""
    reference = (job.report or {}).get("pull_request") or ""
    if reference:
        return reference.rsplit("#", 1)[0]
    repository = (job.data or {}).get("repository") if isinstance(job.data, dict) else None
    return str(repository.get("slug", "")) if isinstance(repository, dict) else ""
