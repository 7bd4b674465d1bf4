"""The world the persona matrix walks (tests/access/test_persona_matrix_api.py and
test_persona_matrix_site.py): a private repository A with a review, a private repository B whose
objects must never leak, a ghost that does not exist, the personas, the sample values for every
path parameter, and what each persona is expected to get.

Every URL of the site (walked from the URL patterns) and every operation of the API (read from
its OpenAPI schema), for each persona: anonymous, a reader, a reviewer and a maintainer of the
private repository A, a signed-in user with no role, a token of A's maintainer scoped to read A,
an expired token and a revoked one. A new endpoint is covered without editing this test; a path
parameter this test has no sample value for fails it, saying to add one to SAMPLES.

Each persona gets exactly what its role allows on A (reads a 200, writes done or refused as
`ROLE_ACTIONS` says), and nothing of the private repository B leaks: each URL of B answers as a
URL of a repository that does not exist would (same status, same words once the names are
swapped), never a 200, and no response to any request (lists, counts, search, tag pages, related
findings, exports, errors) carries B's slug, its titles or its tag unless the request named them.
"""
import re
from dataclasses import dataclass
from datetime import timedelta

import pytest
from django.contrib.auth.models import AnonymousUser
from django.core.cache import cache
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, resolve
from django.utils import timezone
from knox.settings import CONSTANTS
from rest_framework.test import APIClient

from access.models import ApiToken, AuditEntry, Membership
from access.permissions import ROLE_ACTIONS, Action
from access.tokens import api_token_create, api_token_revoke
from findings.models import FindingLink, GateOverride, ImportJob, Tag, TagDescription, VerificationRun
from forge.models import ForgeCall, ReviewThread
from reviews.models import Repository
from tests.factories import (
    EvidenceFactory,
    FindingFactory,
    PinnedCommitFactory,
    PullRequestFactory,
    RepositoryFactory,
    UserFactory,
    VerificationFactory,
    make_api_token,
    reviewed_pull_request,
)
from tests.api.test_actions import bundle
from tests.queued import record_queued

A_SLUG = "acme/alpha"
B_SLUG = "hidden-org/quokka"
GHOST_SLUG = "ghost-org/nothing"
B_PR_TITLE = "Quokka migration plan"
B_TITLES = ("Quokka cache key ignores the dtype", "Quokka tolerance lowered to 10")
B_TAG = "quokka-kind"
SHARED_TAG = "shared-kind"
# What must never come back unless the request itself named it.
B_WORDS = (B_SLUG, "hidden-org", "quokka", "Quokka", B_TAG)

PERSONAS = ["anonymous", "reader", "reviewer", "maintainer", "no_role", "token_read", "token_expired", "token_revoked"]
TOKEN_PERSONAS = {"token_read", "token_expired", "token_revoked"}
ROLES = {"reader": "reader", "reviewer": "reviewer", "maintainer": "maintainer"}
READS_A = {"reader", "reviewer", "maintainer", "token_read"}


@dataclass
class World:
    a: Repository
    b: Repository
    ids: dict  # sample values for URLs of A
    b_ids: dict  # the same for B
    ghost_ids: dict  # the same for a repository that does not exist
    a_words: tuple


@pytest.fixture(autouse=True, name="fresh_cache")
def fresh_cache_fixture():
    cache.clear()
    yield
    cache.clear()


@pytest.fixture(autouse=True, name="queued_tasks")
def queued_tasks_fixture(monkeypatch):
    from findings import tasks

    # Background imports too: a persona's bundle must be refused or queued, never imported here.
    return record_queued(monkeypatch, tasks.run_verification, tasks.run_import)


