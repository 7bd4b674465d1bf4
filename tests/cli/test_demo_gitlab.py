"""The demo's GitLab-shaped example: a merge request of a project in nested groups, loaded from
the same offline sample repository, verified, and reachable at its group/subgroup address with
GitLab's permalinks."""
import io

import pytest
from django.core.management import call_command

from cli.demo.gitlab_sample import NUMBER, SLUG
from findings.models import Verification
from reviews.models import PullRequest
from tests.personas import site_client, superuser

pytestmark = pytest.mark.django_db


@pytest.fixture
def demo_root(settings, tmp_path):
    settings.RECHECK_MIRROR_ROOT = tmp_path / "var" / "mirrors"
    return tmp_path / "var" / "demo"


def test_load_demo_loads_and_verifies_a_gitlab_merge_request_in_nested_groups(demo_root):
    out = io.StringIO()
    call_command("load_demo", stdout=out)

    merge_request = PullRequest.objects.select_related("repository").get(repository__slug=SLUG, number=NUMBER)
    assert merge_request.repository.forge == "gitlab"
    assert f"verified {SLUG}#{NUMBER}" in out.getvalue()
    assert Verification.objects.filter(finding__pull_request=merge_request).exists()
    page = site_client(superuser()).get(f"/{SLUG}/pull/{NUMBER}/blockers/")
    assert page.status_code == 200
    assert f"https://gitlab.example.com/{SLUG}/-/blob/".encode() in page.content

    call_command("load_demo", "--no-verify", stdout=io.StringIO())
    assert PullRequest.objects.filter(repository__slug=SLUG).count() == 1


def test_verify_takes_a_nested_group_slug(demo_root):
    call_command("load_demo", "--no-verify", stdout=io.StringIO())
    out = io.StringIO()
    call_command("verify", SLUG, str(NUMBER), "--json", stdout=out)

    assert SLUG in out.getvalue()
    merge_request = PullRequest.objects.get(repository__slug=SLUG, number=NUMBER)
    assert Verification.objects.filter(finding__pull_request=merge_request).exists()
