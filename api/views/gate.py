"""The merge gate: may this pull request merge at this commit? Answered from a cache kept by the pull
request's generation, built as plain data, and described in the schema with examples."""
import json

from django.core.cache import cache
from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_view
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.reverse import reverse
from rest_framework.views import APIView

from api import docs
from api.lookups import recorded_commit
from api.permissions import read_scope
from api.serializers.errors import ErrorSerializer
from api.serializers.gate import GateSerializer
from api.views.reading import ReadMixin
from core.errors import RecheckError
from findings.selectors.gate import (
    GATE_CACHE_SECONDS,
    MergeGate,
    gate_cache_key,
    pull_request_gate,
    StoredGate,
    pull_request_gate_stored,
    pull_request_generation,
)
from reviews.selectors import pull_request_latest_head


_BLOCKED_EXAMPLE = {
    "pull_request": "acme/loader#4108",
    "commit": "3f2c9a1d0b8e7f6a5c4d3e2f1a0b9c8d7e6f5a4b",
    "mergeable": False,
    "verified": True,
    "reason": "2 open blocker(s) at 3f2c9a1d (1 look likely fixed: a human marks them fixed).",
    "open_blockers": [
        {"id": 17, "number": 1, "title": "Tolerance lowered to 10", "verdict": "present",
         "url": "https://recheck.example.com/acme/loader/pull/4108/findings/1/"},
        {"id": 18, "number": 3, "title": "Cache key ignores the dtype", "verdict": "likely_fixed",
         "url": "https://recheck.example.com/acme/loader/pull/4108/findings/3/"},
    ],
    "possibly_regressed": [],
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
}


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
        # Cached by the PR's generation, which every change to what the gate reads moves forward
        # (findings.receivers): a cached answer is never one a write has made stale. The generation
        # is read before the answer is built, so a write made meanwhile moves past the key.
        found = pull_request_generation(slug=f"{owner}/{name}", number=number, repositories=read_scope(request))
        key = found and gate_cache_key(
            pull_request_id=found[0], generation=found[1], sha=sha, origin=request.build_absolute_uri("/")
        )
        content = cache.get(key) if key else None
        if content is None and found:
            # The answer stored with this generation's state, read without loading the PR: one
            # indexed query, however many findings. A commit it cannot name alone is looked up in full.
            stored = pull_request_gate_stored(pull_request_id=found[0], generation=found[1], sha=sha)
            if stored is not None:
                content = self._stored_content(stored, reference=f"{owner}/{name}#{number}",
                                               verify_url=self._verify_url(owner, name, number))
                if key and stored.active_run is None:
                    cache.set(key, content, GATE_CACHE_SECONDS)
        if content is None:
            gate = self._gate(owner=owner, name=name, number=number, sha=sha)
            # Built as plain data: a pull request with thousands of open blockers would spend most of
            # its time in serializer fields. GateSerializer describes the shape in the schema.
            answer = self._present(gate, self._verify_url(owner, name, number))
            # Kept as the JSON it is sent as, so a cached answer is neither unpickled nor encoded again.
            content = JSONRenderer().render(answer)
            # Answers with a run under way are not cached, since they report its progress.
            if key and gate.active_run is None:
                cache.set(key, content, GATE_CACHE_SECONDS)
        if request.accepted_renderer.format == "json":
            return HttpResponse(content, content_type=JSONRenderer.media_type)
        return Response(json.loads(content))  # the browsable API

    def _stored_content(self, stored: StoredGate, *, reference: str, verify_url: str) -> bytes:
        """The stored answer's JSON, with what depends on the request around it: the site's address
        before its findings' paths (a path's `"url":"/` cannot occur inside a JSON string, whose
        quotes are escaped), how to verify, the run under way."""
        origin = json.dumps(self.request.build_absolute_uri("/")[:-1], ensure_ascii=False)[1:-1]
        body = stored.body.replace('"url":"/', f'"url":"{origin}/')
        run = stored.active_run
        tail = {
            "how_to_verify": None if stored.verified else f'POST {verify_url} {{"commit": "{stored.sha}"}}',
            "verification_run": {
                "id": run.pk, "status": run.status,
                "status_url": reverse("api:run-detail", kwargs={"pk": run.pk}, request=self.request),
            } if run else None,
        }
        head = json.dumps({"pull_request": reference, "commit": stored.sha}, ensure_ascii=False, separators=(",", ":"))
        rest = json.dumps(tail, ensure_ascii=False, separators=(",", ":"))
        return f"{head[:-1]},{body[1:-1]},{rest[1:]}".encode()

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

    def _present(self, gate: MergeGate, verify_url: str) -> dict:
        origin = self.request.build_absolute_uri("/")[:-1]

        def entry(item):
            return {"id": item.pk, "number": item.number, "title": item.title, "verdict": item.verdict,
                    "url": origin + item.url}

        run = gate.active_run
        return {
            "pull_request": gate.pull_request_reference,
            "commit": gate.commit.sha,
            "mergeable": gate.mergeable,
            "verified": gate.verified,
            "reason": gate.reason,
            "open_blockers": [entry(item) for item in gate.open_blockers],
            "possibly_regressed": [entry(item) for item in gate.possibly_regressed],
            "how_to_verify": None if gate.verified else f'POST {verify_url} {{"commit": "{gate.commit.sha}"}}',
            "verification_run": {
                "id": run.pk,
                "status": run.status,
                "status_url": reverse("api:run-detail", kwargs={"pk": run.pk}, request=self.request),
            }
            if run
            else None,
        }
