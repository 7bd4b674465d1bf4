"""An override of the gate reaches GitHub: the commit's check run, at the fake GitHub (which
validates every request against GitHub's schema), turns to success with a summary that says who
overrode it, why and at which commit; revoking it turns the check back to failure."""
import pytest

from findings.services.policy import gate_override_create, gate_override_revoke
from reviews.models import Commit
from tests import personas
from tests.factories import UserFactory
from tests.forge.scenario import deliver, the_check_run, verify

pytestmark = pytest.mark.django_db


def test_an_override_and_its_revocation_update_the_check_run(
    pull_request, repo, fake_github, django_capture_on_commit_callbacks
):
    verify(pull_request, repo.reviewed, django_capture_on_commit_callbacks)
    assert the_check_run(fake_github)["conclusion"] == "failure"
    maintainer = personas.member_of(pull_request.repository, UserFactory(username="keeper"), "maintainer")

    with django_capture_on_commit_callbacks(execute=True):
        override = gate_override_create(pull_request=pull_request, sha=repo.reviewed, reason="accepted_risk",
                                        note="The tolerance is tracked in #88.", actor=maintainer)
    deliver()
    run = the_check_run(fake_github)
    assert (run["head_sha"], run["status"], run["conclusion"]) == (repo.reviewed, "completed", "success")
    assert run["output"]["title"] == f"Gate overridden at {repo.reviewed[:8]} by keeper (accepted risk)"
    summary = run["output"]["summary"]
    assert summary.startswith(f"Overridden by keeper at {repo.reviewed[:8]} (accepted risk): "
                              "The tolerance is tracked in #88. Without the override: ")
    # The blockers are still listed under it.
    assert "[B1 Tolerance 0 never stops]" in summary

    with django_capture_on_commit_callbacks(execute=True):
        gate_override_revoke(override=override, actor=maintainer)
    deliver()
    run = the_check_run(fake_github)
    assert run["conclusion"] == "failure" and "Overridden" not in run["output"]["summary"]
    assert Commit.objects.filter(sha=repo.reviewed).exists()