def _world(owner_of_import) -> World:
    review = reviewed_pull_request(slug=A_SLUG, number=41, blockers=3, cleanups=1)
    a = review.pull_request.repository
    a.visibility = Repository.Visibility.PRIVATE
    a.save()
    # The gate and the annotations default to the latest pinned head.
    PinnedCommitFactory(pull_request=review.pull_request, role="head")
    b = RepositoryFactory(slug=B_SLUG, visibility=Repository.Visibility.PRIVATE)
    b_pr = PullRequestFactory(repository=b, number=7, title=B_PR_TITLE)
    b_commit = PinnedCommitFactory(pull_request=b_pr, role="head").commit
    b_findings = [
        # The first one's title is like one of A's, and it shares A's tag and its file path: all
        # reasons for a related-finding card, which must still not show.
        FindingFactory(pull_request=b_pr, number=1, kind="blocker", title=f"{review.findings[0].title} quokka",
                       path=review.findings[0].path),
        FindingFactory(pull_request=b_pr, number=2, kind="blocker", title=B_TITLES[1]),
    ]
    for finding in b_findings:
        EvidenceFactory(finding=finding, commit=b_commit, position=0, path="src/quokka.py")
    b_verification = VerificationFactory(finding=b_findings[0], commit=b_commit)
    b_run = VerificationRun.objects.create(pull_request=b_pr, commit=b_commit)
    shared = Tag.objects.create(slug=SHARED_TAG)
    b_only = TagDescription.objects.create(tag=Tag.objects.create(slug=B_TAG), repository=b, description="Quokka").tag
    review.findings[0].tags.add(shared)
    b_findings[0].tags.add(shared, b_only)
    b_findings[1].tags.add(b_only)
    a_finding = review.findings[0]
    # A link from A's finding to B's, and one within A.
    FindingLink.objects.create(source=a_finding, target=b_findings[0], kind="same_cause")
    a_link = FindingLink.objects.create(source=a_finding, target=review.findings[1], kind="same_cause")
    b_link = FindingLink.objects.create(source=b_findings[0], target=b_findings[1], kind="same_cause")
    a_run = VerificationRun.objects.create(pull_request=review.pull_request, commit=review.latest_commit)
    a_job = ImportJob.objects.create(data={"repository": {"slug": A_SLUG}}, findings=1, requested_by=owner_of_import)
    b_job = ImportJob.objects.create(data={"repository": {"slug": B_SLUG}}, findings=1, requested_by=owner_of_import)
    a_call, b_call = (ForgeCall.objects.create(repository=repository, sha="0" * 40, kind=ForgeCall.Kind.values[0],
                                                state="completed", digest=repository.slug, body={})
                      for repository in (a, b))
    a_thread, b_thread = (ReviewThread.objects.create(pull_request=pull_request, root_comment_id=root, path="src/a.py")
                          for pull_request, root in ((review.pull_request, 7001), (b_pr, 7002)))
    from notify.models import WebhookEndpoint, WebhookMessage

    a_hook, b_hook = (WebhookEndpoint.objects.create(repository=repository, url="https://hooks.example.com/recheck",
                                                     kinds=["gate.changed"], secrets=["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"])
                      for repository in (a, b))
    a_message, b_message = (WebhookMessage.objects.create(endpoint=hook, kind="gate.changed",
                                                          message_id=f"msg_persona_{hook.pk}")
                            for hook in (a_hook, b_hook))
    a_entry, b_entry = (AuditEntry.objects.create(action="pullrequest.edit", target=f"{repository.slug}#41",
                                                  repository=repository, changes={"title": ["Before", "After"]})
                        for repository in (a, b))

    # An override of each gate (A's at its first pin, so A's latest may be overridden too).
    a_override, b_override = (GateOverride.objects.create(pull_request=pull_request, commit=commit, reason="urgent_fix",
                                                          by_label="someone")
                              for pull_request, commit in ((review.pull_request, review.pins[0].commit),
                                                           (b_pr, b_commit)))

    def ids(repository, pull_request, finding, evidence, verification, run, link, job, tag, path, sha, entry, call,
            thread, hook, message, override):
        owner, name = repository.slug.split("/")
        return {
            "owner": owner, "name": name, "number": pull_request.number, "finding_number": finding.number,
            "sha": sha,
            "findings": finding.pk, "evidence": evidence.pk, "verifications": verification.pk, "runs": run.pk,
            "pulls": pull_request.pk, "imports": job.pk, "link": link.pk, "links": link.pk, "path": path,
            "slug": tag, "tags": tag, "audit": entry.pk, "entry": entry.pk, "call_id": call.pk,
            "thread_id": thread.root_comment_id, "endpoint_id": hook.pk, "message_id": message.pk,
            "endpoint": hook.pk, "message": message.pk,
            # An unsubscribe link's token: signed, so none of a repository's is guessable; a bad one is refused.
            "token": "not-a-signed-token",
            "overrides": override.pk, "override_id": override.pk,
        }

    return World(
        a=a, b=b,
        ids=ids(a, review.pull_request, a_finding, a_finding.evidence.first(),
                review.findings[0].verifications.first(), a_run, a_link, a_job, SHARED_TAG, a_finding.path,
                review.latest_commit.sha, a_entry, a_call, a_thread, a_hook, a_message, a_override),
        b_ids=ids(b, b_pr, b_findings[0], b_findings[0].evidence.first(), b_verification, b_run, b_link, b_job,
                  B_TAG, "src/quokka.py", b_commit.sha, b_entry, b_call, b_thread, b_hook, b_message, b_override),
        ghost_ids={"owner": "ghost-org", "name": "nothing", "number": 999999, "finding_number": 999999,
                   "findings": 10**9, "evidence": 10**9, "verifications": 10**9, "runs": 10**9, "pulls": 10**9,
                   "imports": 10**9, "link": 10**9, "links": 10**9, "path": "src/quokka.py", "slug": "ghost-kind",
                   "sha": "0" * 40, "audit": 10**9, "entry": 10**9, "call_id": 10**9, "thread_id": 10**9,
                   "tags": "ghost-kind", "endpoint_id": 10**9, "message_id": 10**9, "token": "not-a-signed-token",
                   "endpoint": 10**9, "message": 10**9, "overrides": 10**9, "override_id": 10**9},
        a_words=(review.pull_request.title, a_finding.title),
    )


