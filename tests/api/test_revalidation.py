"""The API's reads of a pull request and a finding, and the gate, answer 304 while the caller's
copy is current, and 200 again once a write moved what they show."""
import pytest

from findings.models import Finding
from findings.services.resolution import finding_resolve
from reviews.models import Repository
from tests.factories import reviewed_pull_request
from tests.personas import api_client

pytestmark = pytest.mark.django_db


@pytest.fixture
def data():
    return reviewed_pull_request(blockers=3, cleanups=1)


def urls(data) -> dict[str, str]:
    finding = Finding.objects.get(pull_request=data.pull_request, number=1)
    return {
        "pull request": f"/api/pulls/{data.pull_request.pk}/",
        "pull request by number": "/api/repos/acme/rl/pulls/4108/",
        "finding": f"/api/findings/{finding.pk}/",
        "gate": f"/api/repos/acme/rl/pulls/4108/gate?commit={data.latest_commit.sha}",
    }


@pytest.mark.parametrize("name", ["pull request", "pull request by number", "finding", "gate"])
def test_a_current_copy_is_a_304_and_a_write_makes_it_a_200(data, name, django_assert_max_num_queries):
    client = api_client()
    url = urls(data)[name]
    first = client.get(url)
    assert first.status_code == 200, first.content
    etag = first["ETag"]
    assert "private" in first["Cache-Control"] and "Authorization" in first["Vary"]
    with django_assert_max_num_queries(6):
        again = client.get(url, HTTP_IF_NONE_MATCH=etag)
    assert again.status_code == 304 and again["ETag"] == etag and not again.content
    assert client.get(url, HTTP_IF_NONE_MATCH=f'W/{etag}, "other"').status_code == 304
    assert client.get(url, HTTP_IF_NONE_MATCH="*").status_code == 304
    assert client.get(url, HTTP_IF_NONE_MATCH="not an etag").status_code == 200
    finding = Finding.objects.select_related("pull_request__repository").get(pull_request=data.pull_request, number=1)
    finding_resolve(finding=finding, status="dismissed", actor=None, source="api", note="Out of scope.")
    changed = client.get(url, HTTP_IF_NONE_MATCH=etag)
    assert changed.status_code == 200 and changed["ETag"] != etag


@pytest.mark.parametrize("name", ["pull request", "finding", "gate"])
def test_a_private_repositorys_read_is_a_404_whatever_etag_is_sent(data, name):
    client = api_client()
    url = urls(data)[name]
    etag = client.get(url)["ETag"]
    Repository.objects.filter(pk=data.pull_request.repository_id).update(visibility="private")
    anonymous = api_client()
    assert anonymous.get(url, HTTP_IF_NONE_MATCH=etag).status_code == 404
    assert anonymous.get(url, HTTP_IF_NONE_MATCH="*").status_code == 404
