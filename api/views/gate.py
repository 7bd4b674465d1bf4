"""The merge gate: may this pull request merge at this commit? Answered from the pull request's
stored state in one query (or, for a commit the state does not hold, looked up in full and cached by
the PR's generation), and described in the schema with examples."""
import functools
import json
from urllib.parse import quote_plus

from django.core.cache import cache
from django.http import HttpResponse
from django.urls import get_script_prefix
from django.urls import reverse as django_reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_view
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.reverse import reverse
from rest_framework.views import APIView

from api import docs
from api.lookups import recorded_commit
from api.permissions import read_scope
from api.revalidation import content_etag, not_modified, revalidation_headers
from api.serializers.errors import ErrorSerializer
from api.serializers.gate import GateSerializer
from api.views.reading import ReadMixin
from core.errors import RecheckError
from findings.selectors.gate import (
    GATE_CACHE_SECONDS,
    MergeGate,
    gate_cache_key,
    pull_request_gate,
    pull_request_gate_read,
)
from findings.state.stored import gate_body
from reviews.selectors import pull_request_latest_head


_BLOCKED_EXAMPLE = {
    "pull_request": "acme/loader#4108",
    "commit": "3f2c9a1d0b8e7f6a5c4d3e2f1a0b9c8d7e6f5a4b",
    "mergeable": False,
    "verified": True,
    "reason": "2 open blocker(s) at 3f2c9a1d (1 look likely fixed: a human marks them fixed).",
    "open_blockers": [
        {"id": 17, "number": 1, "title": "Tolerance lowered to 10", "verdict": "present", "verdict_reason": "",
         "url": "https://recheck.example.com/acme/loader/pull/4108/findings/1/"},
        {"id": 18, "number": 3, "title": "Cache key ignores the dtype", "verdict": "likely_fixed", "verdict_reason": "",
         "url": "https://recheck.example.com/acme/loader/pull/4108/findings/3/"},
    ],
    "open_blockers_count": 2,
    "possibly_regressed": [],
    "possibly_regressed_count": 0,
    "open_blockers_url": "https://recheck.example.com/api/findings/?repository=acme%2Floader"
    "&pull_request_number=4108&kind=blocker&status=open&cursor=",
    "how_to_verify": None,
    "verification_run": None,
}
_UNVERIFIED_EXAMPLE = {
    **_BLOCKED_EXAMPLE,
    "verified": False,
    "reason": "2 open blocker(s); 2 not yet verified at 3f2c9a1d: request a verification (how_to_verify).",
    "open_blockers": [{**entry, "verdict": None} for entry in _BLOCKED_EXAMPLE["open_blockers"]],
    "how_to_verify": 'POST https://recheck.example.com/api/repos/acme/loader/pulls/4108/verify '
    '{"commit": "3f2c9a1d0b8e7f6a5c4d3e2f1a0b9c8d7e6f5a4b"}',
}
_MERGEABLE_EXAMPLE = {
    **_BLOCKED_EXAMPLE,
    "mergeable": True,
    "reason": "No open blocker at 3f2c9a1d.",
    "open_blockers": [],
    "open_blockers_count": 0,
}


@functools.cache
def _findings_path(script_prefix: str) -> str:
    """The findings list's path (under the script prefix it is cached by): reversed once, since
    reversing costs as much as the rest of a stored answer's request."""
    return django_reverse("api:finding-list")


# Compact JSON, as DRF's renderer and `gate_body` write it. One encoder for every answer: json.dumps
# with options builds a new one on each call.
_json = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