@dataclass
class Persona:
    name: str
    user: object
    site: Client | None
    api: APIClient


def _persona(name: str) -> tuple[Persona, object]:
    """The persona's clients, and the user who owns the import job of the world (A's reviewer)."""
    users = {role: UserFactory(username=f"{role}-of-a") for role in ROLES}
    no_role = UserFactory(username="nobody-in-particular")
    world = _world(owner_of_import=users["reviewer"])
    for role, user in users.items():
        Membership.objects.create(repository=world.a, user=user, role=ROLES[role])
    site, api = Client(), APIClient()
    user = AnonymousUser()
    if name in users or name == "no_role":
        user = users.get(name, no_role)
        site.force_login(user)
        api.force_login(user)
    elif name in TOKEN_PERSONAS:
        user = users["maintainer"]
        if name == "token_read":
            _, secret = api_token_create(user=user, name="Read A", scopes=["read"], repositories=[world.a])
        else:
            secret = make_api_token(user, name=name)
            token = ApiToken.objects.get(token_key=secret[:CONSTANTS.TOKEN_KEY_LENGTH])
            if name == "token_expired":
                ApiToken.objects.filter(pk=token.pk).update(expiry=timezone.now() - timedelta(minutes=1))
            else:
                api_token_revoke(token=token)
        api.credentials(HTTP_AUTHORIZATION=f"Token {secret}")
        site = None  # a token opens the API only; on the site the persona is anonymous
    return Persona(name=name, user=user, site=site, api=api), world


# --- Filling in URLs ------------------------------------------------------------------------------

# The sample value of each path parameter, by its name (an id by the collection it follows).
SAMPLES = {"owner", "name", "number", "finding_number", "path", "slug", "link", "id", "pk", "token_key", "sha",
           "entry", "call_id", "thread_id", "endpoint_id", "message_id", "token", "endpoint",
           "message", "override_id"}


