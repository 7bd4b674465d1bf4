"""Writes that name another object inside them: a bundle's gitlink item names a submodule
repository, its `tags` describe a tag, its links name findings of other pull requests and
repositories, its evidence names commits; the editor's form names commits (and a forged field a
submodule); the API names findings, links, tags and audit entries by id or reference. For every
such way and each persona who holds no role on the private repository B (nor Admin on the public
repository C), the reference to B is refused in the words of one that does not exist, and nothing
of B or C changes."""
import json

import pytest
from django.test import Client
from django.urls import reverse

from access.models import AuditEntry
from findings.models import Evidence, Finding, FindingLink, Tag, TagDescription
from reviews.models import Commit, PullRequest, Repository
from tests.factories import CommitFactory, FindingFactory, PinnedCommitFactory, PullRequestFactory, RepositoryFactory
from tests.factories import UserFactory
from tests.personas import api_client, member_of

pytestmark = pytest.mark.django_db

A, B, C = "acme/alpha", "hidden-org/quokka", "acme/public-lib"
B_SHA = "b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0"
OUTSIDERS = ["anonymous", "no_role", "reader_a", "reviewer_a", "maintainer_a", "admin_a", "token_limited_a"]


@pytest.fixture
def world():
    a = RepositoryFactory(slug=A, visibility="private")
    b = RepositoryFactory(slug=B, visibility="private", clone_url="https://github.com/hidden-org/quokka.git")
    c = RepositoryFactory(slug=C, visibility="public", clone_url="https://github.com/acme/public-lib.git",
                          web_url="https://github.com/acme/public-lib", default_branch="main")
    a_pr = PullRequestFactory(repository=a, number=41, title="Alpha change")
    PinnedCommitFactory(pull_request=a_pr, commit=CommitFactory(repository=a, sha="a" * 40), role="reviewed")
    a_finding = FindingFactory(pull_request=a_pr, number=1, kind="blocker", title="Alpha finding")
    b_pr = PullRequestFactory(repository=b, number=5, title="Quokka plan")
    b_commit = CommitFactory(repository=b, sha=B_SHA)
    b_finding = FindingFactory(pull_request=b_pr, number=1, title="Quokka finding")
    b_other = FindingFactory(pull_request=b_pr, number=2, title="Quokka other")
    b_link = FindingLink.objects.create(source=b_finding, target=b_other, kind="same_cause")
    tag = Tag.objects.create(slug="quokka-kind")
    b_finding.tags.add(tag)
    TagDescription.objects.create(tag=tag, repository=b, description="Quokka things")
    b_entry = AuditEntry.objects.create(action="pullrequest.edit", target=b_pr.reference, repository=b,
                                        changes={"title": ["Quokka draft", "Quokka plan"]})
    return {"a": a, "b": b, "c": c, "a_pr": a_pr, "a_finding": a_finding, "b_finding": b_finding,
            "b_commit": b_commit, "b_link": b_link, "b_entry": b_entry}


def snapshot() -> dict:
    """Everything of B and C that a write could change."""
    return {
        "repositories": list(Repository.objects.filter(slug__in=[B, C]).order_by("slug").values()),
        "pull_requests": list(PullRequest.objects.filter(repository__slug=B).values()),
        "findings": list(Finding.objects.filter(pull_request__repository__slug=B).order_by("pk").values()),
        "evidence": list(Evidence.objects.filter(finding__pull_request__repository__slug=B).values()),
        "commits": list(Commit.objects.filter(repository__slug__in=[B, C]).values()),
        "tags": sorted(Finding.objects.filter(pull_request__repository__slug=B).values_list("pk", "tags__slug")),
        "descriptions": list(TagDescription.objects.filter(repository__slug__in=[B, C]).values()),
        "links": sorted(FindingLink.objects.filter(target__pull_request__repository__slug=B)
                        .values_list("source_id", "target_id", "kind", "note")),
    }


