"""Write endpoints. Each validates its input, calls the one service that does the work (the same
one the admin and the commands call), and presents the result. Each needs its own permission and
counts against the per-user write throttle."""
import re

from django.conf import settings
from django.db.models import Count, Q
from django.http import Http404
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import status
from rest_framework.exceptions import NotFound, PermissionDenied
from rest_framework.parsers import BaseParser
from rest_framework.response import Response
from rest_framework.reverse import reverse
from rest_framework.views import APIView

from api import docs
from api.lookups import pull_request_by_number
from access.audit import audit_refusal
from api.permissions import (
    HasActionPermission,
    TokenScope,
    object_action_check,
    repository_limit,
    request_reads_everything,
    request_repositories,
    token_repository_ids,
    visible_to,
)
from api.serializers.findings import FindingDetailSerializer, FindingEventSerializer, TagSerializer
from api.serializers.related import FindingLinkSerializer, finding_link_data
from api.serializers.repositories import PublishingSerializer, RepositorySerializer
from api.serializers.writes import (
    ImportJobSerializer,
    ImportReportSerializer,
    LinkRequestSerializer,
    ResolveRequestSerializer,
    ResolveResponseSerializer,
    TagDescriptionRequestSerializer,
    TagsRequestSerializer,
    VerifyRequestSerializer,
    VerifyResponseSerializer,
)
from api.throttles import WriteThrottle
from api.views.findings import findings_with_evidence
from findings.selectors.findings import tags_with_counts
from access.permissions import ACTION_SCOPES, Action
from findings.services.review_import import (
    MAX_BUNDLE_BYTES,
    ImportRefused,
    parse_bundle,
    review_import,
    review_import_check,
)
from findings.exchange.schema import BundleSerializer
from findings.services.import_jobs import import_job_request
from core.names import TAG_SLUG_RE
from findings.models import Finding, FindingEvent, FindingLink, ImportJob, Tag
from findings.services.tags_and_links import (
    finding_by_reference,
    finding_link_create,
    finding_link_delete,
    finding_tags_set,
    tag_describe,
)
from findings.services.runs import verification_run_request
from findings.services.resolution import finding_resolve
from reviews.models import Repository
from reviews.services import repository_publishing_update


class ActionView(APIView):
    permission_classes = [HasActionPermission, TokenScope]
    throttle_classes = [WriteThrottle]
    required_action: Action

    @property
    def required_scope(self) -> str:
        return ACTION_SCOPES[self.required_action]


@extend_schema_view(
    post=extend_schema(
        tags=["verifications"],
        operation_id="pull_request_verify",
        summary="Request a verification of a pull request",
        description=(
            "Queues a verification of the pull request at `commit` (or at every pinned commit) and answers "
            "at once; poll `status_url`. Needs the Reviewer role on the repository "
            "(or `findings.verify_pullrequest` instance-wide)."
        ),
        parameters=docs.PULL_REQUEST_PATH,
        request=VerifyRequestSerializer,
        responses={202: VerifyResponseSerializer, **docs.WRITE_ERRORS, 404: docs.NOT_FOUND},
    )
)
class PullRequestVerify(ActionView):
    required_action = Action.VERIFY

    def post(self, request, owner: str, name: str, number: int):
        pull_request = pull_request_by_number(
            owner=owner, name=name, number=number, repository_ids=repository_limit(request)
        )
        object_action_check(request, self, pull_request.repository)
        body = VerifyRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        # The service writes the run and its commit in one transaction and enqueues the task when
        # it commits; no transaction here, or a refusal it records would roll back with the error.
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
            "The same change the site and the admin make, recorded in the finding's history with source `api`. "
            "Fixing needs the commit it was fixed in, which must resolve in the repository's mirror (an unknown "
            "SHA, an ambiguous one, whose `candidates` are listed, and a repository not fetched yet are refused "
            "on `commit`). Where the latest verification at that commit says the evidence still holds, the "
            "change is refused with `still_holds` (the commit and the verdict) unless `anyway` is true and a "
            "note says why. Dismissing needs a note. Needs the Maintainer role on the repository (or `findings.resolve_finding` instance-wide)."
        ),
        parameters=docs.ID_PATH,
        request=ResolveRequestSerializer,
        responses={200: ResolveResponseSerializer, **docs.WRITE_ERRORS, 404: docs.NOT_FOUND},
        examples=[
            OpenApiExample("Fixed", value={"status": "fixed", "commit": "3f2c9a1d", "note": "Tolerance back to 100."},
                           request_only=True),
            OpenApiExample("Fixed anyway", value={"status": "fixed", "commit": "3f2c9a1d", "anyway": True,
                                                  "note": "The flag stays, but nothing reads it any more."},
                           request_only=True),
            OpenApiExample("Dismissed", value={"status": "dismissed", "note": "Out of scope for this PR."},
                           request_only=True),
        ],
    )
)
class FindingResolve(ActionView):
    required_action = Action.RESOLVE

    def post(self, request, pk: int):
        finding = _finding_for_action(request, self, pk)
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
            still_holds_confirmed=data["anyway"],
        )
        finding = _get_finding(request, pk)
        context = {"request": request}
        return Response(
            {
                "finding": FindingDetailSerializer(finding, context=context).data,
                "event": FindingEventSerializer(event, context=context).data,
            }
        )


