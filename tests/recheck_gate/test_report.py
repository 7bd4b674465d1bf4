"""recheck-gate report against a live Recheck, run as a CI job runs it: its own Python process with
no Django settings, sending a real JUnit report (pytest's, made in the test), a real SARIF log
(ruff's, with the absolute paths of the job's checkout) and a bare conclusion."""
import os
import subprocess
import sys

import pytest

from core import vocabulary
from findings.models import CheckReport, ReportedResult
from recheck_gate import cli
from tests.factories import UserFactory, make_api_token
from tests.personas import member_of
from tests.reports import calc_repository, pytest_junit, ruff_sarif

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def calc(tmp_path):
    return calc_repository(tmp_path)


@pytest.fixture
def ci_token(calc):
    user = member_of(calc, UserFactory(username="ci"), "reviewer")
    return make_api_token(user, scopes=["reports:write"], repositories=[calc], name="CI reports")


def report(live_server, token, calc, *args, env_extra=None):
    env = {key: value for key, value in os.environ.items() if not key.startswith(("DJANGO_", "DATABASE_"))}
    env.pop("GITHUB_WORKSPACE", None)
    env.pop("CI_PROJECT_DIR", None)
    env.update(RECHECK_TOKEN=token, **(env_extra or {}))
    return subprocess.run(
        [sys.executable, "-m", "recheck_gate", "report", "--url", live_server.url, "--repo", "acme/calc",
         "--sha", calc.repo.sha, *args],
        capture_output=True, text=True, env=env, timeout=120,
    )


def test_a_junit_report_is_sent_and_sending_it_again_says_so(live_server, ci_token, calc, tmp_path):
    junit = tmp_path / "junit.xml"
    pytest_junit(calc.repo.path, junit)
    sent = report(live_server, ci_token, calc, "--check", "unit-tests", "--junit", str(junit),
                  "--run-url", "https://ci.example.com/runs/9")
    assert sent.returncode == 0, sent.stderr
    assert sent.stdout == f"Sent unit-tests at {calc.repo.sha[:12]}: failure, 4 tests, 2 failed\n"
    again = report(live_server, ci_token, calc, "--check", "unit-tests", "--junit", str(junit),
                   "--run-url", "https://ci.example.com/runs/9")
    assert again.returncode == 0 and again.stdout.startswith("Already sent: unit-tests")
    assert CheckReport.objects.get().url == "https://ci.example.com/runs/9"


def test_a_sarif_log_takes_the_job_s_checkout_from_the_ci_s_environment(live_server, ci_token, calc):
    sarif = calc.repo.path.parent / "ruff.sarif"
    sarif.write_bytes(ruff_sarif(calc.repo.path, "config/soak.py"))
    sent = report(live_server, ci_token, calc, "--check", "lint", "--sarif", str(sarif),
                  env_extra={"GITHUB_WORKSPACE": str(calc.repo.path)})
    assert sent.returncode == 0, sent.stderr
    assert list(ReportedResult.objects.values_list("rule", "path", "start_line")) == [("S105", "config/soak.py", 1)]


def test_a_bare_conclusion_is_sent_and_a_refusal_exits_2_saying_why(live_server, ci_token, calc):
    sent = report(live_server, ci_token, calc, "--check", "fast-forward", "--conclusion", "failure")
    assert sent.returncode == 0 and sent.stdout.endswith(": failure\n")
    refused = report(live_server, "not-a-token", calc, "--check", "fast-forward", "--conclusion", "failure")
    assert refused.returncode == 2 and "401" in refused.stderr
    broken = calc.repo.path.parent / "broken.xml"
    broken.write_bytes(b"<testsuite><testcase")
    refused = report(live_server, ci_token, calc, "--check", "unit-tests", "--junit", str(broken))
    assert refused.returncode == 2 and "Not well-formed XML" in refused.stderr
    assert CheckReport.objects.count() == 1


def test_the_gate_names_conclusions_as_recheck_does():
    assert cli.CONCLUSIONS == vocabulary.CONCLUSIONS