def _fill(path: str, ids: dict) -> str:
    def value(match):
        name = match.group(1)
        assert name in SAMPLES, (
            f"{path} has a path parameter {{{name}}} this test has no sample value for: add it to SAMPLES "
            "and to the ids _world() gives"
        )
        if name in ("id", "pk"):
            collection = path[: match.start()].rstrip("/").rsplit("/", 1)[-1]
            assert collection in ids, f"No sample id for {{{name}}} after /{collection}/ in {path}: add it to _world()"
            return str(ids[collection])
        return str(ids[name])

    return re.sub(r"\{(\w+)\}", value, path)


def api_operations() -> list[tuple[str, str]]:
    schema = APIClient().get("/api/schema/", {"format": "json"}).json()
    found = [(method, path) for path, methods in schema["paths"].items() for method in methods
             if method in ("get", "post", "put", "patch", "delete")]
    assert len(found) >= 25
    return found


def _walk(resolver, prefix=""):
    for pattern in resolver.url_patterns:
        if isinstance(pattern, URLResolver):
            yield from _walk(pattern, prefix + str(pattern.pattern))
        elif isinstance(pattern, URLPattern):
            yield prefix + str(pattern.pattern), pattern


# Not the site's pages: the API (its schema drives the API half), the admin (tested with its own
# querysets in test_memberships), sign-in (allauth's pages, tested in test_signin) and the health check.
SKIPPED_MODULES = ("rest_framework", "drf_spectacular", "allauth", "django.contrib.admin", "recheck.health",
                   "django.views.generic.base", "api")