def _get_finding(request, pk: int) -> Finding:
    return get_object_or_404(visible_to(findings_with_evidence(request), request, "pull_request__repository"), pk=pk)


def _finding_for_action(request, view, pk: int) -> Finding:
    """The finding a write names: a 404 unless the request may read it, then a 403 unless its user
    may do the view's action on its repository."""
    finding = _get_finding(request, pk)
    object_action_check(request, view, finding.pull_request.repository)
    return finding


@extend_schema_view(
    put=extend_schema(
        tags=["tags"],
        operation_id="finding_tags_set",
        summary="Set a finding's tags",
        description=(
            "Gives the finding exactly these tags (slugs: lower-case words joined by hyphens); a tag not "
            "seen before is created, shared by every repository. Needs the Reviewer role on the "
            "finding's repository (or `findings.change_finding` instance-wide)."
        ),
        parameters=docs.ID_PATH,
        request=TagsRequestSerializer,
        responses={200: FindingDetailSerializer, **docs.WRITE_ERRORS, 404: docs.NOT_FOUND},
        examples=[OpenApiExample("Two tags", value={"tags": ["silent-failure", "dependency"]}, request_only=True)],
    )
)
class FindingTags(ActionView):
    required_action = Action.WRITE

    def put(self, request, pk: int):
        finding = _finding_for_action(request, self, pk)
        body = TagsRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        finding_tags_set(finding=finding, slugs=body.validated_data["tags"])
        return Response(FindingDetailSerializer(_get_finding(request, pk), context={"request": request}).data)


@extend_schema_view(
    put=extend_schema(
        tags=["tags"],
        operation_id="tag_describe",
        summary="Describe a tag",
        description=(
            "Sets what findings with this tag have in common, creating the tag when it is new (tags are "
            "shared by every repository). Needs the Reviewer role (writing findings) on a repository."
        ),
        parameters=[OpenApiParameter("slug", OpenApiTypes.STR, OpenApiParameter.PATH, description="The tag's slug.")],
        request=TagDescriptionRequestSerializer,
        responses={200: TagSerializer, **docs.WRITE_ERRORS, 404: docs.NOT_FOUND},
    )
)
class TagDescription(ActionView):
    required_action = Action.WRITE

    def put(self, request, slug: str):
        # Tags are shared; one used only in repositories the request may not read is not shown to
        # it (tags_with_counts), so it is not described by it either. A new slug makes a new tag.
        if not request_reads_everything(request) and re.fullmatch(TAG_SLUG_RE, slug) and (
            Tag.objects.filter(slug=slug).exists()
        ) and not (
            tags_with_counts(request_repositories(request)).filter(slug=slug).exists()
        ):
            raise NotFound(f"No tag {slug} is used here.")
        body = TagDescriptionRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        tag = tag_describe(slug=slug, description=body.validated_data["description"])
        tag = Tag.objects.annotate(findings_count=Count("findings")).get(pk=tag.pk)
        return Response(TagSerializer(tag, context={"request": request}).data)


