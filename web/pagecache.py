"""Pages built once per generation, kept and revalidated.

A page a reader asks for again and again between two writes (a PR's three pages, a finding's page)
is rendered once and kept under a key of everything its bytes depend on (`PageKey`):

- what it reads: the pull request's generation, which every write its pages can show moves
  forward (`findings.receivers`), or for a page across pull requests a version of theirs;
- the reader's visibility there: signed in or not, the repository's visibility, and the actions
  the reader holds on it (`access.permissions.user_may`, asked for each): the role decides the
  buttons a page shows, so a Reader never gets a page made for a Maintainer;
- the URL as asked (its path and the few parameters the page reads) and the render version
  (`presentation.versions.render_version`), which moves when the templates or the code that draws
  pages change.

What is the request's own is never in a kept page: the site's navigation (the user's name, the
sign-out form) is left as a mark and put in for each request (drawn once a process for each kind
of reader: `navigation`), the CSRF token is a mark replaced by the request's own, and a page with messages waiting to be shown is rendered for that request
alone. The pages' scripts are files, so no CSP nonce is needed.

Each kept page answers with an ETag made from its key and the request's own parts, so a browser
that has it asks again with If-None-Match and gets a 304 without the page being built or read.

A state the build derived (the first read after a write) is stored once the page is sent
(`findings.state.stored.states_stored_after`): the reader does not wait for its INSERTs.

The generation is read before the page is built and again before it is kept: a page built while
a write moved the generation is served to its reader, never kept under the old key (which a later
reader would take for current). The cache is a help, never a need: with Redis down a page is
rendered and served as before (`recheck.cache`)."""
from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property

from django.conf import settings
from django.contrib.auth.models import AnonymousUser
from django.contrib.messages import get_messages
from django.contrib.messages.storage.cookie import CookieStorage
from django.core.cache import cache
from django.http import HttpResponse
from django.middleware.csrf import get_token
from django.template.loader import render_to_string
from django.utils.cache import get_conditional_response, patch_cache_control, patch_vary_headers
from django.utils import timezone
from django.utils.crypto import salted_hmac

from access.permissions import Action, reads_everything, user_may
from findings.state.stored import states_store, states_stored_after
from presentation.versions import render_version
from reviews.selectors import readable_repositories

# A bound on how long a page nobody asks for again is kept: staleness is ruled out by the key, and
# this only lets memory go (every entry expires, so a full Redis drops pages before tasks).
PAGE_CACHE_SECONDS = 3600
# What base.html writes instead of the navigation when a page is rendered to be kept.
NAV_MARK = "<!--recheck:site-nav-->"
# What `{% csrf_token %}` writes into a page rendered to be kept, replaced by the request's token.
CSRF_MARK = "recheck-csrf-token-mark"
# The only query parameters a kept page may be asked with, and what each may look like: any other
# (or a value that is not one of these shapes) makes a page of its own that is rendered and not kept,
# so a crawler cannot fill the cache with copies of one page.
# Only the first pages of a list are kept: a walk through deep pages goes one way.
KEPT_PAGES = 50
def _page_number(value: str) -> bool:
    return value.isdigit() and value[0] != "0" and int(value) <= KEPT_PAGES


PAGE_PARAMETERS = {
    "page": _page_number,
    "commit": lambda value: 7 <= len(value) <= 40 and all(c in "0123456789abcdef" for c in value),
}
# The home page and its search: a question (bounded in length) and the form's choices.
SEARCH_PARAMETERS = {
    "page": _page_number,
    "q": lambda value: len(value) <= 200,
    **{name: lambda value: len(value) <= 40 for name in ("kind", "status", "verdict", "repository")},
}


@dataclass(frozen=True)
class Visibility:
    """What decides how a reader sees a repository's pages: signed in or not, the repository's
    visibility and the actions the reader holds there. The page's buttons are read from it
    (`may`), so what a kept page shows and the key it is kept under cannot disagree."""

    signed_in: bool
    repository: str
    actions: tuple[str, ...]

    def may(self, action: Action) -> bool:
        return Action(action).value in self.actions


def _visibility(user, repository) -> Visibility:
    return Visibility(
        signed_in=bool(user.is_authenticated),
        repository=repository.visibility,
        actions=tuple(action.value for action in Action if user_may(user, action, repository)),
    )


# An anonymous reader's visibility, by what `user_may` reads to answer for one (the repository
# and its visibility, and whether the server is read publicly): asked once a process for each, as
# it was most of a kept page's work after the key's query. Emptied when full.
_ANONYMOUS: dict[tuple, Visibility] = {}
ANONYMOUS_KEPT = 1024


def reader_visibility(user, repository) -> Visibility:
    """`user`'s visibility on `repository`: one answer, `user_may`, asked for each action (for an
    anonymous reader, once a process for each repository as it stands)."""
    return visibility_on(user, repository.pk, repository.visibility, lambda: repository)


