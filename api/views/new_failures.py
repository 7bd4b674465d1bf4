"""New failures since the review: what a pull request's CI reports at its head fail on that none of
its findings names. The site's pages list the same (`findings.selectors.new_failures`)."""
from dataclasses import asdict

from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework.response import Response
from rest_framework.views import APIView

from api import docs
from api.serializers.reports import NewFailuresSerializer
from api.views.reading import ReadMixin
from findings.selectors.new_failures import LISTED, pull_request_new_failures


@extend_schema_view(
    get=extend_schema(
        tags=["reports"],
        operation_id="pull_request_new_failures",
        summary="What fails at the head that no finding names?",
        description=(
            "The failed tests and the scanner results (error and warning) in the CI reports kept at the PR's head "
            "that no check item of its findings names, and the failed checks no item names whose reports give "
            "neither. A test that both failed and passed there is flaky and not listed. Each comes with the check "
            f"item that names it, ready to record as a finding's evidence. The first {LISTED} are listed; `count` "
            "says how many there are."
        ),
        parameters=docs.PULL_REQUEST_PATH,
        responses={200: NewFailuresSerializer, **docs.DETAIL_ERRORS},
    )
)
class PullRequestNewFailures(ReadMixin, APIView):
    def get(self, request, owner: str, name: str, number: int):
        pull_request = self.pull_request(owner=owner, name=name, number=number)
        found = pull_request_new_failures(pull_request)
        return Response({
            "pull_request": pull_request.reference,
            "head": found.sha or None,
            "reported": found.reported,
            "count": found.count,
            "failures": [{**asdict(failure), "evidence": failure.evidence(found.sha)} for failure in found.listed],
        })
