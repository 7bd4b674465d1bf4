"""The sample's own CI when the demo loads: its tests (pytest's JUnit XML) and its linter (ruff's
SARIF) run at each pinned commit and recorded through the report service, so its check items get
real verdicts; without the tools the load still succeeds, says what it did not run, records
nothing, and the items wait for CI."""
import io
import sys

import pytest
from django.core.management import call_command

from cli.demo.sample_bundle import LIMITS_TEST, LINT_CHECK, PRINT_LINE, TESTS_CHECK
from cli.demo.sample_repository import EXPECTED_SHAS, EXPECTED_VERDICTS
from findings.models import CheckReport, EvidenceResult, ReportedResult, ReportedTest, Verification

# A report's re-derivation runs in-process even where a broker is configured (CI).
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("eager_tasks")]

PINNED = ("reviewed", "rebased", "head")


@pytest.fixture
def demo_root(settings, tmp_path):
    settings.RECHECK_MIRROR_ROOT = tmp_path / "var" / "mirrors"
    return tmp_path / "var" / "demo"


def load() -> str:
    out = io.StringIO()
    call_command("load_demo", stdout=out)
    return out.getvalue()


def verdicts() -> dict:
    return {(verification.finding.number, role): (verification.verdict, verification.verdict_reason)
            for role in PINNED
            for verification in Verification.objects.filter(
                finding__pull_request__repository__slug="recheck-demo/sample", commit__sha=EXPECTED_SHAS[role],
            ).select_related("finding")}


def check_facts(number: int) -> dict[str, dict]:
    return {role: EvidenceResult.objects.get(
        verification__finding__pull_request__repository__slug="recheck-demo/sample",
        verification__finding__number=number, verification__commit__sha=EXPECTED_SHAS[role], evidence__kind="check",
    ).facts for role in PINNED}


def test_loading_the_demo_runs_the_sample_s_own_tests_and_linter_and_records_what_they_report(demo_root):
    said = load()

    reports = {(report.commit.sha, report.check_name): report
               for report in CheckReport.objects.filter(repository__slug="recheck-demo/sample").select_related("commit")}
    assert set(reports) == {(EXPECTED_SHAS[role], check) for role in PINNED for check in (TESTS_CHECK, LINT_CHECK)}
    tests = {role: reports[(EXPECTED_SHAS[role], TESTS_CHECK)] for role in PINNED}
    assert {role: (report.format, report.source, report.conclusion, report.tests, report.tests_failed)
            for role, report in tests.items()} == {
        "reviewed": ("junit", "command", "failure", 2, 1),
        "rebased": ("junit", "command", "failure", 2, 1),
        "head": ("junit", "command", "success", 2, 0),
    }
    limits = ReportedTest.objects.filter(report__in=tests.values(), name="test_every_reader_gives_up_on_a_broken_file")
    assert sorted((test.report.commit.sha, test.classname, test.outcome) for test in limits) == sorted([
        (EXPECTED_SHAS["reviewed"], "tests.test_limits", "failed"),
        (EXPECTED_SHAS["rebased"], "tests.test_limits", "failed"),
        (EXPECTED_SHAS["head"], "tests.test_limits", "passed"),
    ])
    # ruff's absolute paths are made relative to the checkout it ran in.
    printed = {role: list(ReportedResult.objects.filter(report=reports[(EXPECTED_SHAS[role], LINT_CHECK)])
                          .values_list("rule", "path", "start_line")) for role in PINNED}
    assert printed == {"reviewed": [("T201", "src/sampleloader/stream.py", PRINT_LINE)],
                       "rebased": [("T201", "src/sampleloader/stream.py", 29)],
                       "head": [("T201", "src/sampleloader/stream.py", 29)]}

    # The verdicts the sample's table gives, the check items' among them.
    assert verdicts() == {(number, role): (by_role[role], "") for number, by_role in EXPECTED_VERDICTS.items()
                          for role in PINNED}
    named = check_facts(4)
    assert [(named[role]["outcome"], [test["outcome"] for test in named[role]["tests"]]) for role in PINNED] == [
        ("fails", ["failed"]), ("fails", ["failed"]), ("passes", ["passed"])]
    assert named["reviewed"]["tests"][0]["id"] == LIMITS_TEST
    lint = check_facts(7)
    assert [(lint[role]["outcome"], lint[role]["results"][0]["now_line"]) for role in PINNED] == [
        ("fails", PRINT_LINE), ("fails", 29), ("fails", 29)]

    assert f"{TESTS_CHECK} at {EXPECTED_SHAS['reviewed'][:7]} (reviewed): failed, 2 tests, 1 failed" in said
    assert f"{TESTS_CHECK} at {EXPECTED_SHAS['head'][:7]} (head): passed, 2 tests, 0 failed" in said
    assert f"{LINT_CHECK} at {EXPECTED_SHAS['rebased'][:7]} (rebased): failed, 1 result" in said


def test_loading_again_runs_nothing_again_and_records_nothing_twice(demo_root):
    load()
    kept = sorted(CheckReport.objects.values_list("pk", flat=True))
    said = load()
    assert sorted(CheckReport.objects.values_list("pk", flat=True)) == kept
    assert said.count("already recorded") == 6


def test_without_pytest_and_ruff_the_load_says_what_it_did_not_run_and_the_items_wait_for_ci(
    demo_root, settings, tmp_path,
):
    # What a machine without the test extras has: no pytest for this interpreter, no ruff at all.
    settings.RECHECK_DEMO_TESTS_COMMAND = [sys.executable, "-m", "pytest_is_not_installed_here"]
    settings.RECHECK_DEMO_LINT_COMMAND = [str(tmp_path / "bin" / "ruff")]

    said = load()

    assert "The sample's tests (pytest) were not run" in said
    assert "The sample's linter (ruff) were not run" not in said and "The sample's linter (ruff) was not run" in said
    assert said.count("install Recheck's test extras (pip install -e '.[test]')") == 2
    assert f"Nothing was recorded for {TESTS_CHECK}" in said and f"Nothing was recorded for {LINT_CHECK}" in said
    assert f"verified recheck-demo/sample#1 at {EXPECTED_SHAS['head'][:8]} (head): 1 likely fixed, " in said
    assert said.count("2 waiting for CI") == 3
    assert not CheckReport.objects.exists()
    # The items that name the checks wait for CI at every pin; nothing else changes.
    waiting = {(number, role): ("error", "waiting") for number in (4, 7) for role in PINNED}
    assert verdicts() == {**{(number, role): (by_role[role], "") for number, by_role in EXPECTED_VERDICTS.items()
                             for role in PINNED}, **waiting}


def test_a_run_past_its_time_limit_is_said_and_records_nothing(demo_root, settings):
    settings.RECHECK_DEMO_CI_TIMEOUT = 0.001

    said = load()

    assert said.count("ran past 0.001 s (RECHECK_DEMO_CI_TIMEOUT)") == 6
    assert not CheckReport.objects.exists()
    assert "verified recheck-demo/sample#1 at" in said
