"""The production settings the deployment page documents pass Django's deployment checklist."""
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def documented_production_environment() -> dict[str, str]:
    """The `export NAME=value` lines of the compose block on docs/operations/deployment.md;
    generated secrets get a generated value here too."""
    page = (ROOT / "docs" / "operations" / "deployment.md").read_text()
    block = page.split("## With docker compose", 1)[1].split("```sh", 1)[1].split("```", 1)[0]
    env = {}
    for name, value in re.findall(r"^export (\w+)=(\S+)", block, flags=re.MULTILINE):
        env[name] = "x" * 30 + "generated-secret-for-the-check" if value.startswith("$(") else value
    return env


def deploy_check(extra: dict[str, str]) -> subprocess.CompletedProcess:
    # Only what a deployment has: nothing the test run itself sets (DJANGO_ALLOW_ASYNC_UNSAFE, ...).
    env = {key: os.environ[key] for key in ("PATH", "HOME", "LANG") if key in os.environ}
    env.update(DJANGO_SETTINGS_MODULE="recheck.settings", DEBUG="0", **extra)
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )


def test_the_documented_production_settings_pass_check_deploy():
    documented = documented_production_environment()
    assert {"SECRET_KEY", "ALLOWED_HOSTS", "SECURE_PROXY_SSL_HEADER", "SECURE_HSTS_SECONDS"} <= set(documented)
    completed = deploy_check(documented)
    assert completed.returncode == 0, completed.stdout + completed.stderr


def test_the_check_still_catches_a_setting_left_out():
    documented = documented_production_environment()
    documented["SECURE_SSL_REDIRECT"] = "0"
    completed = deploy_check(documented)
    assert completed.returncode != 0 and "security.W008" in completed.stdout + completed.stderr


def proxy_header_setting(extra: dict[str, str]) -> str:
    env = {key: value for key, value in os.environ.items() if key != "SECURE_PROXY_SSL_HEADER"}
    env.update(DJANGO_SETTINGS_MODULE="recheck.settings", DEBUG="0", SECRET_KEY="k" * 50, **extra)
    code = "import django; django.setup(); from django.conf import settings; "
    code += "print(settings.SECURE_PROXY_SSL_HEADER)"
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=60, check=True).stdout.strip()


def test_a_forwarded_proto_header_is_trusted_only_when_a_proxy_is_configured():
    assert proxy_header_setting({}) == "None"
    assert proxy_header_setting({"SECURE_PROXY_SSL_HEADER": "X-Forwarded-Proto"}) == "('HTTP_X_FORWARDED_PROTO', 'https')"
