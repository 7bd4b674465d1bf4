"""The Content-Security-Policy on every answer that has a body to govern.

A `304 Not Modified` has none: the browser shows the copy it holds, under the policy it was sent
with. HTTP says a 304 carries the validators and caching fields of the answer it stands for and
SHOULD NOT carry other metadata (RFC 9110, section 15.4.5; Django's own 304s keep only those,
`django.utils.cache._not_modified`), and a browser keeps a stored answer's headers that a 304
does not name. So a 304 is sent without a policy, as it was made, and the policy is not built for
it: building it (twice, the policy and its report-only form) was a good part of what a
revalidation cost beside the trivial view."""
from http import HTTPStatus

from csp.middleware import CSPMiddleware


class PolicyMiddleware(CSPMiddleware):
    def process_response(self, request, response):
        if response.status_code == HTTPStatus.NOT_MODIFIED:
            return response
        return super().process_response(request, response)