def _other_finding(request, value: str) -> Finding:
    """The finding a link names, by id or as `owner/name#4108/4`; a token limited to repositories
    reaches only theirs."""
    value = value.strip()
    if value.isdigit():
        return _get_finding(request, int(value))
    finding = finding_by_reference(value, repositories=request_repositories(request))
    allowed = token_repository_ids(request)
    if allowed is not None and finding.pull_request.repository_id not in allowed:
        raise NotFound(f"No finding {value} is recorded here.")
    return finding


@extend_schema_view(
    post=extend_schema(
        tags=["findings"],
        operation_id="finding_link_create",
        summary="Link a finding to another",
        description=(
            "Records that this finding is a duplicate of another, a follow-up of it, or has the same cause, in "
            "any pull request or repository. The link shows on both findings. Two findings are linked once. "
            "Needs the Reviewer role on this finding's repository (or `findings.change_finding` instance-wide); "
            "the other finding must be one you may read."
        ),
        parameters=docs.ID_PATH,
        request=LinkRequestSerializer,
        responses={201: FindingLinkSerializer, **docs.WRITE_ERRORS, 404: docs.NOT_FOUND},
        examples=[
            OpenApiExample("Duplicate", value={"kind": "duplicate_of", "finding": "acme/loader#4108/4"},
                           request_only=True)
        ],
    )
)
class FindingLinks(ActionView):
    required_action = Action.WRITE

    def post(self, request, pk: int):
        finding = _finding_for_action(request, self, pk)
        body = LinkRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        link = finding_link_create(
            source=finding, target=_other_finding(request, data["finding"]), kind=data["kind"], actor=request.user,
            note=data["note"],
        )
        link = FindingLink.objects.select_related("target__pull_request__repository").get(pk=link.pk)
        return Response(
            FindingLinkSerializer(finding_link_data(link, finding), context={"request": request}).data,
            status=status.HTTP_201_CREATED,
        )


@extend_schema_view(
    delete=extend_schema(
        tags=["findings"],
        operation_id="finding_link_delete",
        summary="Remove a link between two findings",
        description="From either end. Needs the Reviewer role on the finding's repository (or "
        "`findings.change_finding` instance-wide).",
        parameters=docs.ID_PATH + [OpenApiParameter("link", OpenApiTypes.INT, OpenApiParameter.PATH)],
        responses={204: None, **docs.WRITE_ERRORS, 404: docs.NOT_FOUND},
    )
)
class FindingLinkDetail(ActionView):
    required_action = Action.WRITE

    def delete(self, request, pk: int, link: int):
        finding = _finding_for_action(request, self, pk)
        found = get_object_or_404(FindingLink.objects.filter(Q(source=finding) | Q(target=finding)), pk=link)
        finding_link_delete(link=found)
        return Response(status=status.HTTP_204_NO_CONTENT)


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
            "server needs)."
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
    required_action = Action.IMPORT
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


@extend_schema_view(
    patch=extend_schema(
        tags=["repositories"],
        operation_id="repository_publishing_update",
        summary="Turn reporting to GitHub on or off for a repository",
        description=(
            "With `publish_checks`, every verified head gets a \"Recheck\" check run (with a GitHub App; with "
            "only a token, a `recheck` commit status). With `publish_comment`, the pull request gets one "
            "comment, edited after each verification. Both are off until turned on. Needs "
            "the Admin role on the repository (or `reviews.change_repository` instance-wide), and a token needs "
            "the `settings` scope."
        ),
        parameters=docs.REPOSITORY_PATH,
        request=PublishingSerializer,
        responses={200: RepositorySerializer, **docs.WRITE_ERRORS, 404: docs.NOT_FOUND},
    )
)
class RepositoryPublishing(ActionView):
    required_action = Action.SETTINGS

    def patch(self, request, owner: str, name: str):
        repositories = visible_to(Repository.objects.all(), request, "pk")
        repository = get_object_or_404(repositories, slug=f"{owner}/{name}")
        object_action_check(request, self, repository)
        body = PublishingSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        repository = repository_publishing_update(repository=repository, **body.validated_data)
        return Response(RepositorySerializer(repository, context={"request": request}).data)
