"""recheck-gate against a live Recheck (pytest-django's live server), run as CI runs it: a separate
Python process with no Django settings, talking to the REST API with a token."""
import json
import os
import subprocess
import sys
import threading
import time
from importlib.metadata import entry_points

import jsonschema
import pytest

from django.db import connection

from findings.models import Finding, VerificationRun
from findings.services.resolution import finding_resolve
from reviews.mirrors import repository_fetch
from recheck.celery import app
from tests.factories import UserFactory, make_api_token
from tests.workers import forget_broker_connections
from tests.findings.services.test_verification import LOADER, import_review
from tests.gitrepo import GitRepoBuilder

pytestmark = pytest.mark.django_db(transaction=True)

# reviewdog's Diagnostic Format as its documentation (proto/rdf/reviewdog.proto) defines the
# fields: a result with a source and diagnostics; each diagnostic a message, a location (path
# and a range of positions), a severity from its enum, a source and a code. Stricter than
# reviewdog's generated schema, which allows any extra property.
POSITION = {"type": "object", "properties": {"line": {"type": "integer", "minimum": 1},
                                             "column": {"type": "integer", "minimum": 1}},
            "required": ["line"], "additionalProperties": False}
SOURCE = {"type": "object", "properties": {"name": {"type": "string"}, "url": {"type": "string"}},
          "required": ["name"], "additionalProperties": False}
SEVERITY = {"enum": ["UNKNOWN_SEVERITY", "ERROR", "WARNING", "INFO"]}
RDJSON_SCHEMA = {
    "type": "object",
    "properties": {
        "source": SOURCE,
        "severity": SEVERITY,
        "diagnostics": {"type": "array", "items": {
            "type": "object",
            "properties": {
                "message": {"type": "string", "minLength": 1},
                "location": {"type": "object", "properties": {
                    "path": {"type": "string", "minLength": 1},
                    "range": {"type": "object", "properties": {"start": POSITION, "end": POSITION},
                              "required": ["start"], "additionalProperties": False},
                }, "required": ["path"], "additionalProperties": False},
                "severity": SEVERITY,
                "source": SOURCE,
                "code": {"type": "object", "properties": {"value": {"type": "string"}, "url": {"type": "string"}},
                         "required": ["value"], "additionalProperties": False},
                "suggestions": {"type": "array"},
                "original_output": {"type": "string"},
            },
            "required": ["message", "location"],
            "additionalProperties": False,
        }},
    },
    "required": ["diagnostics"],
    "additionalProperties": False,
}
# What GitLab requires of each entry of a code quality report (its docs, "Code Quality report
# format"): description, check_name, fingerprint, severity from its list, location.path, and
# location.lines.begin (or positions.begin.line).
CODECLIMATE_SCHEMA = {
    "type": "array",
    "items": {
        "type": "object",
        "properties": {
            "description": {"type": "string", "minLength": 1},
            "check_name": {"type": "string", "minLength": 1},
            "fingerprint": {"type": "string", "minLength": 1},
            "severity": {"enum": ["info", "minor", "major", "critical", "blocker"]},
            "location": {"type": "object", "properties": {
                "path": {"type": "string", "minLength": 1},
                "lines": {"type": "object", "properties": {"begin": {"type": "integer", "minimum": 1},
                                                           "end": {"type": "integer", "minimum": 1}},
                          "required": ["begin"]},
            }, "required": ["path", "lines"]},
        },
        "required": ["description", "check_name", "fingerprint", "severity", "location"],
    },
}


@pytest.fixture
def repo(tmp_path):
    builder = GitRepoBuilder(tmp_path)
    builder.write("src/loader.py", LOADER).write("config.yaml", "debug: true\n")
    builder.reviewed = builder.commit("reviewed")
    builder.head = builder.write("README.md", "pushed\n").commit("pushed again")
    return builder


@pytest.fixture
def pull_request(repo):
    return import_review(repo, commits=[{"sha": repo.reviewed, "role": "reviewed"}])


@pytest.fixture
def ci_token(db):
    user = UserFactory(username="ci", permissions=["findings.verify_pullrequest"])
    return make_api_token(user, scopes=["read", "verify"], name="CI gate")


@pytest.fixture
def in_process_tasks():
    saved = app.conf.task_always_eager
    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = saved


@pytest.fixture
def no_worker(settings):
    """Tasks are queued on a broker nobody consumes: a verification never ends."""
    saved = {key: app.conf[key] for key in ("task_always_eager", "broker_url")}
    if not settings.CELERY_BROKER_URL:
        app.conf.update(broker_url="memory://")
        forget_broker_connections()
    app.conf.task_always_eager = False
    yield
    app.control.purge()
    app.conf.update(saved)
    forget_broker_connections()


@pytest.fixture
def slow_worker(no_worker):
    """A worker that takes its time: it picks up the queued run three seconds after it appears and
    runs the real task on it, so a client has to wait for the verdict."""
    stop = threading.Event()

    def work():
        try:
            while not stop.is_set():
                run = VerificationRun.objects.filter(status="queued").first()
                if run is not None:
                    stop.wait(3)
                    app.tasks["findings.tasks.run_verification"].apply(args=[run.pk])
                    return
                stop.wait(0.2)
        finally:
            connection.close()

    thread = threading.Thread(target=work)
    thread.start()
    yield
    stop.set()
    thread.join(30)


