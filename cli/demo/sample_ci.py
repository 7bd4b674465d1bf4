"""The sample's CI, run on this machine when the demo loads: its own tests (pytest, writing JUnit
XML) and its own linter (ruff, writing SARIF), each at every pinned commit of the sample's review,
in a checkout of that commit made for the purpose and removed after. What they report is recorded
through the one report service (`check_report_record`), as any CI's upload is, so the sample's
check items get real verdicts.

pytest and ruff come with Recheck's test extras, not with its image. Where one of them does not
answer, its check is not run and nothing is recorded for it: the load says which and how to get
it, and the items that name that check wait for CI, as they would for a real CI that has not
reported. A commit whose report of a check is already kept is not run again (the sample builds to
the same commits every time, so loading twice records nothing twice)."""
from __future__ import annotations

import io
import os
import subprocess
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

from cli.demo.sample_bundle import LINT_CHECK, TESTS_CHECK
from cli.demo.sample_repository import SampleRepository
from core import vocabulary
from core.errors import RecheckError
from findings.models import CheckReport
from findings.services.reports import check_report_record
from reviews.models import PullRequest

PINNED = ("reviewed", "rebased", "head")
EXTRAS = "install Recheck's test extras (pip install -e '.[test]'), then load the demo again"


@dataclass(frozen=True)
class Tool:
    check: str  # the check its report is recorded as
    what: str  # "tests", "linter"
    name: str  # pytest, ruff
    setting: str

    @property
    def command(self) -> list[str]:
        return list(getattr(settings, self.setting))


TOOLS = (
    Tool(TESTS_CHECK, "tests", "pytest", "RECHECK_DEMO_TESTS_COMMAND"),
    Tool(LINT_CHECK, "linter", "ruff", "RECHECK_DEMO_LINT_COMMAND"),
)


@dataclass
class CiRun:
    """One check at one commit (or at none, when its tool is missing): what the load says of it."""

    check: str
    role: str
    recorded: bool
    said: str
    # Not run, or run without a report to keep: said as a warning.
    problem: bool = False


def sample_ci_run(pull_request: PullRequest, repository: SampleRepository) -> list[CiRun]:
    """Run the sample's tests and linter at each pinned commit and record what they report."""
    runs: list[CiRun] = []
    for tool in TOOLS:
        missing = _unavailable(tool)
        if missing:
            runs.append(CiRun(tool.check, "", False, (
                f"The sample's {tool.what} ({tool.name}) {'were' if tool.what.endswith('s') else 'was'} not run: "
                f"{missing}. Nothing was recorded for "
                f"{tool.check}, so its check items wait for CI; {EXTRAS}."), problem=True))
            continue
        for role in PINNED:
            runs.append(_run_at(tool, pull_request, repository, role))
    return runs


def _unavailable(tool: Tool) -> str:
    """Why `tool`'s command cannot run here, or '' when it answers `--version`."""
    command = tool.command
    try:
        answer = subprocess.run([*command, "--version"], capture_output=True, timeout=60, check=False,
                                env=_environment(None))
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"{' '.join(command)} cannot be started ({error.__class__.__name__}: {error})"
    if answer.returncode != 0:
        said = _last_line(answer.stderr) or f"exit status {answer.returncode}"
        return f"{' '.join(command)} --version failed ({said})"
    return ""


def _run_at(tool: Tool, pull_request: PullRequest, repository: SampleRepository, role: str) -> CiRun:
    sha = repository.commits[role]
    at = f"{sha[:7]} ({role})"
    if CheckReport.objects.filter(repository=pull_request.repository, commit__sha=sha, check_name=tool.check).exists():
        return CiRun(tool.check, role, False, f"{tool.check} at {at}: already recorded")
    with tempfile.TemporaryDirectory(prefix="recheck-demo-ci-") as scratch:
        checkout = Path(scratch).resolve() / "checkout"
        try:
            _check_out(repository.path, sha, checkout)
            report = _tests(tool, checkout) if tool.check == TESTS_CHECK else _lint(tool, checkout)
            # A report the service refuses (ReportError) is said like a run that went wrong.
            recorded = check_report_record(
                repository=pull_request.repository, sha=sha, check=tool.check, source=vocabulary.REPORT_COMMAND,
                file=report, checkout_root=str(checkout),
            ).report
        except subprocess.TimeoutExpired:
            return CiRun(tool.check, role, False, (
                f"{tool.check} at {at}: not recorded, {tool.name} ran past {settings.RECHECK_DEMO_CI_TIMEOUT} s "
                "(RECHECK_DEMO_CI_TIMEOUT)"), problem=True)
        except RecheckError as error:
            return CiRun(tool.check, role, False, f"{tool.check} at {at}: not recorded, {error}", problem=True)
    if recorded.format == vocabulary.REPORT_JUNIT:
        figures = f"{recorded.tests} tests, {recorded.tests_failed} failed"
    else:
        figures = f"{recorded.results} result{'' if recorded.results == 1 else 's'}"
    said = f"{vocabulary.conclusion_label(recorded.conclusion).lower()}, {figures}"
    return CiRun(tool.check, role, True, f"{tool.check} at {at}: {said}")


def _tests(tool: Tool, checkout: Path) -> bytes:
    """pytest over the checkout, as its own configuration says (pyproject.toml), writing JUnit XML.
    Exit 0 (passed) and 1 (some failed) are reports; anything else is a run that went wrong."""
    out = checkout.parent / "junit.xml"
    run = subprocess.run(
        [*tool.command, "-q", "-p", "no:cacheprovider", f"--junitxml={out}"],
        cwd=checkout, capture_output=True, timeout=settings.RECHECK_DEMO_CI_TIMEOUT, check=False,
        env=_environment(checkout),
    )
    if run.returncode not in (0, 1) or not out.is_file():
        raise RecheckError(f"pytest ended with exit status {run.returncode} ({_last_line(run.stdout + run.stderr)})")
    return out.read_bytes()


def _lint(tool: Tool, checkout: Path) -> bytes:
    """ruff over the checkout with its own settings, writing SARIF (paths absolute to the checkout,
    taken off by the report service)."""
    run = subprocess.run(
        [*tool.command, "check", "--no-cache", "--exit-zero", "--output-format", "sarif", "."],
        cwd=checkout, capture_output=True, timeout=settings.RECHECK_DEMO_CI_TIMEOUT, check=False,
        env=_environment(checkout),
    )
    if run.returncode != 0 or not run.stdout.lstrip().startswith(b"{"):
        raise RecheckError(f"ruff ended with exit status {run.returncode} ({_last_line(run.stderr)})")
    return run.stdout


def _check_out(git_dir: Path, sha: str, into: Path) -> None:
    """The commit's files (no submodules: the sample's tests do not read them), from git archive."""
    into.mkdir(parents=True)
    archive = subprocess.run(["git", "--git-dir", str(git_dir), "archive", "--format=tar", sha],
                             capture_output=True, timeout=60, check=False, env=_environment(None))
    if archive.returncode != 0:
        raise RecheckError(f"git archive of {sha[:7]} failed: {_last_line(archive.stderr)}")
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(into, filter="data")


def _environment(checkout: Path | None) -> dict[str, str]:
    """A bare environment: no proxy, no Django settings and no plugins of this interpreter's own
    (pytest loads only what the sample asks for), and nothing written outside the scratch directory."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1",
           "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
    if checkout is not None:
        env["HOME"] = str(checkout.parent)
    return env


def _last_line(output: bytes) -> str:
    lines = [line.strip() for line in output.decode(errors="replace").splitlines() if line.strip()]
    return lines[-1][:300] if lines else ""
