"""Due dates in a real git repository: a pull request merged under a policy that gives cleanups
three days has two cleanup follow-ups due three days after the merge. Due soon now; with the
clock moved past that date (the server runs in this process, so moving its clock moves the
server's), overdue in the API (and its `?overdue=true` filter), on the Follow-ups page and in
`recheck-gate follow-ups --fail-on-overdue`, run in its own process as a CI job runs it."""
import os
import subprocess
import sys
from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from findings.models import FollowUp
from findings.services.follow_ups.opening import follow_ups_open_on_merge
from findings.services.policy import repository_policy_update
from tests import personas
from tests.findings.follow_up_world import merged_world
from tests.recheck_gate.test_cli import ci_token, in_process_tasks  # noqa: F401 (fixtures, by name)

pytestmark = pytest.mark.django_db(transaction=True)

FOLLOW_UPS = "/api/repos/acme/loader/follow-ups/"


def follow_ups_command(live_server, token, *extra):
    env = {key: value for key, value in os.environ.items() if not key.startswith(("DJANGO_", "DATABASE_"))}
    env["RECHECK_TOKEN"] = token
    return subprocess.run(
        [sys.executable, "-m", "recheck_gate", "follow-ups", "--url", live_server.url, "--repo", "acme/loader",
         *extra], capture_output=True, text=True, env=env, timeout=60)


def moved_clock(monkeypatch, days: int):
    real = timezone.now
    monkeypatch.setattr(timezone, "now", lambda: real() + timedelta(days=days))


def test_a_follow_up_crossing_its_due_date_is_overdue_in_the_api_the_page_and_recheck_gate(
    live_server, ci_token, in_process_tasks, tmp_path, monkeypatch  # noqa: F811
):
    world = merged_world(tmp_path, merge=False)
    repository_policy_update(repository=world.pull_request.repository, actor=None, cleanup_due_days=3)
    merged_at = timezone.now()
    follow_ups_open_on_merge(pull_request=world.pull_request, merge_sha=world.merge)
    due = {follow_up.finding.number: follow_up.due_at for follow_up in FollowUp.objects.select_related("finding")}
    assert set(due) == {2, 3}  # the two open cleanups; the blocker was fixed
    for due_at in due.values():
        assert timedelta(days=3) <= due_at - merged_at < timedelta(days=3, minutes=1)

    api = APIClient()
    rows = api.get(FOLLOW_UPS).json()["results"]
    assert {row["finding_number"]: row["due_state"] for row in rows} == {2: "due_soon", 3: "due_soon"}
    assert api.get(FOLLOW_UPS, {"overdue": "true"}).json()["results"] == []
    page = personas.site_client().get("/acme/loader/follow-ups/").content.decode()
    assert page.count("Due soon</span>") == 2 and "Overdue</span>" not in page
    now = follow_ups_command(live_server, ci_token, "--fail-on-overdue")
    assert now.returncode == 0, now.stderr
    assert "Warning: 2 follow-up(s) of acme/loader left to do:" in now.stdout
    assert f"due soon {due[2].date().isoformat()}" in now.stdout

    moved_clock(monkeypatch, 4)
    rows = api.get(FOLLOW_UPS).json()["results"]
    assert {row["finding_number"]: row["due_state"] for row in rows} == {2: "overdue", 3: "overdue"}
    assert {row["finding_number"] for row in api.get(FOLLOW_UPS, {"overdue": "true"}).json()["results"]} == {2, 3}
    page = personas.site_client().get("/acme/loader/follow-ups/").content.decode()
    assert page.count("Overdue</span>") == 2
    later = follow_ups_command(live_server, ci_token, "--fail-on-overdue")
    assert later.returncode == 1, (later.stdout, later.stderr)
    assert "2 overdue" in later.stdout and "are overdue" in later.stderr
    # Without --fail-on-overdue it warns and passes.
    assert follow_ups_command(live_server, ci_token).returncode == 0
    # The repository page's figure counts them today.
    repository_page = personas.site_client().get("/acme/loader/").content.decode()
    assert "Overdue follow-ups over time" in repository_page


def test_a_bad_overdue_filter_is_a_clear_400(db, tmp_path):
    merged_world(tmp_path)
    response = APIClient().get(FOLLOW_UPS, {"overdue": "soon"})
    assert response.status_code == 400 and "true or false" in str(response.json())
