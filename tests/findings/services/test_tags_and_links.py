"""Tags and typed links between findings: in bundles (strict about their keys), exported and
imported back, in the API, on the site from both ends, and in the admin."""
import copy
import re

import pytest
from django.urls import reverse

from findings.exchange.bundle import bundle_dump, bundle_export
from findings.services.review_import import BundleInvalid, parse_bundle, review_import
from findings.models import Finding, FindingLink, Tag, TagDescription
from findings.services.tags_and_links import RelationError, finding_link_create, finding_tags_set
from reviews.models import PullRequest
from tests.factories import store_states
from tests.factories import FindingFactory, PullRequestFactory, RepositoryFactory
from tests.api.conftest import token_client
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

BUNDLE = {
    "repository": {"slug": "acme/loader", "clone_url": "https://github.com/acme/loader.git"},
    "pull_request": {"number": 4108, "title": "A second family"},
    "commits": [{"sha": "d044f40", "role": "reviewed"}],
    "tags": [{"slug": "silent-failure", "description": "Something goes wrong and nothing says so."}],
    "findings": [
        {"number": 1, "kind": "blocker", "title": "A broken dataset never stops the job",
         "tags": ["silent-failure", "dependency"],
         "links": [{"kind": "same_cause", "finding": "acme/loader#4108/2"},
                   {"kind": "follow_up_of", "finding": "other/tool#7/3", "note": "Seen there first."}]},
        {"number": 2, "kind": "blocker", "title": "Audio runs die late"},
    ],
}


def bundle(**changes) -> dict:
    data = copy.deepcopy(BUNDLE)
    data.update(changes)
    return data


def text_of(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


@pytest.fixture
def other_finding():
    pull_request = PullRequestFactory(repository=RepositoryFactory(slug="other/tool"), number=7)
    return FindingFactory(pull_request=pull_request, number=3, title="The tolerance was zero there too")


# --- Bundles -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "field", "expected"),
    [
        ({"tagz": []}, "tagz", "repository, pull_request, commits, findings, tags"),
        ({"findings": [{"number": 1, "kind": "blocker", "title": "T", "caugth_by": "ci"}]},
         "findings[0].caugth_by", "number, kind, caught_by, title"),
        ({"findings": [{"number": 1, "kind": "blocker", "title": "T",
                        "evidence": [{"kind": "note", "text": "x", "comit": "d044f40"}]}]},
         "findings[0].evidence[0].comit", "kind, commit, path"),
        ({"findings": [{"number": 1, "kind": "blocker", "title": "T", "links": [{"kind": "same_cause",
                                                                                  "finding": "a/b#1/1", "why": ""}]}]},
         "findings[0].links[0].why", "kind, finding, note"),
    ],
)
def test_a_bundle_with_an_unknown_key_is_refused_naming_it_and_the_fields_expected(change, field, expected):
    with pytest.raises(BundleInvalid) as refused:
        review_import(data=bundle(**change))
    names = dict(refused.value.errors)
    assert field in names
    assert f"Unknown field {field.rsplit('.', 1)[-1]!r}" in names[field]
    assert expected in names[field]
    assert not PullRequest.objects.exists()


def test_a_bundle_tags_findings_with_tags_shared_across_repositories(other_finding):
    finding_tags_set(finding=other_finding, slugs=["silent-failure"], actor=None)
    review_import(data=bundle())
    finding = Finding.objects.get(pull_request__number=4108, number=1)
    assert sorted(finding.tags.values_list("slug", flat=True)) == ["dependency", "silent-failure"]
    silent = Tag.objects.get(slug="silent-failure")
    # One slug, described by the bundle's repository only.
    assert [(row.repository.slug, row.description) for row in silent.descriptions.all()] == [
        ("acme/loader", "Something goes wrong and nothing says so.")
    ]
    assert set(silent.findings.all()) == {finding, other_finding}


def test_a_bundle_refuses_a_tag_that_is_not_a_slug():
    data = bundle()
    data["findings"][0]["tags"] = ["Silent Failure"]
    with pytest.raises(BundleInvalid) as refused:
        review_import(data=data)
    assert refused.value.errors[0][0] == "findings[0].tags[0]"
    assert "lower-case letters and digits joined by hyphens" in refused.value.errors[0][1]