def site_routes() -> list[str]:
    """Every site route as a path with {parameters}, walked from the URL patterns."""
    routes = []
    for route, pattern in _walk(get_resolver()):
        module = getattr(pattern.callback, "__module__", "") or ""
        if route.startswith(("api/", "admin/")) or module.startswith(SKIPPED_MODULES):
            continue
        routes.append(re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", route))
    assert "{owner}/{name}/pull/{number}/" in routes and "tags/{slug}/" in routes
    return routes


def _site_url(route: str, ids: dict) -> str:
    return "/" + _fill(route, ids)


# The site's writes (POST-only routes), with the action each needs: a new one fails the test
# until it is added here.
SITE_WRITES = {
    "{owner}/{name}/pull/{number}/verify/": Action.VERIFY,
    "{owner}/{name}/pull/{number}/evidence/check/": Action.WRITE,
    "preview/": Action.WRITE,
    "audit/{entry}/revert/": None,  # instance admins only, then the role on the object
    # Sending a GitHub call again: a refusal is said on the repository's page it redirects to.
    "{owner}/{name}/github-calls/{call_id}/resend/": None,
    # Reading the review threads again (queued), and triaging one (an empty POST is refused on the page).
    "{owner}/{name}/pull/{number}/threads/sync/": Action.WRITE,
    "{owner}/{name}/pull/{number}/threads/{thread_id}/triage/": Action.WRITE,
    "{owner}/{name}/pull/{number}/findings/{finding_number}/follow-up/": Action.RESOLVE,
    # A repository's webhooks are its Admin's; an empty change is refused on the page it redirects to.
    "{owner}/{name}/webhooks/{endpoint_id}/": Action.SETTINGS,
    "{owner}/{name}/webhooks/{endpoint_id}/messages/{message_id}/resend/": Action.SETTINGS,
    # Mark all seen: the reader's own marks.
    "{owner}/{name}/pull/{number}/since/seen/": Action.READ,
    # Overriding the gate (an empty POST is refused on the page), revoking A's override; the policy.
    "{owner}/{name}/pull/{number}/gate/override/": Action.RESOLVE,
    "{owner}/{name}/pull/{number}/gate/overrides/{override_id}/revoke/": Action.RESOLVE,
    "{owner}/{name}/policy/": Action.SETTINGS,
}
# What an empty POST gets from a write the persona may do: most redirect back to their page; the
# evidence check and the preview answer in place (an empty item is refused for what it lacks).
SITE_WRITE_DONE = {
    "{owner}/{name}/pull/{number}/evidence/check/": {400},
    "preview/": {200},
    # The persona world merged nothing: the role is checked first, then there is no follow-up.
    "{owner}/{name}/pull/{number}/findings/{finding_number}/follow-up/": {404},
}

# Site pages that are forms for a write: a reader of A who may not do it is refused (403), and
# anyone who cannot read A gets the 404 of a repository that does not exist.
SITE_FORMS = {
    "{owner}/{name}/pull/{number}/findings/new/": Action.WRITE,
    "{owner}/{name}/pull/{number}/findings/{finding_number}/edit/": Action.WRITE,
    "{owner}/{name}/pull/{number}/findings/{finding_number}/evidence/new/": Action.WRITE,
    "{owner}/{name}/pull/{number}/findings/{finding_number}/decide/": Action.RESOLVE,
    "{owner}/{name}/webhooks/": Action.SETTINGS,
}
# The audit log's pages: for instance admins only, refused before anything is looked up.
SITE_ADMIN_PAGES = ("audit/", "audit/{entry}/")
# A person's own pages: their notifications (signed in), and the unsubscribe link's confirmation,
# which names nothing but what its signed token says (and a bad token is refused when posted).
SITE_PERSONAL_PAGES = ("notifications/", "notifications/unsubscribe/{token}/")
# Site pages about a repository in general rather than one named in the URL.
SITE_GENERAL_FORMS = {"import/": Action.IMPORT}
# The code browser reads the mirror, which this world has not fetched: a reader of A is told so.
SITE_MIRROR_PAGES = ("{owner}/{name}/pull/{number}/code/{sha}/", "{owner}/{name}/pull/{number}/code/{sha}/{path}",
                     "{owner}/{name}/pull/{number}/diff/")


# --- Expectations ---------------------------------------------------------------------------------


def held(persona: str) -> frozenset:
    """What the persona may do on A."""
    if persona in ROLES:
        return ROLE_ACTIONS[ROLES[persona]]
    if persona == "token_read":
        return frozenset({Action.READ})
    return frozenset()


def assert_no_b(response, url: str, asked: str = "") -> None:
    text = response.content.decode(errors="replace")
    leaked = [word for word in B_WORDS if word in text and word not in asked and word not in url]
    leaked += [title for title in B_TITLES + (B_PR_TITLE,) if title in text]
    assert not leaked, (url, response.status_code, leaked, text[:300])


def _swap(text: str, world: World, ghost: bool = False) -> str:
    """The body of a response about B with B's names swapped for the ghost's, to compare."""
    pairs = [(B_SLUG, GHOST_SLUG), ("hidden-org", "ghost-org"), ("quokka", "nothing"),
             (B_TAG, "ghost-kind")]
    for key in ("findings", "evidence", "verifications", "runs", "pulls", "imports", "links"):
        pairs.append((f"/{world.b_ids[key]}/", f"/{world.ghost_ids[key]}/"))
        pairs.append((f"/{world.b_ids[key]}", f"/{world.ghost_ids[key]}"))
    pairs += [(f"#{world.b_ids['number']}", "#999999"), (f"pull/{world.b_ids['number']}/", "pull/999999/"),
              (f"pulls/{world.b_ids['number']}", "pulls/999999")]
    for old, new in pairs:
        text = text.replace(old, new)
    return text


def assert_like_a_ghost(b_response, ghost_response, url: str, world: World, *, api: bool) -> None:
    assert b_response.status_code != 200 and b_response.status_code < 500, (url, b_response.status_code)
    assert b_response.status_code == ghost_response.status_code, (url, b_response.status_code,
                                                                  ghost_response.status_code)
    if api and b_response.content:
        assert _swap(b_response.content.decode(), world) == ghost_response.content.decode(), url


def _body(method: str, path: str, slug: str, world_ids: dict) -> dict:
    if path.endswith("/publishing"):
        return {"publish_checks": True}
    if path.endswith("/resolve"):
        return {"status": "dismissed", "note": "Not ours."}
    if path.endswith("/reviews/import"):
        return bundle(repository={"slug": slug, "clone_url": f"https://github.com/{slug}.git"})
    if path.endswith("/tags"):
        return {"tags": [SHARED_TAG, "silent-failure"]}
    if path.endswith("/links"):
        return {"kind": "follow_up_of", "finding": f"{A_SLUG}#41/3"}
    if path.endswith("/description"):
        return {"repository": slug, "description": "What these have in common."}
    if path.endswith("/triage"):
        return {"outcome": "not_a_finding"}
    if path.endswith("/overrides/"):
        return {"commit": world_ids["sha"], "reason": "urgent_fix"}
    if path.endswith("/policy"):
        return {"cleanup_due_days": 20}
    return {}


def _call(client, method: str, url: str, body: dict):
    if url.endswith("/reports/"):
        url += "?check=unit-tests&conclusion=failure"  # a report's parameters are its query
    if method == "get":
        return client.get(url)
    return getattr(client, method)(url, body, format="json")


def expected_api(persona: str, method: str, path: str, url: str) -> set[int]:
    if persona in ("token_expired", "token_revoked"):
        return {401}
    view = resolve(url).func.view_class
    has_params = "{" in path
    if path.startswith("/api/audit/"):
        return {401, 403} if persona == "anonymous" else {403}  # instance admins only (reverting too)
    # A view whose GET is a read (a repository's policy, a PR's overrides) beside its writes.
    if method == "get" and (not hasattr(view, "required_action") or "GET" in getattr(view, "read_methods", ())):
        if path.startswith("/api/hooks/"):
            return {405}
        if not has_params:
            return {200}
        if path.endswith("/changes") and Action.READ in held(persona):
            return {200, 409}  # read, and answered: this world's repositories are never fetched, which it says
        return {200} if Action.READ in held(persona) else {404}
    action = view.required_action
    if persona == "anonymous":
        return {401, 403}
    if persona == "token_read" and method != "get":
        return {403}  # the token's scope
    # A GET with an action (an import's status) is its user's to read, whatever the token's scopes.
    user_holds = ROLE_ACTIONS["maintainer"] if persona == "token_read" else held(persona)
    if action not in user_holds:
        return {403}  # said before any object is looked at: it confirms nothing
    if path.startswith("/api/imports/"):
        return {200} if persona == "reviewer" else {404}  # an import is its requester's
    if path.endswith("/reports/"):
        # Allowed, and answered: this world's repositories are never fetched, so no commit of
        # theirs is known and the report is refused on `commit` (a 404 that names it).
        return {404}
    return {200, 201, 202, 204}


def _warm_caches(world: World, queued: list, *, api: bool) -> None:
    """Every read of A, of B and of the lists, made first by a superuser, so that whatever the
    server caches (the gate's answers, list pages, counts, rendered pages) is in its cache when the
    persona asks: what a persona gets must come from its own access, never from a cache that
    someone else's read filled."""
    root = UserFactory(username="warming-superuser", is_superuser=True, is_staff=True)
    client = APIClient() if api else Client()
    client.force_login(root)
    if api:
        paths = [path for method, path in api_operations() if method == "get"
                 and not path.startswith(("/api/schema/", "/api/docs/", "/api/redoc/", "/api/hooks/"))]
        urls = [_fill(path, ids) for path in paths for ids in (world.ids, world.b_ids)]
    else:
        routes = [route for route in site_routes() if route not in SITE_WRITES and not route.startswith("accounts/")]
        urls = [_site_url(route, {**ids, "token_key": "0000000000000000"})
                for route in routes for ids in (world.ids, world.b_ids)]
    for url in dict.fromkeys(urls):
        assert client.get(url).status_code < 500, url
    queued.clear()  # what the superuser's reads queued is not the persona's doing


# --- The matrix -----------------------------------------------------------------------------------