@extend_schema_view(
    get=extend_schema(
        tags=["merge gate"],
        operation_id="pull_request_gate",
        summary="May this pull request merge at this commit?",
        description=(
            "`mergeable` is true when the commit is verified and no blocker is open. A blocker that "
            "verification finds `likely_fixed` stays open (and listed, with its verdict) until a human "
            "marks it fixed. An unverified commit gives `verified: false`, `mergeable: false` and "
            "`how_to_verify`. Without `commit`, the latest pinned head is used.\n\n"
            "The answer lists at most 50 open blockers (and 50 possibly regressed), lowest numbers first, "
            "beside `open_blockers_count` (and `possibly_regressed_count`); `open_blockers_url` lists "
            "every open blocker of the pull request in cursor pages. So the answer stops growing at a "
            "hundred entries, for a pull request of 25,000 findings as for one of 40.\n\n"
            "In CI: `curl -fsS -H \"Authorization: Token $RECHECK_TOKEN\" "
            "\"$RECHECK/api/repos/OWNER/NAME/pulls/N/gate?commit=$SHA\" | jq -e .mergeable`"
        ),
        parameters=docs.PULL_REQUEST_PATH
        + [
            OpenApiParameter(
                "commit", OpenApiTypes.STR, OpenApiParameter.QUERY,
                description="Full or abbreviated SHA (7-40 hex digits). Default: the latest pinned head.",
            )
        ],
        responses={
            200: GateSerializer,
            400: OpenApiResponse(
                ErrorSerializer, description="Unknown, ambiguous or malformed commit, or no pinned head to default to."
            ),
            **docs.DETAIL_ERRORS,
        },
        examples=[
            OpenApiExample("Open blockers", value=_BLOCKED_EXAMPLE, response_only=True),
            OpenApiExample("Not yet verified", value=_UNVERIFIED_EXAMPLE, response_only=True),
            OpenApiExample("Mergeable", value=_MERGEABLE_EXAMPLE, response_only=True),
            OpenApiExample(
                "Ambiguous commit", status_codes=["400"], response_only=True,
                value={
                    "detail": "Commit 3f2c9a1 of acme/loader is ambiguous: it could be 3f2c9a1d…, 3f2c9a1e…. "
                    "Give more digits."
                },
            ),
        ],
    )
)
class PullRequestGate(ReadMixin, APIView):
    def get(self, request, owner: str, name: str, number: int):
        sha = request.query_params.get("commit", "").strip().lower()
        reference = f"{owner}/{name}#{number}"
        # The answer stored with the state of the PR's current generation, which every change to
        # what the gate reads moves forward (findings.receivers): one indexed query, however many
        # findings, that also finds the PR within what the caller may read.
        found = pull_request_gate_read(slug=f"{owner}/{name}", number=number, sha=sha,
                                       repositories=read_scope(request))
        if found is not None and found.stored is not None:
            stored = found.stored
            content = self._content(stored.body, reference=reference, sha=stored.sha, verified=stored.verified,
                                    run=stored.active_run, owner=owner, name=name, number=number)
        else:
            # Not stored (a commit that is not pinned, an abbreviation to look up, a state not yet
            # derived) or not found: looked up in full, for the answer or the error that says what to
            # do, and kept in the cache under the generation read above.
            key = found and gate_cache_key(pull_request_id=found.pull_request_id, generation=found.generation,
                                           sha=sha, origin=request.build_absolute_uri("/"))
            content = cache.get(key) if key else None
            if content is None:
                gate = self._gate(owner=owner, name=name, number=number, sha=sha)
                body = gate_body(gate.answer, findings_url=f"{gate.pull_request_url}findings/")
                content = self._content(body, reference=reference, sha=gate.commit.sha, verified=gate.verified,
                                        run=gate.active_run, owner=owner, name=name, number=number)
                # Answers with a run under way are not cached, since they report its progress; nor
                # those that change with time alone (an overdue follow-up the policy counts).
                if key and gate.active_run is None and gate.valid_until is None:
                    cache.set(key, content, GATE_CACHE_SECONDS)
        if request.accepted_renderer.format == "json":
            # The answer is in hand in a query or two: its own bytes key the ETag, so a CI job that
            # sends it back is answered 304 while the answer stands.
            etag = content_etag(content)
            current = not_modified(request, etag)
            if current is not None:
                return current
            return revalidation_headers(HttpResponse(content, content_type=JSONRenderer.media_type), etag)
        return Response(json.loads(content))  # the browsable API

    def _content(self, body: str, *, reference: str, sha: str, verified: bool, run, owner: str, name: str,
                 number: int) -> bytes:
        """The answer's JSON: its stored part (`gate_body`), with what depends on the request around
        it: the site's address before its findings' paths (a path's `"url":"/` cannot occur inside
        a JSON string, whose quotes are escaped), where every open blocker is listed, how to verify,
        the run under way."""
        site = self.request.build_absolute_uri("/")[:-1]
        body = body.replace('"url":"/', f'"url":"{_json(site)[1:-1]}/')
        # What urlencode makes of the list's filters; only the repository's slug needs quoting.
        listed = (f"{site}{_findings_path(get_script_prefix())}?repository={quote_plus(f'{owner}/{name}')}"
                  f"&pull_request_number={number}&kind=blocker&status=open&cursor=")
        how_to_verify = None if verified else f'POST {self._verify_url(owner, name, number)} {{"commit": "{sha}"}}'
        run_json = None if run is None else {
            "id": run.pk, "status": run.status,
            "status_url": reverse("api:run-detail", kwargs={"pk": run.pk}, request=self.request),
        }
        head = _json({"pull_request": reference, "commit": sha})
        tail = _json({"open_blockers_url": listed, "how_to_verify": how_to_verify, "verification_run": run_json})
        return f"{head[:-1]},{body[1:-1]},{tail[1:]}".encode()

    def _verify_url(self, owner: str, name: str, number: int) -> str:
        return reverse(
            "api:pull-request-verify", kwargs={"owner": owner, "name": name, "number": number}, request=self.request
        )

    def _gate(self, *, owner: str, name: str, number: int, sha: str) -> MergeGate:
        pull_request = self.pull_request(owner=owner, name=name, number=number)
        if sha:
            commit = recorded_commit(
                repository=pull_request.repository,
                sha=sha,
                hint=f'Request its verification first: POST {self._verify_url(owner, name, number)} '
                f'{{"commit": "{sha}"}}',
            )
        else:
            commit = pull_request_latest_head(pull_request)
            if commit is None:
                raise RecheckError(
                    f"{pull_request.reference} has no pinned head commit: pass ?commit=<sha>, or let the GitHub "
                    "webhook pin each push."
                )
        return pull_request_gate(pull_request=pull_request, commit=commit)