def test_a_bundle_links_findings_by_reference_across_pull_requests_and_repositories(other_finding):
    review_import(data=bundle())
    first = Finding.objects.get(pull_request__number=4108, number=1)
    links = {(link.target.reference, link.kind, link.note) for link in first.links_out.all()}
    # The same-cause link names a finding that comes later in the same bundle.
    assert links == {("acme/loader#4108/2", "same_cause", ""), ("other/tool#7/3", "follow_up_of", "Seen there first.")}


def test_a_link_to_a_finding_never_recorded_is_refused_naming_the_field():
    with pytest.raises(BundleInvalid) as refused:
        review_import(data=bundle())
    field, message = refused.value.errors[0]
    assert field == "findings[0].links[1].finding"
    assert "No finding other/tool#7/3 is recorded" in message
    assert not PullRequest.objects.exists()


def test_a_malformed_reference_is_refused_before_anything_is_imported():
    data = bundle()
    data["findings"][0]["links"] = [{"kind": "duplicate_of", "finding": "acme/loader 4108 2"}]
    with pytest.raises(BundleInvalid) as refused:
        review_import(data=data)
    assert refused.value.errors[0][0] == "findings[0].links[0].finding"
    assert "owner/name#<pull request>/<finding>" in refused.value.errors[0][1]


def test_a_finding_linked_twice_to_one_other_is_refused_naming_the_second_link():
    data = bundle()
    data["findings"][0]["links"] = [{"kind": "duplicate_of", "finding": "acme/loader#4108/2"},
                                    {"kind": "same_cause", "finding": "acme/loader#4108/2"}]
    with pytest.raises(BundleInvalid) as refused:
        review_import(data=data)
    assert refused.value.errors == [("findings[0].links[1].finding", "acme/loader#4108/2 is linked twice.")]


def test_a_finding_linked_to_itself_is_refused():
    data = bundle()
    data["findings"][0]["links"] = [{"kind": "duplicate_of", "finding": "acme/loader#4108/1"}]
    with pytest.raises(BundleInvalid) as refused:
        review_import(data=data)
    assert "cannot be linked to itself" in str(refused.value)


def test_export_then_import_round_trips_tags_and_links(other_finding):
    review_import(data=bundle())
    pull_request = PullRequest.objects.get(number=4108)
    text = bundle_dump(bundle_export(pull_request=pull_request))
    exported = parse_bundle(text)
    assert exported["tags"] == [{"slug": "dependency"},
                                {"slug": "silent-failure", "description": "Something goes wrong and nothing says so."}]
    assert exported["findings"][0]["tags"] == ["dependency", "silent-failure"]

    pull_request.delete()
    Tag.objects.all().delete()
    report = review_import(data=exported)
    assert report.created
    first = Finding.objects.get(pull_request__number=4108, number=1)
    assert sorted(first.tags.values_list("slug", flat=True)) == ["dependency", "silent-failure"]
    assert TagDescription.objects.get(tag__slug="silent-failure").description == (
        "Something goes wrong and nothing says so."
    )
    assert {(link.target.reference, link.kind) for link in first.links_out.all()} == {
        ("acme/loader#4108/2", "same_cause"), ("other/tool#7/3", "follow_up_of")
    }
    # Importing the export again changes nothing.
    again = review_import(data=parse_bundle(text))
    assert not again.created and not again.updated


def test_a_bundle_that_lists_fewer_links_removes_the_others(other_finding):
    review_import(data=bundle())
    data = bundle()
    data["findings"][0]["links"] = [{"kind": "duplicate_of", "finding": "other/tool#7/3"}]
    report = review_import(data=data)
    assert "finding 1" in report.updated
    first = Finding.objects.get(pull_request__number=4108, number=1)
    assert [(link.target.reference, link.kind) for link in first.links_out.all()] == [("other/tool#7/3", "duplicate_of")]


# --- Services ------------------------------------------------------------------------------------


def test_two_findings_are_linked_once_whichever_way_round(other_finding):
    finding = FindingFactory()
    finding_link_create(source=finding, target=other_finding, kind="duplicate_of", actor=None)
    with pytest.raises(RelationError, match="already linked"):
        finding_link_create(source=other_finding, target=finding, kind="same_cause", actor=None)
    assert FindingLink.objects.count() == 1


# --- API -----------------------------------------------------------------------------------------


