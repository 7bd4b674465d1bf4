"""What a process loads: the plain layers load no framework, and Django's set-up does not load what
only a call to GitHub, a page render or a sign-in needs. Each check runs a new interpreter, since
the test process itself has everything loaded."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def loaded_after(code: str, *, settings: str = "") -> set[str]:
    """The top-level modules a new interpreter holds after running `code`."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": str(ROOT)}
    if settings:
        env.update(DJANGO_SETTINGS_MODULE=settings, SECRET_KEY="k" * 50, DATABASE_URL="sqlite:///:memory:")
    script = f"{code}\nimport sys\nprint('\\n'.join(sorted(sys.modules)))"
    result = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    return set(result.stdout.split())


@pytest.mark.parametrize("package", ["core", "engine"])
def test_importing_a_plain_layer_loads_neither_django_nor_celery(package):
    modules = loaded_after(
        f"import pkgutil, importlib, {package}\n"
        f"for info in pkgutil.walk_packages({package}.__path__, '{package}.'): importlib.import_module(info.name)"
    )
    assert f"{package}.errors" in modules or f"{package}.git.reader" in modules
    assert not {"django.db", "celery", "kombu", "rest_framework"} & modules


def test_django_setup_loads_only_what_every_process_needs():
    modules = loaded_after("import django; django.setup()", settings="recheck.settings")
    assert "forge.receivers" in modules  # the apps and their receivers are loaded...
    # ...but not what only a call to GitHub, a page, a sign-in, the admin or handing work on needs.
    assert not {"githubkit", "markdown_it", "requests", "celery", "kombu", "backoffice.admin", "forge.outbox.services"} & modules
    # The apps' receivers import reviews.services for pull_request_changed; the engine's git package
    # is loaded by the writes that check a URL, and by verification, not by every process.
    assert "reviews.services" in modules
    assert not {name for name in modules if name == "engine" or name.startswith("engine.")}


def test_manage_py_resumes_the_collector_once_the_apps_are_ready():
    # manage.py pauses the collector for Django's set-up (core.collector): a command runs with it
    # collecting again, the set-up's objects frozen out of its passes.
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "recheck.settings", "SECRET_KEY": "k" * 50,
           "DATABASE_URL": "sqlite:///:memory:"}
    result = subprocess.run(
        [sys.executable, "manage.py", "shell", "--no-startup", "--no-imports", "-c",
         "import gc; print(gc.isenabled(), gc.get_freeze_count() > 10000)"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["True", "True"]


def test_an_operational_command_skips_the_system_checks():
    from django.core.management import get_commands, load_command_class

    ours = {name: app for name, app in get_commands().items() if app == "cli"}
    assert {"verify", "import_review", "export_review", "render_companion"} <= set(ours)
    for name, app in ours.items():
        assert load_command_class(app, name).requires_system_checks == [], name


def test_the_reports_receivers_load_the_reports_text_only_to_write_a_report():
    # After every verification the forge's receivers run; a repository that publishes nothing
    # gets no report, so the report's text (the gate, the finding views, highlighting) stays unloaded.
    modules = loaded_after("import django; django.setup(); import forge.outbox.services, forge.threads.verdicts",
                           settings="recheck.settings")
    assert {"forge.outbox.services", "forge.threads.verdicts"} <= modules
    assert not {"forge.content", "presentation.finding_views", "pygments", "celery"} & modules


def test_asking_whether_tasks_run_in_process_does_not_load_celery():
    modules = loaded_after(
        "import django; django.setup()\n"
        "from django.conf import settings\n"
        "from findings.enqueue import tasks_run_in_process\n"
        "assert tasks_run_in_process() is settings.CELERY_TASK_ALWAYS_EAGER is True  # no broker\n",
        settings="recheck.settings",
    )
    assert "findings.enqueue" in modules
    assert not {"celery", "kombu", "recheck.celery"} & modules


def test_once_the_celery_app_is_loaded_its_configuration_answers():
    loaded_after(
        "import django; django.setup()\n"
        "from recheck.celery import app\n"
        "from findings.enqueue import tasks_run_in_process\n"
        "assert tasks_run_in_process() is True\n"
        "app.conf.task_always_eager = False\n"
        "assert tasks_run_in_process() is False\n",
        settings="recheck.settings",
    )


def test_verifying_snippets_loads_neither_the_regex_package_nor_the_broker_client():
    # `regex` is for pattern evidence, kombu for handing work on: a verification of snippets in a
    # command needs neither (the `regex` package alone costs more to import than the engine).
    modules = loaded_after(
        "import django; django.setup()\n"
        "import findings.services.runs, findings.services.verification.run, findings.services.import_jobs\n"
        "from engine.verification import patterns\n",
        settings="recheck.settings",
    )
    assert {"findings.services.verification.run", "engine.verification.patterns"} <= modules
    assert not {"regex", "kombu", "amqp", "celery"} & modules
