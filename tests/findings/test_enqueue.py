"""A web process (Django set up, no worker, nothing else imported) can enqueue every task."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_tasks_are_registered_in_a_process_that_only_set_up_django():
    code = (
        "import django; django.setup(); from celery import current_app; "
        "print(sorted(name for name in current_app.tasks if not name.startswith('celery.')))"
    )
    env = {"PATH": "/usr/bin:/bin", "DJANGO_SETTINGS_MODULE": "recheck.settings", "SECRET_KEY": "k" * 50,
           "CELERY_BROKER_URL": "redis://127.0.0.1:1/0"}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                         check=True, timeout=60).stdout
    for name in ("run_verification", "reap_dead_runs", "fetch_repository", "track_pull_request_head"):
        assert f"findings.tasks.{name}" in out
    assert "presentation.tasks.render_companion_pages" in out
    assert "forge.tasks.send_github_call" in out