def persona(name: str, world) -> tuple[Client, object]:
    """The persona's site session and its API client (a token of read, import and resolve)."""
    site, api = Client(), api_client(None)
    if name == "anonymous":
        return site, api
    user = UserFactory(username=name.replace("_", "-"))
    role = {"reader_a": "reader", "reviewer_a": "reviewer", "maintainer_a": "maintainer", "admin_a": "admin",
            "token_limited_a": "reviewer"}.get(name)
    if role:
        member_of(world["a"], user, role)
    site.force_login(user)
    scopes = ["read", "import", "resolve", "verify", "settings"]
    api = api_client(user, scopes=scopes, repositories=[world["a"]] if name == "token_limited_a" else ())
    return site, api


def bundle(**finding) -> dict:
    return {
        "repository": {"slug": A, "clone_url": "https://github.com/acme/alpha.git"},
        "pull_request": {"number": 41, "title": "Alpha change"},
        "findings": [{"number": 1, "kind": "blocker", "title": "Alpha finding", **finding}],
    }


def gitlink(slug: str) -> dict:
    return bundle(evidence=[{"kind": "gitlink", "path": "vendor/lib", "sha": "3961f399", "expect": "off_branch",
                             "submodule": {"slug": slug, "clone_url": "https://evil.example.com/x.git",
                                           "web_url": "https://evil.example.com/x", "default_branch": "evil"}}])


BUNDLES = {
    "submodule B": gitlink(B),
    "submodule C": gitlink(C),
    "link to B's finding": bundle(links=[{"kind": "duplicate_of", "finding": f"{B}#5/1"}]),
    "tag description": {**bundle(tags=["quokka-kind"]), "tags": [{"slug": "quokka-kind", "description": "Ours"}]},
    "B's commit": bundle(evidence=[{"kind": "snippet", "commit": B_SHA, "path": "x.py", "start_line": 1,
                                    "end_line": 1, "text": "x"}]),
    "into B": {**bundle(), "repository": {"slug": B, "clone_url": "https://github.com/hidden-org/quokka.git"}},
    "status at B's commit": bundle(status="fixed", resolution={"commit": B_SHA, "note": "Fixed there."}),
}


def _bundle_ways():
    for name, data in BUNDLES.items():
        yield f"api bundle: {name}", lambda site, api, world, data=data: api.post(
            "/api/reviews/import", data, format="json")
        yield f"site bundle: {name}", lambda site, api, world, data=data: site.post(
            reverse("findings:bundle_import"), {"text": json.dumps(data), "confirm": "1"})


def _editor(site, api, world):
    """The editor's form with B's commit as an item's commit, and a forged submodule field."""
    return site.post(
        reverse("findings:finding_edit", kwargs={"owner": "acme", "name": "alpha", "number": 41, "finding_number": 1}),
        {"number": "1", "kind": "blocker", "caught_by": "none", "title": "Alpha finding", "summary": "", "body": "",
         "fix": "", "review_comment_url": "", "location_path": "", "location_line": "",
         "evidence-0-kind": "gitlink", "evidence-0-commit": B_SHA, "evidence-0-path": "vendor/lib",
         "evidence-0-sha": "3961f399", "evidence-0-expect": "off_branch", "evidence-0-order": "1",
         "evidence-0-submodule": B, "evidence-0-submodule-clone_url": "https://evil.example.com/x.git"},
    )


