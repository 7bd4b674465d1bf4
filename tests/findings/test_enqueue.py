"""A web process or a command (Django set up, no worker, nothing else imported) finds every task
by its name the first time it hands work on, on the project's configured app, without having
loaded Celery at start-up."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TASKS = [
    "findings.tasks.run_verification", "findings.tasks.run_import", "findings.tasks.reap_dead_runs",
    "findings.tasks.fetch_repository", "findings.tasks.track_pull_request_head",
    "findings.tasks.track_open_pull_requests", "presentation.tasks.render_companion_pages",
    "forge.tasks.send_github_call",
]


def run(code: str) -> str:
    env = {"PATH": "/usr/bin:/bin", "DJANGO_SETTINGS_MODULE": "recheck.settings", "SECRET_KEY": "k" * 50,
           "CELERY_BROKER_URL": "redis://127.0.0.1:1/0", "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                          check=True, timeout=60).stdout


def test_every_task_is_found_by_name_on_the_project_app_once_work_is_handed_on():
    out = run(
        "import django, sys; django.setup(); print('celery loaded:', 'celery' in sys.modules)\n"
        "from findings.enqueue import _task, celery_app\n"
        f"for name in {TASKS!r}: print(name, _task(name).app is celery_app(), celery_app().main)\n"
    )
    assert "celery loaded: False" in out
    for name in TASKS:
        assert f"{name} True recheck" in out


def test_the_beat_schedule_names_registered_tasks():
    out = run(
        "import django; django.setup()\n"
        "from django.conf import settings\nfrom findings.enqueue import _task\n"
        "for entry in settings.CELERY_BEAT_SCHEDULE.values(): print(_task(entry['task']).name)\n"
    )
    assert out.split()


def test_a_worker_started_with_celery_dash_a_recheck_finds_the_app_and_every_task():
    out = run(
        "from celery.app.utils import find_app\n"
        "app = find_app('recheck'); app.loader.import_default_modules()\n"
        "print(app.main); print('\\n'.join(sorted(app.tasks)))\n"
    )
    assert out.split()[0] == "recheck"
    for name in TASKS:
        assert name in out.split()
