"""`manage.py verify --commit` reads a submodule's branch as it is upstream: it fetches the
submodule repositories its evidence names, as it fetches the PR's repository; with `--no-fetch`
it reads the mirrors as they are and says how old their copy of each branch is."""
import io
import json

import pytest
from django.core.management import call_command

from findings.models import VerificationRun
from reviews.models import Repository
from tests.submodules import verified_submodule_review

pytestmark = pytest.mark.django_db


def verify(*args, json_output: bool = True):
    out = io.StringIO()
    call_command("verify", "acme/rl", "4108", *args, *(["--json"] if json_output else []), stdout=out)
    return json.loads(out.getvalue()) if json_output else out.getvalue()


def gitlink_facts(report: dict) -> list[dict]:
    finding = next(finding for finding in report["findings"] if finding["number"] == 1)
    return [item["facts"] for item in finding["evidence"]]


@pytest.fixture
def review(tmp_path):
    pull_request, bridge = verified_submodule_review(tmp_path)
    head = pull_request.pins.get(role="head").commit.sha
    # Upstream, main takes the feature branch after the last fetch: the PR's pin is on main now.
    bridge.repo.git("merge", "--no-ff", "-m", "take the feature", "feature")
    return head, bridge


def test_verify_at_a_commit_fetches_the_submodule_and_reads_its_moved_branch_head(review):
    head, bridge = review
    report = verify("--commit", head)
    moved = bridge.repo.head()
    assert moved not in bridge.main
    for facts in gitlink_facts(report):
        assert facts["branch_head"] == moved and facts["on_branch"] is True and facts["ahead"] == 0
        assert "branch_as_of" not in facts
    off_branch = next(finding for finding in report["findings"] if finding["number"] == 1)["evidence"][1]
    assert off_branch["state"] != "holds"
    [submodule] = report["submodules"]
    assert (submodule["repository"], submodule["branch"], submodule["fetched"]) == (
        Repository.objects.get(clone_url=bridge.url).slug, "main", True,
    )


def test_verify_without_fetching_says_how_old_its_copy_of_the_branch_head_is(review):
    head, bridge = review
    fetched_at = Repository.objects.get(clone_url=bridge.url).fetched_at
    report = verify("--commit", head, "--no-fetch")
    for facts in gitlink_facts(report):
        # The head as it was at the last fetch, and when that was.
        assert facts["branch_head"] == bridge.main[-1] and facts["on_branch"] is False
        assert facts["branch_as_of"] == fetched_at.isoformat()
    [submodule] = report["submodules"]
    assert (submodule["fetched"], submodule["fetched_at"]) == (False, fetched_at.isoformat())
    message = VerificationRun.objects.latest("pk").message
    assert f"submodule branches read without fetching: {submodule['repository']} main as fetched" in message
    assert f"{fetched_at:%Y-%m-%d %H:%M} UTC" in message
    text = verify("--commit", head, "--no-fetch", json_output=False)
    assert f"Submodule {submodule['repository']} main was read as it was: last fetched {fetched_at.isoformat()}" in text