API_WAYS = {
    "tags of B's finding": lambda site, api, w: api.put(f"/api/findings/{w['b_finding'].pk}/tags",
                                                        {"tags": ["ours"]}, format="json"),
    "link to B's finding by id": lambda site, api, w: api.post(
        f"/api/findings/{w['a_finding'].pk}/links", {"kind": "same_cause", "finding": str(w["b_finding"].pk)},
        format="json"),
    "link to B's finding by reference": lambda site, api, w: api.post(
        f"/api/findings/{w['a_finding'].pk}/links", {"kind": "same_cause", "finding": f"{B}#5/1"}, format="json"),
    "B's link removed from A's finding": lambda site, api, w: api.delete(
        f"/api/findings/{w['a_finding'].pk}/links/{w['b_link'].pk}"),
    "B's link removed from B's finding": lambda site, api, w: api.delete(
        f"/api/findings/{w['b_finding'].pk}/links/{w['b_link'].pk}"),
    "tag described in B": lambda site, api, w: api.put(
        "/api/tags/quokka-kind/description", {"repository": B, "description": "Ours"}, format="json"),
    "tag described in A": lambda site, api, w: api.put(
        "/api/tags/quokka-kind/description", {"repository": A, "description": "Ours"}, format="json"),
    "B's finding resolved": lambda site, api, w: api.post(
        f"/api/findings/{w['b_finding'].pk}/resolve", {"status": "dismissed", "note": "Not ours."}, format="json"),
    "B's audit entry reverted": lambda site, api, w: api.post(
        f"/api/audit/{w['b_entry'].pk}/revert", {"change": "title"}, format="json"),
    "editor: B's commit and a forged submodule": _editor,
}

WAYS = dict(_bundle_ways()) | API_WAYS
# The ways that may succeed for a persona who writes in A: they name B or C without changing it.
MAY_SUCCEED = {"api bundle: submodule C", "site bundle: submodule C", "api bundle: tag description",
               "site bundle: tag description", "api bundle: B's commit", "site bundle: B's commit",
               "api bundle: status at B's commit", "site bundle: status at B's commit", "tag described in A",
               "editor: B's commit and a forged submodule"}


@pytest.mark.parametrize("persona_name", OUTSIDERS)
def test_no_outsider_changes_anything_of_b_or_c_through_an_object_a_write_names(world, persona_name, monkeypatch):
    from findings import tasks
    from tests.queued import record_queued

    queued = record_queued(monkeypatch, tasks.run_verification)
    site, api = persona(persona_name, world)
    before = snapshot()
    for way, write in WAYS.items():
        response = write(site, api, world)
        assert response.status_code < 500, (persona_name, way, response.status_code)
        text = response.content.decode()
        if way not in MAY_SUCCEED:
            assert response.status_code not in (200, 201, 204) or "Nothing was imported" in text, (
                persona_name, way, response.status_code, text[:300])
        # What B wrote is never shown back, whatever the answer.
        assert "Quokka things" not in text and "Quokka finding" not in text, (persona_name, way)
        assert snapshot() == before, (persona_name, way)
    assert queued == []


@pytest.mark.parametrize("way", ["api bundle: submodule B", "api bundle: link to B's finding",
                                 "link to B's finding by reference", "tag described in B"])
def test_a_reference_to_b_is_answered_as_one_to_an_object_that_does_not_exist(world, way):
    """B's name in a write gets the words a ghost's name gets, once the names are swapped."""
    site, api = persona("reviewer_a", world)
    hidden = WAYS[way](site, api, world)
    ghosts = {
        "api bundle: submodule B": lambda: api.post("/api/reviews/import", gitlink("ghost-org/none"), format="json"),
        "api bundle: link to B's finding": lambda: api.post(
            "/api/reviews/import", bundle(links=[{"kind": "duplicate_of", "finding": "ghost-org/none#5/1"}]),
            format="json"),
        "link to B's finding by reference": lambda: api.post(
            f"/api/findings/{world['a_finding'].pk}/links", {"kind": "same_cause", "finding": "ghost-org/none#5/1"},
            format="json"),
        "tag described in B": lambda: api.put(
            "/api/tags/quokka-kind/description", {"repository": "ghost-org/none", "description": "Ours"},
            format="json"),
    }
    ghost = ghosts[way]()
    assert hidden.status_code == ghost.status_code and hidden.status_code in (400, 404)
    assert hidden.content.decode().replace(B, "SLUG") == ghost.content.decode().replace("ghost-org/none", "SLUG")