@pytest.fixture
def editor():
    return token_client(UserFactory(username="editor", permissions=["findings.change_finding"]))


def test_the_api_sets_a_finding_s_tags_with_permission_only(editor, other_finding):
    url = f"/api/findings/{other_finding.pk}/tags"
    reader = token_client(UserFactory(username="reader"))
    assert reader.put(url, {"tags": ["cache"]}, format="json").status_code == 403
    response = editor.put(url, {"tags": ["cache", "silent-failure"]}, format="json")
    assert response.status_code == 200
    assert response.json()["tags"] == ["cache", "silent-failure"]
    bad = editor.put(url, {"tags": ["Not A Slug"]}, format="json")
    assert bad.status_code == 400 and "hyphens" in bad.json()["detail"]
    tag = editor.get("/api/tags/cache/").json()
    assert tag["findings_count"] == 1
    listed = editor.get(tag["findings_url"]).json()["results"]
    assert [item["id"] for item in listed] == [other_finding.pk]


def test_a_link_made_through_the_api_shows_from_both_ends_and_goes_from_either(editor, other_finding):
    finding = FindingFactory(title="Tolerance lowered to 0")
    response = editor.post(
        f"/api/findings/{finding.pk}/links", {"kind": "duplicate_of", "finding": other_finding.reference},
        format="json",
    )
    assert response.status_code == 201, response.json()
    link = response.json()
    assert (link["direction"], link["label"], link["finding"]["reference"]) == (
        "outgoing", "Duplicate of", "other/tool#7/3"
    )
    [from_target] = editor.get(f"/api/findings/{other_finding.pk}/").json()["links"]
    assert (from_target["direction"], from_target["label"], from_target["finding"]["id"]) == (
        "incoming", "Duplicated by", finding.pk
    )
    again = editor.post(f"/api/findings/{other_finding.pk}/links",
                        {"kind": "same_cause", "finding": str(finding.pk)}, format="json")
    assert again.status_code == 400 and "already linked" in again.json()["detail"]
    assert editor.delete(f"/api/findings/{other_finding.pk}/links/{link['id']}").status_code == 204
    assert editor.get(f"/api/findings/{finding.pk}/").json()["links"] == []


def test_the_api_describes_a_tag_with_permission_only(other_finding):
    # Describing a tag in a repository is writing there (user_may's WRITE): a Reviewer's role,
    # here instance-wide.
    curator = token_client(UserFactory(username="curator", groups=["Reviewer"]))
    reader = token_client(UserFactory(username="reader"))
    url = "/api/tags/silent-failure/description"
    described = {"repository": "other/tool", "description": "Nothing says so."}
    assert reader.put(url, described, format="json").status_code == 403
    response = curator.put(url, described, format="json")
    assert response.status_code == 200
    assert (response.json()["slug"], response.json()["description"]) == ("silent-failure", "Nothing says so.")
    assert response.json()["descriptions"] == [{"repository": "other/tool", "description": "Nothing says so."}]
    cleared = curator.put(url, {**described, "description": ""}, format="json").json()
    assert (cleared["description"], cleared["descriptions"]) == ("", [])
    bad = curator.put("/api/tags/Not_A_Slug/description", described, format="json")
    assert bad.status_code == 400 and "hyphens" in bad.json()["detail"]
    assert not Tag.objects.filter(slug="Not_A_Slug").exists()


def test_the_tag_list_reads_in_bounded_queries(client, django_assert_max_num_queries):
    for index in range(30):
        finding_tags_set(finding=FindingFactory(), slugs=[f"tag-{index}", "shared"], actor=None)
    # The count, the page, and the page's descriptions.
    with django_assert_max_num_queries(3):
        body = client.get("/api/tags/", {"ordering": "-findings_count"}).json()
    assert body["count"] == 31 and body["results"][0] == {
        **body["results"][0], "slug": "shared", "findings_count": 30
    }


def test_a_link_to_an_unknown_finding_is_a_clear_400(editor, other_finding):
    response = editor.post(f"/api/findings/{other_finding.pk}/links",
                           {"kind": "same_cause", "finding": "nobody/nothing#1/1"}, format="json")
    assert response.status_code == 400
    assert "No finding nobody/nothing#1/1 is recorded" in response.json()["detail"]


