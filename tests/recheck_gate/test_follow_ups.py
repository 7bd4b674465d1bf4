"""recheck-gate --follow-ups: a CI job that wants to warn lists the repository's follow-ups still
to do, read from the API by the plain client in its own process; the exit code stays the gate's."""
import pytest

from findings.services.follow_ups.decisions import follow_up_close
from recheck_gate.cli import follow_ups_report
from tests.findings.follow_up_world import check, merged_world, push_the_move_and_the_fix
from tests.recheck_gate.test_cli import ci_token, gate, in_process_tasks  # noqa: F401 (fixtures, by name)

pytestmark = pytest.mark.django_db(transaction=True)


def test_it_warns_of_the_follow_ups_left_to_do_and_still_exits_with_the_gate_s_answer(
    live_server, ci_token, in_process_tasks, tmp_path  # noqa: F811
):
    world = push_the_move_and_the_fix(merged_world(tmp_path))
    check(world)
    follow_up_close(actor=None, follow_up=world.follow_up(2), reason="Moved to another project.")
    world.repo.head = world.reviewed  # the commit CI runs on, as the gate's helper reads it
    result = gate(live_server, ci_token, world.repo, "--follow-ups")
    assert result.returncode == 0, result.stderr
    assert "Warning: 1 follow-up(s) of acme/loader left to do:" in result.stdout
    assert "acme/loader#7/3 DEBUG left on: Verified fixed, to be marked, Likely fixed" in result.stdout
    assert "gone, last seen at src/loader.py:16" in result.stdout
    assert "#7/2" not in result.stdout


def test_the_report_says_so_when_nothing_is_left():
    assert follow_ups_report([], repo="acme/loader") == "No follow-up of acme/loader is left to do."
