"""Write endpoints. Each validates its input, calls the one service that does the work (the same
one the admin and the commands call), and presents the result. Each needs its own permission and
counts against the per-user write throttle."""
from django.conf import settings
from django.db import transaction
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiExample, OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import status
from rest_framework.parsers import BaseParser
from rest_framework.response import Response
from rest_framework.reverse import reverse
from rest_framework.views import APIView

from findings.api import docs
from findings.api.lookups import pull_request_by_number
from findings.api.permissions import HasActionPermission
from findings.api.serializers import (
    FindingDetailSerializer,
    FindingEventSerializer,
    ImportJobSerializer,
    ImportReportSerializer,
    PublishingSerializer,
    RepositorySerializer,
    ResolveRequestSerializer,
    ResolveResponseSerializer,
    VerifyRequestSerializer,
    VerifyResponseSerializer,
)
from findings.api.throttles import WriteThrottle
from findings.api.views import findings_with_evidence
from findings.exchange.bundle_import import MAX_BUNDLE_BYTES, parse_bundle, review_import
from findings.exchange.bundle_schema import BundleSerializer
from findings.imports import import_job_request
from findings.models import Finding, FindingEvent, ImportJob
from findings.runs import verification_run_request
from findings.services import finding_resolve
from reviews.models import Repository
from reviews.services import repository_publishing_update


class ActionView(APIView):
    permission_classes = [HasActionPermission]
    throttle_classes = [WriteThrottle]
    required_permission: str


@extend_schema_view(
    post=extend_schema(
        tags=["verifications"],
        operation_id="pull_request_verify",
        summary="Request a verification of a pull request",
        description=(
            "Queues a verification of the pull request at `commit` (or at every pinned commit) and answers "
            "at once; poll `status_url`. Needs the `findings.verify_pullrequest` permission."
        ),
        parameters=docs.PULL_REQUEST_PATH,
        request=VerifyRequestSerializer,
        responses={202: VerifyResponseSerializer, **docs.WRITE_ERRORS, 404: docs.NOT_FOUND},
    )
)
class PullRequestVerify(ActionView):
    required_permission = "findings.verify_pullrequest"

    def post(self, request, owner: str, name: str, number: int):
        pull_request = pull_request_by_number(owner=owner, name=name, number=number)
        body = VerifyRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        # The run and its commit are written together; the task is enqueued when this commits.
        with transaction.atomic():
            run = verification_run_request(
                pull_request=pull_request, commit_sha=body.validated_data["commit"], requested_by=request.user
            )
        run.refresh_from_db()
        status_url = reverse("api:run-detail", kwargs={"pk": run.pk}, request=request)
        return Response(
            VerifyResponseSerializer(
                {"run": run.pk, "task_id": run.task_id, "status": run.status, "status_url": status_url}
            ).data,
            status=status.HTTP_202_ACCEPTED,
            headers={"Location": status_url},
        )


@extend_schema_view(
    post=extend_schema(
        tags=["findings"],
        operation_id="finding_resolve",
        summary="Mark a finding fixed, dismissed or open",
        description=(
            "The same change the admin makes, recorded in the finding's history with source `api`. Fixing "
            "needs the commit it was fixed in; dismissing needs a note. Needs `findings.resolve_finding`."
        ),
        parameters=docs.ID_PATH,
        request=ResolveRequestSerializer,
        responses={200: ResolveResponseSerializer, **docs.WRITE_ERRORS, 404: docs.NOT_FOUND},
        examples=[
            OpenApiExample("Fixed", value={"status": "fixed", "commit": "3f2c9a1d", "note": "Tolerance back to 100."},
                           request_only=True),
            OpenApiExample("Dismissed", value={"status": "dismissed", "note": "Out of scope for this PR."},
                           request_only=True),
        ],
    )
)
class FindingResolve(ActionView):
    required_permission = "findings.resolve_finding"

    def post(self, request, pk: int):
        finding = _get_finding(pk)
        body = ResolveRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        event = finding_resolve(
            finding=finding,
            status=data["status"],
            actor=request.user,
            source=FindingEvent.Source.API,
            commit_sha=data["commit"] or "",
            note=data["note"],
        )
        finding = _get_finding(pk)
        context = {"request": request}
        return Response(
            {
                "finding": FindingDetailSerializer(finding, context=context).data,
                "event": FindingEventSerializer(event, context=context).data,
            }
        )


def _get_finding(pk: int) -> Finding:
    return get_object_or_404(findings_with_evidence(), pk=pk)


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
            "Answers 201 when the pull request is new, 200 otherwise. Needs `findings.import_review`."
        ),
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
    required_permission = "findings.import_review"
    parser_classes = [
        JSONBundleParser, YAMLBundleParser, LegacyYAMLBundleParser, TextYAMLBundleParser, PlainTextBundleParser
    ]

    def post(self, request):
        data = request.data
        findings = data.get("findings") if isinstance(data, dict) else None
        large = isinstance(findings, list) and len(findings) > settings.RECHECK_IMPORT_INLINE_FINDINGS
        if large or request.query_params.get("background") in ("1", "true", "yes"):
            job = import_job_request(data=data, requested_by=request.user)
            job.refresh_from_db()
            status_url = reverse("api:import-detail", kwargs={"pk": job.pk}, request=request)
            return Response(
                ImportJobSerializer(job, context={"request": request}).data,
                status=status.HTTP_202_ACCEPTED,
                headers={"Location": status_url},
            )
        report = review_import(data=data, actor=request.user)
        slug, number = report.pull_request.rsplit("#", 1)
        owner, name = slug.split("/", 1)
        url = reverse(
            "api:pull-request-by-number", kwargs={"owner": owner, "name": name, "number": number}, request=request
        )
        created = f"pull request {report.pull_request}" in report.created
        return Response(
            ImportReportSerializer({**report.as_dict(), "url": url}).data,
            status=status.HTTP_201_CREATED if created else status.HTTP_200_OK,
            headers={"Location": url},
        )


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
    required_permission = "findings.import_review"

    def get(self, request, pk: int):
        job = get_object_or_404(ImportJob, pk=pk)
        return Response(ImportJobSerializer(job, context={"request": request}).data)


@extend_schema_view(
    patch=extend_schema(
        tags=["repositories"],
        operation_id="repository_publishing_update",
        summary="Turn reporting to GitHub on or off for a repository",
        description=(
            "With `publish_checks`, every verified head gets a \"Recheck\" check run (with a GitHub App; with "
            "only a token, a `recheck` commit status). With `publish_comment`, the pull request gets one "
            "comment, edited after each verification. Both are off until turned on. Needs "
            "`reviews.change_repository`."
        ),
        parameters=docs.REPOSITORY_PATH,
        request=PublishingSerializer,
        responses={200: RepositorySerializer, **docs.WRITE_ERRORS, 404: docs.NOT_FOUND},
    )
)
class RepositoryPublishing(ActionView):
    required_permission = "reviews.change_repository"

    def patch(self, request, owner: str, name: str):
        repository = get_object_or_404(Repository, slug=f"{owner}/{name}")
        body = PublishingSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        repository = repository_publishing_update(repository=repository, **body.validated_data)
        return Response(RepositorySerializer(repository, context={"request": request}).data)
