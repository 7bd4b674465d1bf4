"""Settings for the test suite: the same settings, with a throwaway key and fast hashing.
DATABASE_URL and CELERY_BROKER_URL still come from the environment, so CI runs on PostgreSQL and
Redis while a laptop runs on SQLite."""
import os
import tempfile

os.environ.setdefault("SECRET_KEY", "insecure-key-for-the-test-suite-only")
os.environ.setdefault("RECHECK_ALLOW_LOCAL_REPOSITORIES", "1")
os.environ.setdefault("RECHECK_PUBLIC_READ", "1")
os.environ.setdefault("RECHECK_MIRROR_ROOT", tempfile.mkdtemp(prefix="recheck-mirrors-"))
# The forge budget is counted in the process (not in the broker's Redis, where a rate limit one
# test met would outlast it) and large: the tests of the budget set their own.
os.environ.setdefault("RECHECK_FORGE_BUDGET_CALLS", "1000000")
os.environ.setdefault("RECHECK_FORGE_BUDGET_REDIS_URL", "")

# Sign-in with GitHub (as an Enterprise server), GitLab (self-managed) and OpenID Connect, all served by the
# fake forge in tests/fakeforge.py on a port chosen here: allauth reads GitHub's URL at import.
import socket  # noqa: E402

with socket.socket() as _probe:
    _probe.bind(("127.0.0.1", 0))
    FAKE_FORGE_PORT = int(os.environ.setdefault("RECHECK_TEST_FORGE_PORT", str(_probe.getsockname()[1])))
for _forge in ("GITHUB", "GITLAB"):
    os.environ.setdefault(f"RECHECK_{_forge}_CLIENT_ID", "recheck-test-client")
    os.environ.setdefault(f"RECHECK_{_forge}_SECRET", "recheck-test-secret")
    os.environ.setdefault(f"RECHECK_{_forge}_URL", f"http://127.0.0.1:{FAKE_FORGE_PORT}")
os.environ.setdefault("RECHECK_OIDC_CLIENT_ID", "recheck-test-client")
os.environ.setdefault("RECHECK_OIDC_SECRET", "recheck-test-secret")
os.environ.setdefault("RECHECK_OIDC_SERVER_URL", f"http://127.0.0.1:{FAKE_FORGE_PORT}/oidc")
os.environ.setdefault("RECHECK_OIDC_ALLOWED_GROUPS", "reviewers")
os.environ.setdefault("RECHECK_GITHUB_ALLOWED_ORGS", "acme")
os.environ.setdefault("RECHECK_GITLAB_ALLOWED_GROUPS", "acme/reviewers")

from recheck.settings import *  # noqa: E402,F401,F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
STORAGES["staticfiles"]["BACKEND"] = "django.contrib.staticfiles.storage.StaticFilesStorage"  # noqa: F405
# Live-server and worker threads must not keep connections open past a test's database.
DATABASES["default"]["CONN_MAX_AGE"] = 0  # noqa: F405
# SQLite's shared in-memory test database fails at once ("table is locked") when a worker or
# live-server thread writes while the test reads; a file waits for the lock like a server would.
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):  # noqa: F405
    DATABASES["default"]["TEST"] = {"NAME": os.path.join(tempfile.mkdtemp(prefix="recheck-test-db-"), "test.sqlite3")}  # noqa: F405
