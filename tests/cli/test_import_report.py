"""manage.py import_report: a CI report of a commit recorded from a file, or a bare conclusion."""
import pytest
from django.core.management import CommandError, call_command

from findings.models import CheckReport, ReportedResult
from tests.reports import calc_repository, pytest_junit, ruff_sarif

pytestmark = pytest.mark.django_db


@pytest.fixture
def calc(tmp_path):
    return calc_repository(tmp_path)


def run(*args) -> str:
    from io import StringIO

    out = StringIO()
    call_command("import_report", *args, stdout=out)
    return out.getvalue()


def test_a_junit_file_is_recorded_and_recording_it_again_says_so(calc, tmp_path):
    junit = tmp_path / "junit.xml"
    pytest_junit(calc.repo.path, junit)
    said = run("acme/calc", str(junit), "--commit", calc.repo.sha[:8], "--check", "unit-tests")
    assert said == f"Recorded unit-tests at {calc.repo.sha[:12]}: failed, 4 tests, 2 failed.\n"
    assert run("acme/calc", str(junit), "--commit", calc.repo.sha, "--check", "unit-tests").startswith(
        "Already recorded: unit-tests"
    )
    report = CheckReport.objects.get()
    assert (report.source, report.format) == ("command", "junit")


def test_a_sarif_file_with_the_checkout_root_and_a_bare_conclusion(calc, tmp_path):
    sarif = tmp_path / "ruff.sarif"
    sarif.write_bytes(ruff_sarif(calc.repo.path, "config/soak.py"))
    run("acme/calc", str(sarif), "--commit", calc.repo.sha, "--check", "lint", "--checkout-root", str(calc.repo.path))
    assert list(ReportedResult.objects.values_list("path", "start_line")) == [("config/soak.py", 1)]
    said = run("acme/calc", "--commit", calc.repo.sha, "--check", "fast-forward", "--conclusion", "failure")
    assert said.startswith("Recorded fast-forward at") and said.endswith(": failed.\n")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("acme/calc", "--commit", "abc1234", "--check", "t"), "Give a report file, or --conclusion"),
        (("acme/nothing", "--commit", "abc1234", "--check", "t", "--conclusion", "failure"), "No repository acme/nothing"),
        (("acme/calc", "missing.xml", "--commit", "abc1234", "--check", "t"), "Cannot read missing.xml"),
        (("acme/calc", "--commit", "f" * 40, "--check", "t", "--conclusion", "failure"), "nothing was kept"),
    ],
)
def test_what_cannot_be_recorded_is_a_command_error_and_nothing_is_kept(calc, args, message):
    with pytest.raises(CommandError) as error:
        run(*args)
    assert message in str(error.value) and not CheckReport.objects.exists()
