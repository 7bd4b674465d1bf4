"""The open findings of a pull request where they are at a commit, as the check run annotates
them: what `recheck-gate --format rdjson|codeclimate` prints, for reviewdog's and GitLab's
reporters."""
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from api import docs
from api.lookups import pull_request_by_number, recorded_commit
from api.permissions import PublicReadOrAuthenticated, TokenScope, repository_limit
from api.serializers.errors import ErrorSerializer
from core.errors import RecheckError
from forge.content import open_finding_annotations
from reviews.selectors import pull_request_latest_head


class AnnotationSerializer(serializers.Serializer):
    number = serializers.IntegerField()
    kind = serializers.ChoiceField(choices=["blocker", "cleanup"])
    verdict = serializers.CharField(help_text="Its verdict at the commit; empty when not verified there.")
    level = serializers.ChoiceField(choices=["failure", "notice"], help_text="As on the check run.")
    title = serializers.CharField()
    message = serializers.CharField()
    path = serializers.CharField()
    start_line = serializers.IntegerField(min_value=1)
    end_line = serializers.IntegerField(min_value=1)
    url = serializers.CharField(help_text="The finding's page; empty when RECHECK_SITE_URL is not set.")


class AnnotationsSerializer(serializers.Serializer):
    pull_request = serializers.CharField()
    commit = serializers.CharField()
    annotations = AnnotationSerializer(many=True)


@extend_schema_view(
    get=extend_schema(
        tags=["merge gate"],
        operation_id="pull_request_annotations",
        summary="The open findings where they are at a commit",
        description=(
            "Each open finding (blockers and cleanups) at its location at `commit`: where its evidence holds "
            "there, else where it was recorded. The same annotations the Recheck check run carries. Without "
            "`commit`, the latest pinned head."
        ),
        parameters=docs.PULL_REQUEST_PATH
        + [OpenApiParameter("commit", OpenApiTypes.STR, OpenApiParameter.QUERY,
                            description="Full or abbreviated SHA. Default: the latest pinned head.")],
        responses={
            200: AnnotationsSerializer,
            400: OpenApiResponse(ErrorSerializer, description="Unknown, ambiguous or malformed commit."),
            **docs.DETAIL_ERRORS,
        },
    )
)
class PullRequestAnnotations(APIView):
    permission_classes = [PublicReadOrAuthenticated, TokenScope]

    def get(self, request, owner: str, name: str, number: int):
        pull_request = pull_request_by_number(
            owner=owner, name=name, number=number, repository_ids=repository_limit(request)
        )
        sha = request.query_params.get("commit", "").strip()
        commit = recorded_commit(repository=pull_request.repository, sha=sha) if sha else pull_request_latest_head(
            pull_request
        )
        if commit is None:
            raise RecheckError(f"{pull_request.reference} has no pinned head commit: pass ?commit=<sha>.")
        annotations = open_finding_annotations(pull_request=pull_request, commit=commit)
        return Response({
            "pull_request": pull_request.reference,
            "commit": commit.sha,
            "annotations": [
                {key: getattr(item, key) for key in AnnotationSerializer().fields} for item in annotations
            ],
        })
