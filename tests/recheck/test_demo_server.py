"""The demo as scripts/serve runs it (RECHECK_DEMO=1, DEBUG off): a wrong URL is the site's own
404 page, styled, never Django's technical page listing every URL pattern, and the static files are
served without a collectstatic step. A real runserver in a new process, with the demo's environment."""
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def get(url: str) -> tuple[int, str, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status, response.headers.get("Content-Type", ""), response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.headers.get("Content-Type", ""), error.read().decode()


def test_the_demo_serves_its_own_styled_error_pages_and_its_static_files(tmp_path):
    port = free_port()
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": str(ROOT), "RECHECK_DEMO": "1",
        "DJANGO_SETTINGS_MODULE": "recheck.settings", "DATABASE_URL": f"sqlite:///{tmp_path / 'demo.sqlite3'}",
        "RECHECK_VAR_DIR": str(tmp_path / "var"), "STATIC_ROOT": str(tmp_path / "not-collected"),
    }
    # Migrated as scripts/serve does: with nested groups a wrong URL can name a repository, which
    # the 404 is looked up in the database for.
    subprocess.run([sys.executable, "manage.py", "migrate", "--noinput"], cwd=ROOT, env=env, check=True,
                   stdout=subprocess.DEVNULL)
    server = subprocess.Popen([sys.executable, "manage.py", "runserver", "--noreload", f"127.0.0.1:{port}"],
                              cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        base = f"http://127.0.0.1:{port}"
        for _ in range(120):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                assert server.poll() is None, server.stdout.read()
                time.sleep(0.25)
        status, _, page = get(f"{base}/no/such/page/here/")
        assert status == 404
        assert 'class="site-header"' in page and "Not found" in page
        assert "URLconf" not in page and "DEBUG = True" not in page
        stylesheet = page.split('<link rel="stylesheet" href="', 1)[1].split('"', 1)[0]
        status, content_type, css = get(base + stylesheet)
        assert status == 200 and content_type.startswith("text/css") and ".site-header" in css
    finally:
        server.terminate()
        output = server.communicate(timeout=10)[0]
    assert "No directory at" not in output
