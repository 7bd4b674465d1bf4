"""The GitHub settings are read from the environment once, and a half-configured App refuses to
start rather than failing on its first call."""
import os
import subprocess
import sys

READ = "import recheck.settings as s; print(repr(s.RECHECK_GITHUB_APP_PRIVATE_KEY)); print(s.RECHECK_GITHUB_API_URL)"


def settings_with(**env):
    base = {key: value for key, value in os.environ.items() if not key.startswith("RECHECK_GITHUB")}
    return subprocess.run([sys.executable, "-c", READ], env={**base, "SECRET_KEY": "x", **env},
                          capture_output=True, text=True)


def test_the_private_key_can_come_from_a_file(tmp_path):
    key = tmp_path / "app.pem"
    key.write_text("-----BEGIN PRIVATE KEY-----\nabc\n-----END PRIVATE KEY-----\n")

    result = settings_with(RECHECK_GITHUB_APP_ID="42", RECHECK_GITHUB_APP_PRIVATE_KEY_FILE=str(key),
                           RECHECK_GITHUB_API_URL="https://github.example.com/api/v3")

    assert result.returncode == 0, result.stderr
    assert "BEGIN PRIVATE KEY" in result.stdout
    assert result.stdout.splitlines()[-1] == "https://github.example.com/api/v3/"


def test_an_app_id_without_a_key_refuses_to_start():
    result = settings_with(RECHECK_GITHUB_APP_ID="42")

    assert result.returncode != 0
    assert "needs both RECHECK_GITHUB_APP_ID and RECHECK_GITHUB_APP_PRIVATE_KEY" in result.stderr


def test_an_unreadable_key_file_says_so(tmp_path):
    result = settings_with(RECHECK_GITHUB_APP_ID="42", RECHECK_GITHUB_APP_PRIVATE_KEY_FILE=str(tmp_path / "none"))

    assert result.returncode != 0
    assert "RECHECK_GITHUB_APP_PRIVATE_KEY_FILE" in result.stderr and "cannot be read" in result.stderr
