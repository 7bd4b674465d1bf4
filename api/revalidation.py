"""ETags and 304s for the API's reads of one pull request and one finding, and the gate.

A tool that polls a pull request or a finding sends back the ETag it was given (If-None-Match)
and is answered 304 Not Modified, without the answer being built, while nothing it shows has
changed. The ETag is made from what the answer depends on, read before it is built:

- the generation of what it reads (`version`): the pull request's, which every write its answer
  can show moves forward; for a finding, every pull request's (its links show findings of others);
- what the caller may read (`listcache.read_scope_key`), and the URL, media type, site and time
  zone it is written for.

A write made while the answer is built moves the generation past the ETag it is sent with, so the
next ask is a 200, never a 304 that keeps a stale copy. If-None-Match is read as HTTP says
(Django's `get_conditional_response`): a list, `*` and weak validators match, a malformed value
matches nothing."""
import hashlib

from django.utils import timezone
from django.utils.crypto import salted_hmac
from django.utils.cache import get_conditional_response, patch_cache_control, patch_vary_headers

from api.listcache import read_scope_key


def etag_of(request, version: tuple) -> str:
    parts = (
        version,
        read_scope_key(request),
        request.get_full_path(),
        request.accepted_media_type,
        request.build_absolute_uri("/"),
        timezone.get_current_timezone_name(),
    )
    # Signed with the server's secret: nobody can work out the ETag of an answer they were not given.
    return f'"{salted_hmac("api-etag", repr(parts), algorithm="sha256").hexdigest()[:40]}"'


def content_etag(content: bytes) -> str:
    """An ETag made from an answer's own bytes: for one that costs less to build than to key (the
    gate's stored answer)."""
    return f'"{hashlib.sha256(content).hexdigest()[:40]}"'


def revalidation_headers(response, etag: str):
    response["ETag"] = etag
    patch_vary_headers(response, ("Authorization", "Cookie"))
    # Asked again every time (a 304 when current); an answer for one caller's token is theirs.
    patch_cache_control(response, private=True, no_cache=True)
    return response


def not_modified(request, etag: str):
    """A 304 when the caller's copy (If-None-Match) is current, else None."""
    response = get_conditional_response(request, etag=etag)
    return None if response is None else revalidation_headers(response, etag)


class RevalidatedMixin:
    """For a RetrieveAPIView: `revalidation_version()` (read in a query or two, before the answer
    is built; None when there is nothing to answer) keys its ETag; JSON only."""

    def revalidation_version(self) -> tuple | None:
        raise NotImplementedError

    def retrieve(self, request, *args, **kwargs):
        if request.accepted_renderer.format != "json":
            return super().retrieve(request, *args, **kwargs)
        version = self.revalidation_version()
        if version is None:
            return super().retrieve(request, *args, **kwargs)
        etag = etag_of(request, version)
        current = not_modified(request, etag)
        if current is not None:
            return current
        response = super().retrieve(request, *args, **kwargs)
        if response.status_code == 200:
            revalidation_headers(response, etag)
        return response