def gate(live_server, token, repo, *extra, timeout=60):
    """Run recheck-gate in its own process, without Django settings, as a CI job would."""
    env = {key: value for key, value in os.environ.items() if not key.startswith(("DJANGO_", "DATABASE_"))}
    env["RECHECK_TOKEN"] = token
    started = time.monotonic()
    process = subprocess.Popen(
        [sys.executable, "-m", "recheck_gate", "--url", live_server.url, "--repo", "acme/loader", "--pr", "7",
         "--sha", repo.head, *extra],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        stdout, stderr = process.communicate()
        raise AssertionError(f"recheck-gate still running after {timeout}s; it said:\n{stderr}") from None
    completed = subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)
    completed.elapsed = time.monotonic() - started
    return completed


def test_it_is_installed_as_a_console_script():
    [script] = [point for point in entry_points(group="console_scripts") if point.name == "recheck-gate"]
    assert script.value == "recheck_gate.cli:main"


def test_it_imports_without_django():
    code = "import sys, recheck_gate.cli; sys.exit(1 if any(m.startswith('django') for m in sys.modules) else 0)"
    assert subprocess.run([sys.executable, "-c", code], env={"PATH": os.environ["PATH"]}).returncode == 0


def test_it_asks_for_a_verification_waits_for_it_and_exits_1_while_blockers_hold(
    live_server, ci_token, repo, pull_request, slow_worker
):
    result = gate(live_server, ci_token, repo)

    assert result.returncode == 1, result.stderr
    assert f"Asked Recheck to verify {repo.head[:8]}" in result.stderr
    assert "Waiting for verification run" in result.stderr and result.elapsed >= 3
    assert "2 open blocker(s) at" in result.stdout
    assert "B1 Tolerance 0 never stops: present" in result.stdout
    run = VerificationRun.objects.get(pull_request=pull_request, commit__sha=repo.head)
    assert run.status == "done"


def test_it_exits_0_once_no_blocker_is_open(live_server, ci_token, repo, pull_request, in_process_tasks):
    # A typed SHA is checked against the mirror: fetched first, as verifying would.
    repository_fetch(repository=pull_request.repository)
    for finding in Finding.objects.filter(pull_request=pull_request, kind="blocker"):
        finding_resolve(finding=finding, status="fixed", actor=None, source="api", commit_sha=repo.reviewed)

    result = gate(live_server, ci_token, repo)

    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"No open blocker at {repo.head[:8]}")


def test_it_exits_2_when_the_verdict_does_not_come_in_time(live_server, ci_token, repo, pull_request, no_worker):
    result = gate(live_server, ci_token, repo, "--timeout", "4")

    assert result.returncode == 2
    assert f"No verdict for {repo.head[:8]} within 4s" in result.stderr
    # It polled with growing waits rather than hammering the server.
    assert result.stderr.count("Waiting for verification run") in range(2, 5)
    assert result.elapsed < 30


def test_it_exits_2_when_the_token_is_refused(live_server, repo, pull_request, in_process_tasks):
    result = gate(live_server, "not-a-token", repo)

    assert result.returncode == 2
    assert "Recheck refused the token (401)" in result.stderr


def test_it_exits_2_when_recheck_cannot_be_reached(repo):
    class Nowhere:
        url = "http://127.0.0.1:9"

    result = gate(Nowhere, "token", repo, "--timeout", "1")

    assert result.returncode == 2
    assert "could not be reached" in result.stderr


def test_it_exits_2_for_a_pull_request_recheck_does_not_know(live_server, ci_token, repo, in_process_tasks):
    result = gate(live_server, ci_token, repo)

    assert result.returncode == 2
    assert "(404)" in result.stderr


def test_rdjson_gives_reviewdog_a_diagnostic_per_open_finding(
    live_server, ci_token, repo, pull_request, in_process_tasks
):
    result = gate(live_server, ci_token, repo, "--format", "rdjson")

    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout)
    jsonschema.validate(report, RDJSON_SCHEMA)
    by_code = {item["code"]["value"]: item for item in report["diagnostics"]}
    assert set(by_code) == {"B1", "B2"}
    assert by_code["B1"]["location"] == {"path": "src/loader.py",
                                         "range": {"start": {"line": 10}, "end": {"line": 10}}}
    assert by_code["B1"]["severity"] == "ERROR"
    assert by_code["B1"]["message"].startswith("Blocker 1: Tolerance 0 never stops")
    # The text report goes to stderr, so the JSON can be piped straight into reviewdog.
    assert "2 open blocker(s)" in result.stderr


def test_codeclimate_gives_gitlab_the_fields_it_requires(
    live_server, ci_token, repo, pull_request, in_process_tasks
):
    result = gate(live_server, ci_token, repo, "--format", "codeclimate")

    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout)
    jsonschema.validate(report, CODECLIMATE_SCHEMA)
    assert {(item["check_name"], item["severity"], item["location"]["path"]) for item in report} == {
        ("recheck-blocker", "blocker", "src/loader.py"), ("recheck-blocker", "blocker", "config.yaml"),
    }
    assert len({item["fingerprint"] for item in report}) == 2
    again = json.loads(gate(live_server, ci_token, repo, "--format", "codeclimate").stdout)
    assert [item["fingerprint"] for item in again] == [item["fingerprint"] for item in report]
