"""What a pull request changes, as git knows it: per file the lines added and removed between its
base and its head (equal to `git diff --numstat -M`), summed by directory, and which files its
findings touch. The site's "What does #N change?" page reads the same selector."""
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from api import docs
from api.serializers.changes import PullRequestChangesSerializer
from api.serializers.errors import ErrorSerializer
from api.views.reading import ReadMixin
from findings.selectors.changes import ChangesUnavailable, pull_request_changes

def _shown(path: str | None) -> str | None:
    # git keeps names that are not UTF-8 as they are; JSON is UTF-8 text.
    return None if path is None else path.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


STATUS_WORDS = {"A": "added", "D": "deleted", "M": "modified", "R": "renamed", "T": "type_changed"}


@extend_schema_view(
    get=extend_schema(
        tags=["pull requests"],
        operation_id="pull_request_changes",
        summary="What does this pull request change?",
        description=(
            "Every file changed between the PR's base (its base pin, or else the merge-base of its head with "
            "the default branch) and its head, with git's own counts: the same numbers as "
            "`git diff --numstat -M base head`. A binary file has `added` and `removed` null."
        ),
        parameters=docs.PULL_REQUEST_PATH,
        responses={
            200: PullRequestChangesSerializer,
            409: OpenApiResponse(
                ErrorSerializer,
                description="Not answerable in the repository's present state: it is not fetched or cannot be "
                "read, or nothing is pinned to compare. `detail` says which.",
            ),
            **docs.DETAIL_ERRORS,
        },
    )
)
class PullRequestChanges(ReadMixin, APIView):
    def get(self, request, owner: str, name: str, number: int):
        pull_request = self.pull_request(owner=owner, name=name, number=number)
        try:
            changes = pull_request_changes(pull_request)
        except ChangesUnavailable as problem:
            return Response({"detail": str(problem)}, status=status.HTTP_409_CONFLICT)
        return Response({
            "pull_request": pull_request.reference,
            "base": changes.base_sha,
            "base_source": changes.base_source,
            "head": changes.head_sha,
            "added": changes.added,
            "removed": changes.removed,
            "files": [
                {
                    "path": _shown(item.stat.path),
                    "added": item.stat.added,
                    "removed": item.stat.removed,
                    "old_path": _shown(item.stat.old_path),
                    "status": STATUS_WORDS.get(item.stat.status, "modified"),
                    "binary": item.stat.binary,
                    "findings": list(item.findings),
                }
                for item in changes.files
            ],
            "directories": [
                {"directory": _shown(row.directory), "files": row.files, "added": row.added, "removed": row.removed}
                for row in changes.directories
            ],
        })
