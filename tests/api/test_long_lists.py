"""The findings list at size: its rows written out match what the serializer's fields make of
them, its count follows every write (it is never stale), and its pages are found by id first."""
import pytest
from django.utils import timezone
from rest_framework import serializers
from rest_framework.test import APIRequestFactory

from api.serializers.findings import FindingSerializer
from findings.models import Finding, Tag
from findings.services.tags_and_links import finding_tags_set
from tests.factories import CommitFactory, FindingFactory, PullRequestFactory, UserFactory

pytestmark = pytest.mark.django_db

LIST = "/api/findings/"


def test_a_row_written_out_is_what_the_fields_make_of_it(anonymous_reader):
    pull_request = PullRequestFactory()
    commit = CommitFactory(repository=pull_request.repository)
    FindingFactory(pull_request=pull_request, number=1, line=None)
    FindingFactory(
        pull_request=pull_request, number=2, kind="blocker", status="fixed", resolved_by=UserFactory(username="ana"),
        resolved_at=timezone.now(), resolved_commit=commit, caught_by="ci",
    )
    rows = anonymous_reader.get(LIST).json()["results"]
    assert [row["number"] for row in rows] == [1, 2]
    request = APIRequestFactory().get(LIST)
    for row in rows:
        finding = Finding.objects.select_related("pull_request__repository", "resolved_by", "resolved_commit").get(
            pk=row["id"]
        )
        generic = serializers.ModelSerializer.to_representation(
            FindingSerializer(context={"request": request}), finding
        )
        assert row == dict(generic)
    assert rows[1]["resolved_by"] == "ana" and rows[1]["resolved_commit"] == commit.sha


def test_searched_rows_say_why_they_matched(anonymous_reader):
    FindingFactory(number=1, title="Tolerance lowered to 10")
    row = anonymous_reader.get(LIST, {"q": "tolerance"}).json()["results"][0]
    assert row["search"]["reasons"] and row["title"] == "Tolerance lowered to 10"


def count(client, **params) -> int:
    response = client.get(LIST, params)
    assert response.status_code == 200, response.content
    return response.json()["count"]


def test_the_count_is_never_stale(anonymous_reader, django_assert_max_num_queries):
    pull_request = PullRequestFactory()
    for number in range(1, 6):
        FindingFactory(pull_request=pull_request, number=number, kind="blocker")
    assert count(anonymous_reader) == 5
    # Counted once for this version: the next request reads the version, the page's ids and rows.
    with django_assert_max_num_queries(3):
        assert count(anonymous_reader) == 5

    FindingFactory(pull_request=pull_request, number=6, kind="cleanup")  # a save
    assert count(anonymous_reader) == 6 and count(anonymous_reader, kind="blocker") == 5
    Finding.objects.filter(number=6).update(kind="blocker")  # a bulk update
    assert count(anonymous_reader, kind="blocker") == 6
    Finding.objects.filter(number=6).delete()  # a delete
    assert count(anonymous_reader) == 5

    other = PullRequestFactory(repository=pull_request.repository, number=pull_request.number + 1)
    Finding.objects.bulk_create([Finding(pull_request=other, number=1, title="Bulk", kind="cleanup")])
    assert count(anonymous_reader) == 6
    other.delete()  # the findings go with it
    assert count(anonymous_reader) == 5


def test_the_tag_filters_count_follows_the_tags(anonymous_reader):
    first, second = FindingFactory(number=1), FindingFactory(number=2)
    assert count(anonymous_reader, tag="dependency") == 0
    finding_tags_set(finding=first, slugs=["dependency"], actor=None)
    assert count(anonymous_reader, tag="dependency") == 1
    tag = Tag.objects.get(slug="dependency")
    tag.findings.add(second)  # from the tag's side
    assert count(anonymous_reader, tag="dependency") == 2
    tag.findings.clear()
    assert count(anonymous_reader, tag="dependency") == 0
    finding_tags_set(finding=first, slugs=["dependency"], actor=None)
    tag.slug = "dependencies"
    tag.save()
    assert count(anonymous_reader, tag="dependency") == 0 and count(anonymous_reader, tag="dependencies") == 1
    tag.delete()
    assert count(anonymous_reader, tag="dependencies") == 0


def test_deep_pages_and_orderings_list_every_finding_once(anonymous_reader):
    pull_request = PullRequestFactory()
    for number in range(1, 24):
        FindingFactory(pull_request=pull_request, number=number, kind="blocker" if number % 3 else "cleanup")
    seen = []
    for page in range(1, 6):
        seen += [row["number"] for row in anonymous_reader.get(LIST, {"page": page, "page_size": 5}).json()["results"]]
    assert seen == list(range(1, 24))
    newest = anonymous_reader.get(LIST, {"ordering": "-number", "kind": "blocker", "page": 2, "page_size": 4}).json()
    expected = [number for number in range(23, 0, -1) if number % 3][4:8]
    assert [row["number"] for row in newest["results"]] == expected and newest["count"] == 16
