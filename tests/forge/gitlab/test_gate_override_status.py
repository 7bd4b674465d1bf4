"""An override of the gate reaches GitLab: the head's `recheck` commit status turns from failed to
success, with a description that says who overrode it and why; revoked, it is failed again."""
import pytest

from findings.services.policy import gate_override_create, gate_override_revoke
from tests import personas
from tests.factories import UserFactory
from tests.forge.gitlab_world import merge_request_event
from tests.forge.gitlab.test_merge_requests import hook, statuses
from tests.forge.scenario import deliver

pytestmark = pytest.mark.django_db


def test_an_override_and_its_revocation_reach_the_commit_status(
    client, merge_request, gitlab_repo, fake_gitlab, django_capture_on_commit_callbacks
):
    gitlab_repo.write("config.yaml", "debug: false\n")
    head = gitlab_repo.commit("turn debug off")
    hook(client, django_capture_on_commit_callbacks, merge_request_event("update", head, oldrev=gitlab_repo.reviewed))
    assert statuses(fake_gitlab, head)[-1]["status"] == "failed"
    maintainer = personas.member_of(merge_request.repository, UserFactory(username="keeper"), "maintainer")

    with django_capture_on_commit_callbacks(execute=True):
        override = gate_override_create(pull_request=merge_request, sha=head, reason="urgent_fix",
                                        note="Outage fix.", actor=maintainer)
    deliver()
    latest = statuses(fake_gitlab, head)[-1]
    assert latest["status"] == "success"
    assert latest["description"] == f"Gate overridden at {head[:8]} by keeper (urgent fix)"

    with django_capture_on_commit_callbacks(execute=True):
        gate_override_revoke(override=override, actor=maintainer)
    deliver()
    assert statuses(fake_gitlab, head)[-1]["status"] == "failed"