# --- Site ----------------------------------------------------------------------------------------


def test_a_link_shows_on_the_pages_of_both_findings(client, other_finding):
    finding = FindingFactory(title="Tolerance lowered to 0")
    finding_link_create(source=finding, target=other_finding, kind="follow_up_of", note="Same loader.", actor=None)
    source_page = text_of(client.get(finding.get_absolute_url()).content.decode())
    assert "Follow-up of other/tool#7/3 The tolerance was zero there too Open — Same loader." in source_page
    target_page = text_of(client.get(other_finding.get_absolute_url()).content.decode())
    assert f"Followed up by {finding.reference} Tolerance lowered to 0" in target_page
    assert "Same loader." in target_page


def test_the_tag_page_describes_the_tag_and_lists_its_findings_newest_first(
    client, other_finding, django_assert_max_num_queries
):
    older = FindingFactory(title="An older silent failure")
    newer = FindingFactory(title="A newer silent failure")
    Finding.objects.filter(pk=older.pk).update(created_at=other_finding.created_at.replace(year=2020))
    for finding in (older, newer):
        finding_tags_set(finding=finding, slugs=["silent-failure"], actor=None)
    TagDescription.objects.create(tag=Tag.objects.get(slug="silent-failure"), repository=older.pull_request.repository,
                                  description="Nothing says so.")
    for index in range(30):
        finding_tags_set(finding=FindingFactory(title=f"Filler {index}"), slugs=["silent-failure"], actor=None)
    store_states()  # the page reads each finding's state from its PR's: one more query
    # Its key (the tag with its descriptions' version, every PR's version) and the page's reads;
    # read again, its key alone.
    with django_assert_max_num_queries(7):
        response = client.get(reverse("findings:tag", args=["silent-failure"]))
    with django_assert_max_num_queries(2):
        assert client.get(reverse("findings:tag", args=["silent-failure"])).content == response.content
    text = text_of(response.content.decode())
    assert "silent-failure" in text and f"In {older.pull_request.repository.slug} Nothing says so." in text
    assert "32 findings with this tag" in text
    assert text.index("Filler 29") < text.index("Filler 5 ")
    assert "silent failure" not in text.replace("silent-failure", "")  # the two first tagged are on page 2
    second = text_of(client.get(reverse("findings:tag", args=["silent-failure"]) + "?page=2").content.decode())
    assert second.index("A newer silent failure") < second.index("An older silent failure")
    assert client.get(reverse("findings:tag", args=["no-such-tag"])).status_code == 404


# --- Admin ---------------------------------------------------------------------------------------


def test_the_admin_links_findings_and_refuses_a_link_to_itself(client, other_finding):
    finding = FindingFactory()
    editor = UserFactory(username="curator", is_staff=True, permissions=[
        "findings.view_finding", "findings.change_finding", "findings.view_tag", "findings.add_findinglink",
        "findings.change_findinglink", "findings.delete_findinglink", "findings.view_findinglink",
    ])
    client.force_login(editor)
    url = reverse("admin:findings_finding_change", args=[finding.pk])
    page = client.get(url).content.decode()
    assert 'name="links_out-TOTAL_FORMS"' in page and 'name="tags"' in page

    def post(target):
        data = {
            "pull_request": finding.pull_request.pk, "number": finding.number, "kind": finding.kind,
            "caught_by": finding.caught_by, "title": finding.title, "summary": finding.summary, "body": finding.body,
            "fix": finding.fix, "path": finding.path, "line": finding.line,
            "tags": [Tag.objects.get_or_create(slug="dependency")[0].pk],
            "links_out-TOTAL_FORMS": 1, "links_out-INITIAL_FORMS": 0,
            "links_out-0-kind": "duplicate_of", "links_out-0-target": target.pk, "links_out-0-note": "",
        }
        for prefix in ("evidence", "verifications", "history"):
            data.update({f"{prefix}-TOTAL_FORMS": 0, f"{prefix}-INITIAL_FORMS": 0})
        return client.post(url, data)

    refused = post(finding)
    assert refused.status_code == 200 and "cannot be linked to itself" in refused.content.decode()
    assert post(other_finding).status_code == 302
    assert [link.target for link in finding.links_out.all()] == [other_finding]
    assert [tag.slug for tag in finding.tags.all()] == ["dependency"]