def visibility_on(user, repository_id: int, visibility: str, repository: Callable) -> Visibility:
    """`reader_visibility` on the repository `repository_id` of `visibility`, which `repository()`
    gives when `user_may` has to be asked."""
    if user.is_authenticated:
        return _visibility(user, repository())
    facts = (repository_id, visibility, bool(settings.RECHECK_PUBLIC_READ))
    seen = _ANONYMOUS.get(facts)
    if seen is None:
        if len(_ANONYMOUS) >= ANONYMOUS_KEPT:
            _ANONYMOUS.clear()
        seen = _ANONYMOUS[facts] = _visibility(user, repository())
    return seen


def reader_scope(user) -> tuple:
    """What `user` may read across repositories, for a page that shows findings of other
    repositories than its own (a finding's related findings): everything, the public ones, or the
    ids of those they read (one query). A role granted or taken away makes another scope."""
    if reads_everything(user):
        return ("everything",)
    if not user.is_authenticated:
        return ("public",)
    return tuple(readable_repositories(user).order_by("pk").values_list("pk", flat=True))


def page_hour() -> str:
    """For the key of a page that shows ages (how long a blocker or a follow-up has been open, a
    chart by day): the hour it is built in. Such a page is built again within the hour after it
    was first read, so an age it shows is at most an hour behind."""
    return timezone.now().strftime("%Y-%m-%dT%H")


def kept_query(request, parameters: dict | None = None) -> tuple | None:
    """The query parameters a kept page is keyed by (`parameters`: name -> a check of its value;
    a PR's pages by default); None when the URL carries any other, a parameter twice, or a value
    that fails its check (the page is rendered, not kept)."""
    if not request.META.get("QUERY_STRING"):
        return ()  # none at all (most requests): the parameters are not parsed
    parameters = PAGE_PARAMETERS if parameters is None else parameters
    kept = []
    for name, values in request.GET.lists():
        check = parameters.get(name)
        if check is None or len(values) != 1 or not check(values[0]):
            return None
        kept.append((name, values[0]))
    return tuple(kept)


@dataclass(frozen=True)
class PageKey:
    """Everything a kept page's bytes depend on. `reads` says what it reads and at which
    generation; `reader` is `reader_visibility`; `extra` anything else the page shows that no
    generation follows. `keep` is False for a page that must not be kept (a run under way, whose
    progress it shows; a URL `kept_query` refuses)."""

    page: str
    path: str
    reads: tuple
    reader: Visibility
    query: tuple | None
    extra: tuple = ()
    keep: bool = True
    # Whether the data the page read is still current, asked after it is built and before it is
    # kept (the generation read again).
    still_current: Callable[[], bool] = field(default=lambda: True, compare=False, repr=False)

    @property
    def kept(self) -> bool:
        return self.keep and self.query is not None

    @cached_property
    def digest(self) -> str:
        parts = (render_version(), self.page, self.path, self.reads, self.reader, self.query, self.extra)
        return hashlib.sha256(repr(parts).encode("utf-8", "surrogatepass")).hexdigest()

    @property
    def cache_key(self) -> str:
        return f"page:1:{self.digest}"


def _request_parts(request, *, with_csrf: bool = True) -> tuple:
    """What the request adds to a kept page (the navigation and the CSRF token): a browser's copy
    is current only for the same user, name, staff flag, decision link and CSRF cookie."""
    user = request.user
    if not user.is_authenticated:
        return ("anonymous",)
    parts = (user.pk, user.get_username(), user.is_staff, user_may(user, Action.RESOLVE))
    if not with_csrf:
        return parts
    csrf = request.COOKIES.get(settings.CSRF_COOKIE_NAME, "")
    return (*parts, hashlib.sha256(csrf.encode()).hexdigest())


# The ETags' key, derived from the server's secret once a process for each secret (as
# `salted_hmac` derives its own on every call, which was a good part of a 304's work).
_ETAG_KEYS: dict[str, bytes] = {}


def _etag_key() -> bytes:
    secret = settings.SECRET_KEY
    key = _ETAG_KEYS.get(secret)
    if key is None:
        _ETAG_KEYS.clear()  # one secret at a time: a new one retires the old key
        key = _ETAG_KEYS[secret] = salted_hmac("page-etag", "key", algorithm="sha256").digest()
    return key


def page_etag(request, key: PageKey) -> str:
    # Keyed with the server's secret (BLAKE2's keyed mode is a MAC): nobody can work out the ETag
    # of a page they were not given.
    parts = f"{key.digest} {_request_parts(request)!r}".encode("utf-8", "surrogatepass")
    return f'"{hashlib.blake2b(parts, key=_etag_key(), digest_size=20).hexdigest()}"'


def _messages_waiting(request) -> bool:
    # Messages wait in their cookie or in the session (the fallback storage): a request with
    # neither cookie (an anonymous reader's) has none unless this request added some.
    storage = getattr(request, "_messages", None)
    if storage is None:
        return False
    if (not storage.added_new and CookieStorage.cookie_name not in request.COOKIES
            and settings.SESSION_COOKIE_NAME not in request.COOKIES):
        return False
    # len() loads the messages without marking them read: they are still shown by the render.
    return bool(len(get_messages(request)))


def _patch(response: HttpResponse, signed_in: bool) -> None:
    patch_vary_headers(response, ("Cookie",))
    # Asked again every time (the ETag makes that a 304); a signed-in reader's page is theirs alone.
    if signed_in:
        patch_cache_control(response, private=True, no_cache=True)
    else:
        patch_cache_control(response, no_cache=True)


@functools.cache
def _patched(signed_in: bool) -> tuple[tuple[str, str], ...]:
    """What `_patch` writes on a response that has neither header: worked out once a process."""
    response = HttpResponse()
    _patch(response, signed_in)
    return tuple((name, response.headers[name]) for name in ("Vary", "Cache-Control"))


def _headers(response: HttpResponse, request, etag: str | None) -> HttpResponse:
    headers = response.headers
    if etag is not None:
        headers["ETag"] = etag
    signed_in = request.user.is_authenticated
    if "Vary" in headers or "Cache-Control" in headers:
        _patch(response, signed_in)
    else:
        # The answers made here have neither (a 304 above all): written as `_patch` would write
        # them, without parsing headers that are not there.
        for name, value in _patched(signed_in):
            headers[name] = value
    return response


# The navigation as drawn for each kind of reader, kept in the process (it was most of a kept
# page's time): by the same parts as a page's ETag but the CSRF cookie, since its token is a mark
# too, and for an anonymous reader by the URL its sign-in link returns to. Emptied when full.
_NAVIGATIONS: dict[tuple, str] = {}
NAVIGATIONS_KEPT = 1024


def navigation(request) -> str:
    user = request.user
    parts = _request_parts(request, with_csrf=False) + (() if user.is_authenticated else (request.get_full_path(),))
    drawn = _NAVIGATIONS.get(parts)
    if drawn is None:
        if len(_NAVIGATIONS) >= NAVIGATIONS_KEPT:
            _NAVIGATIONS.clear()
        drawn = _NAVIGATIONS[parts] = render_to_string("includes/site_nav.html", {"csrf_token": CSRF_MARK}, request)
    return drawn


def filled(request, content: str) -> str:
    """A kept page with the request's own parts put in: the navigation and the CSRF token."""
    if NAV_MARK in content:
        content = content.replace(NAV_MARK, navigation(request), 1)
    if CSRF_MARK in content:
        content = content.replace(CSRF_MARK, get_token(request))
    return content


def kept_render(template: str, context: dict, request) -> str:
    """The page as it is kept: rendered as any reader with the same key would see it, with marks
    for what is the request's own. The user is hidden from the templates (only the key's
    visibility may decide what a page shows), and messages are never in it."""
    return render_to_string(
        template,
        {**context, "page_cached": True, "csrf_token": CSRF_MARK, "user": AnonymousUser(), "messages": ()},
        request,
    )


def _kept_get(cache_key: str) -> str | None:
    # A kept page never changes under its key: the site's Redis cache keeps the pages read lately
    # in the process too (`get_near`, `recheck.cache`); any other cache is asked as it is.
    get = getattr(cache, "get_near", None) or cache.get
    return get(cache_key)


def _kept_set(cache_key: str, content: str) -> None:
    set_ = getattr(cache, "set_near", None) or cache.set
    set_(cache_key, content, PAGE_CACHE_SECONDS)


def page_rendered(request, build: Callable[[], tuple[str, dict] | HttpResponse]) -> HttpResponse:
    """The page rendered for this request alone, as any page is rendered: for a request with
    messages waiting to be shown (and the reference a kept page is compared with in the tests)."""
    built = build()
    if isinstance(built, HttpResponse):
        return built
    template, context = built
    return _headers(HttpResponse(render_to_string(template, context, request)), request, None)


def page_served(request, key: PageKey, build: Callable[[], tuple[str, dict] | HttpResponse]) -> HttpResponse:
    """The page `key` names: 304 when the browser's copy is current, else the kept page, else
    built (`build` gives a template and its context, or a response of its own, which is sent as
    it is) and kept when its key says so and its data did not move while it was built."""
    if _messages_waiting(request):
        return page_rendered(request, build)
    etag = page_etag(request, key) if key.kept else None
    if etag is not None:
        not_modified = get_conditional_response(request, etag=etag)
        if not_modified is not None:
            return _headers(not_modified, request, etag)
        content = _kept_get(key.cache_key)
        if content is not None:
            return _headers(HttpResponse(filled(request, content)), request, etag)
    with states_stored_after() as pending:
        built = build()
        if isinstance(built, HttpResponse):
            states_store(pending)
            return built
        template, context = built
        content = kept_render(template, context, request)
    if etag is not None:
        if key.still_current():
            _kept_set(key.cache_key, content)
        else:
            etag = None  # what was built is not what the key names: served once, not kept
    return _headers(_StoringAfter(filled(request, content), pending=pending), request, etag)


class _StoringAfter(HttpResponse):
    """A page built from a state derived for it, which is stored once the page is sent: the server
    closes a response after writing it, and the test client as it hands it back."""

    def __init__(self, content: str, *, pending: list):
        super().__init__(content)
        self._pending = pending

    def close(self):
        states_store(self._pending)
        super().close()
