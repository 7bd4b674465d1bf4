"""Recheck's own settings: repositories and forges, operations, the forge budget, Celery and its
queues. Read from the environment like the site's settings (recheck.settings.site), whose
laptop defaults they share."""
import shlex
import sys
from datetime import timedelta
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from recheck.env import env_bool, env_int, env_list, env_str
from recheck.settings.site import VAR_DIR, _laptop

# --- Recheck -------------------------------------------------------------------------------
RECHECK_MIRROR_ROOT = Path(env_str("RECHECK_MIRROR_ROOT", str(VAR_DIR / "mirrors")))
# Local paths as clone URLs let a server read any repository on its disk: off unless asked for.
RECHECK_ALLOW_LOCAL_REPOSITORIES = env_bool("RECHECK_ALLOW_LOCAL_REPOSITORIES", _laptop)
# Forge hosts clone URLs may name (`github.com`, `.example.com` for it and its subdomains); empty
# allows any public host. Internal addresses are refused either way.
RECHECK_ALLOWED_GIT_HOSTS = env_list("RECHECK_ALLOWED_GIT_HOSTS", [])
# Forges on this server's own network (a self-hosted GitLab on 10.x): the only hosts that may
# resolve to a private address. Empty by default, so nothing internal is reachable.
RECHECK_INTERNAL_GIT_HOSTS = env_list("RECHECK_INTERNAL_GIT_HOSTS", [])
# Bundles with more findings than this are imported in the background (202 and a status URL).
RECHECK_IMPORT_INLINE_FINDINGS = env_int("RECHECK_IMPORT_INLINE_FINDINGS", 1000)
RECHECK_MAX_BLOB_BYTES = env_int("RECHECK_MAX_BLOB_BYTES", 1_000_000)
RECHECK_MARKDOWN_PREVIEW_BYTES = env_int("RECHECK_MARKDOWN_PREVIEW_BYTES", 200_000)
RECHECK_FETCH_TIMEOUT = env_int("RECHECK_FETCH_TIMEOUT", 300)
# The demo's sample runs its own tests and linter at each pinned commit when it loads (`manage.py
# load_demo`): the commands, split as a shell splits them, with this interpreter's pytest and the
# ruff installed beside it by default (both come with the test extras). A command that does not
# answer `--version` is not run, and the load says so.
_RUFF_BESIDE = Path(sys.executable).with_name("ruff")
RECHECK_DEMO_TESTS_COMMAND = shlex.split(env_str("RECHECK_DEMO_TESTS_COMMAND")) or [sys.executable, "-m", "pytest"]
RECHECK_DEMO_LINT_COMMAND = shlex.split(env_str("RECHECK_DEMO_LINT_COMMAND")) or (
    [str(_RUFF_BESIDE)] if _RUFF_BESIDE.is_file() else [sys.executable, "-m", "ruff"])
# Seconds each of those runs may take at one commit.
RECHECK_DEMO_CI_TIMEOUT = env_int("RECHECK_DEMO_CI_TIMEOUT", 120)
RECHECK_PUBLIC_READ = env_bool("RECHECK_PUBLIC_READ", _laptop)
RECHECK_GITHUB_WEBHOOK_SECRET = env_str("RECHECK_GITHUB_WEBHOOK_SECRET")
RECHECK_TRACK_INTERVAL_SECONDS = env_int("RECHECK_TRACK_INTERVAL_SECONDS", 900)
# How often beat checks the follow-ups of merged pull requests at each default branch's head
# (pushes to the default branch check them at once, when the push webhook is delivered).
RECHECK_FOLLOW_UP_INTERVAL_SECONDS = env_int("RECHECK_FOLLOW_UP_INTERVAL_SECONDS", 3600)
# API tokens: how long a new one lasts unless its creator says otherwise, and the longest allowed.
RECHECK_API_TOKEN_DAYS = env_int("RECHECK_API_TOKEN_DAYS", 90)
RECHECK_API_TOKEN_MAX_DAYS = env_int("RECHECK_API_TOKEN_MAX_DAYS", 366)
# The header a trusted proxy puts the client's address in (e.g. HTTP_X_FORWARDED_FOR), for the
# audit log; empty means REMOTE_ADDR. Only set it behind a proxy that overwrites the header.
RECHECK_CLIENT_IP_HEADER = env_str("RECHECK_CLIENT_IP_HEADER")
# Where this server is seen from outside: check runs and comments link back to its pages.
RECHECK_SITE_URL = env_str("RECHECK_SITE_URL").rstrip("/")

# Reporting to GitHub: a GitHub App (check runs, statuses, comments) or only a token (statuses
# and comments; GitHub lets only Apps create check runs).
RECHECK_GITHUB_API_URL = env_str("RECHECK_GITHUB_API_URL", "https://api.github.com").rstrip("/") + "/"
RECHECK_GITHUB_APP_ID = env_str("RECHECK_GITHUB_APP_ID").strip()
RECHECK_GITHUB_APP_PRIVATE_KEY = env_str("RECHECK_GITHUB_APP_PRIVATE_KEY")
_private_key_file = env_str("RECHECK_GITHUB_APP_PRIVATE_KEY_FILE")
if _private_key_file and not RECHECK_GITHUB_APP_PRIVATE_KEY:
    try:
        RECHECK_GITHUB_APP_PRIVATE_KEY = Path(_private_key_file).read_text()
    except OSError as error:
        raise ImproperlyConfigured(
            f"RECHECK_GITHUB_APP_PRIVATE_KEY_FILE={_private_key_file!r} cannot be read: {error.strerror}."
        ) from None
if bool(RECHECK_GITHUB_APP_ID) != bool(RECHECK_GITHUB_APP_PRIVATE_KEY):
    raise ImproperlyConfigured(
        "A GitHub App needs both RECHECK_GITHUB_APP_ID and RECHECK_GITHUB_APP_PRIVATE_KEY (or _FILE); only one is set."
    )
RECHECK_GITHUB_TOKEN = env_str("RECHECK_GITHUB_TOKEN").strip()
# Seconds to wait for one answer from GitHub (fractions allowed).
RECHECK_GITHUB_TIMEOUT = float(env_str("RECHECK_GITHUB_TIMEOUT", "10"))
# Reporting to GitLab: a token with the `api` scope (a project or group access token, Developer
# role, or a bot's personal one) for commit statuses and the merge request note; the webhook's
# secret token. A repository's forge_url names a self-managed GitLab, else RECHECK_GITLAB_URL.
RECHECK_GITLAB_TOKEN = env_str("RECHECK_GITLAB_TOKEN").strip()
RECHECK_GITLAB_WEBHOOK_SECRET = env_str("RECHECK_GITLAB_WEBHOOK_SECRET")
RECHECK_GITLAB_TIMEOUT = float(env_str("RECHECK_GITLAB_TIMEOUT", "10"))
# The outbox of calls to the forges (GitHub, GitLab; the settings keep GitHub's names): a call that failed is due again after an exponential backoff with
# jitter (from the base, doubling, up to the maximum) or when GitHub said (Retry-After, the
# rate-limit reset), and fails for good after so many attempts: with the defaults about 15 hours
# of GitHub being down. Due calls are sent by a worker, by beat every RECHECK_GITHUB_SEND_INTERVAL_SECONDS,
# or without a broker by `manage.py send_forge_calls` (scripts/serve starts it).
RECHECK_GITHUB_BACKOFF_BASE_SECONDS = float(env_str("RECHECK_GITHUB_BACKOFF_BASE_SECONDS", "30"))
RECHECK_GITHUB_BACKOFF_MAX_SECONDS = float(env_str("RECHECK_GITHUB_BACKOFF_MAX_SECONDS", "21600"))
RECHECK_GITHUB_MAX_ATTEMPTS = env_int("RECHECK_GITHUB_MAX_ATTEMPTS", 12)
RECHECK_GITHUB_SEND_INTERVAL_SECONDS = float(env_str("RECHECK_GITHUB_SEND_INTERVAL_SECONDS", "15"))

# --- Operations (recheck.operations) ------------------------------------------------------------
# The bearer token /healthz/operations and /metrics ask for; unset, they answer 404 to everyone.
RECHECK_OPERATIONS_TOKEN = env_str("RECHECK_OPERATIONS_TOKEN")

# --- One forge budget for every worker (forge.outbox.budget, decision 0025) -------------------
# At most RECHECK_FORGE_BUDGET_CALLS calls to one forge in any RECHECK_FORGE_BUDGET_WINDOW_SECONDS,
# counted in Redis for every worker (by default the broker's, when it is Redis), else in the one
# process that sends. Redis configured and not answering: the calls wait, retried every
# RECHECK_FORGE_BUDGET_RETRY_SECONDS.
RECHECK_FORGE_BUDGET_CALLS = env_int("RECHECK_FORGE_BUDGET_CALLS", 80)
RECHECK_FORGE_BUDGET_WINDOW_SECONDS = float(env_str("RECHECK_FORGE_BUDGET_WINDOW_SECONDS", "60"))
_broker_url = env_str("CELERY_BROKER_URL")
RECHECK_FORGE_BUDGET_REDIS_URL = env_str("RECHECK_FORGE_BUDGET_REDIS_URL",
                                         _broker_url if _broker_url.startswith(("redis://", "rediss://")) else "")
RECHECK_FORGE_BUDGET_RETRY_SECONDS = float(env_str("RECHECK_FORGE_BUDGET_RETRY_SECONDS", "5"))

# --- Celery --------------------------------------------------------------------------------
# The Celery app, loaded by name the first time work is handed on (findings.enqueue).
RECHECK_CELERY_APP = "recheck.celery.app"
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL")
# Without a broker the tasks run in-process, so a laptop needs neither Redis nor a worker.
CELERY_TASK_ALWAYS_EAGER = not CELERY_BROKER_URL
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_RESULT_BACKEND = env_str("CELERY_RESULT_BACKEND", CELERY_BROKER_URL or "cache+memory://")
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_TRACK_STARTED = True
# A task is acknowledged only once done, so a worker that dies mid-verification hands it on.
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# The time limits stay below the visibility timeout, or Redis would hand a running task to a
# second worker.
# A killed worker's message comes back after the visibility timeout; its run, already claimed,
# is then reaped (below) once it has shown no sign of life for longer than a task may run. The
# defaults (a 10-minute hard limit, 15-minute visibility) make that minutes, not an hour, and
# leave a fetch (RECHECK_FETCH_TIMEOUT) and the verification of a large PR room within the soft
# limit. Raise all three together for reviews that take longer.
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": env_int("CELERY_VISIBILITY_TIMEOUT", 900)}
CELERY_TASK_SOFT_TIME_LIMIT = env_int("CELERY_TASK_SOFT_TIME_LIMIT", 540)
CELERY_TASK_TIME_LIMIT = env_int("CELERY_TASK_TIME_LIMIT", 600)
# A verification under way keeps going through a broker blip: its results go to the database, and
# cancelling it would only make it wait for the reaper.
CELERY_WORKER_CANCEL_LONG_RUNNING_TASKS_ON_CONNECTION_LOSS = False
# A run with no sign of life for this long is dead: no task may run longer than the hard limit.
RECHECK_RUN_STALE_SECONDS = CELERY_TASK_TIME_LIMIT + env_int("RECHECK_RUN_REAP_MARGIN_SECONDS", 120)
RECHECK_REAP_INTERVAL_SECONDS = env_int("RECHECK_REAP_INTERVAL_SECONDS", 60)
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BEAT_SCHEDULE = {
    "track-open-pull-requests": {
        "task": "findings.tasks.track_open_pull_requests",
        "schedule": float(RECHECK_TRACK_INTERVAL_SECONDS),
    },
    "check-follow-ups": {
        "task": "findings.tasks.check_follow_ups_everywhere",
        "schedule": float(RECHECK_FOLLOW_UP_INTERVAL_SECONDS),
    },
    "reap-dead-runs": {
        "task": "findings.tasks.reap_dead_runs",
        "schedule": float(RECHECK_REAP_INTERVAL_SECONDS),
    },
    # A gate that changes with time alone (an overdue follow-up the merge policy counts) is
    # derived again within this interval, kept pages included.
    "move-expired-states": {
        "task": "findings.tasks.move_expired_states",
        "schedule": float(RECHECK_REAP_INTERVAL_SECONDS),
    },
    # A follow-up that fell due soon or overdue (time alone moves it) is an event within this interval.
    "record-follow-ups-due": {
        "task": "findings.tasks.record_follow_ups_due",
        "schedule": float(RECHECK_REAP_INTERVAL_SECONDS),
    },
    # The GitHub calls whose time has come, however long their backoff (a countdown longer than
    # the visibility timeout would be handed out twice by Redis, so long waits are left to beat).
    "send-due-github-calls": {
        "task": "forge.tasks.send_due_github_calls",
        "schedule": RECHECK_GITHUB_SEND_INTERVAL_SECONDS,
    },
}
# --- Queues and routing (recheck.routing, decision 0024) --------------------------------------
# Work goes to a queue by kind (verify, forge, render, maintenance); a worker started without -Q
# consumes them all. Work that reads a repository's mirror goes to verify.<n> (the companion pages
# to render.<n>), n a stable hash of the repository out of RECHECK_VERIFY_SHARDS (0: no shards),
# while a worker consuming that queue has sent a heartbeat in the last RECHECK_WORKER_ALIVE_SECONDS;
# otherwise to verify (render). The queues
# themselves are declared with the router, in recheck.routing (set on the app in recheck.celery).
CELERY_TASK_ROUTES = ("recheck.routing.route_task",)
RECHECK_VERIFY_SHARDS = env_int("RECHECK_VERIFY_SHARDS", 0)
RECHECK_WORKER_HEARTBEAT_SECONDS = float(env_str("RECHECK_WORKER_HEARTBEAT_SECONDS", "30"))
RECHECK_WORKER_ALIVE_SECONDS = 3 * RECHECK_WORKER_HEARTBEAT_SECONDS
# A running run whose worker process has not said it is running it for this long is dead
# (decision 0032): its host died, or the process was killed or restarted. Three heartbeats and a
# margin for a loaded machine or a database blip; the reaper then finds it within one
# RECHECK_REAP_INTERVAL_SECONDS, so a killed host's runs are queued again within about three
# minutes with the defaults, not after the hard time limit and its margin.
RECHECK_WORKER_LAPSE_SECONDS = float(env_str("RECHECK_WORKER_LAPSE_SECONDS", str(3 * RECHECK_WORKER_HEARTBEAT_SECONDS + 30)))
if RECHECK_WORKER_LAPSE_SECONDS < 2 * RECHECK_WORKER_HEARTBEAT_SECONDS:
    raise ImproperlyConfigured(
        "RECHECK_WORKER_LAPSE_SECONDS must be at least two RECHECK_WORKER_HEARTBEAT_SECONDS, or a worker that is "
        "alive would have its runs failed between two of its heartbeats."
    )
# How long a process trusts what it read of the workers alive before reading it again.
RECHECK_ROUTING_CACHE_SECONDS = float(env_str("RECHECK_ROUTING_CACHE_SECONDS", "10"))
if CELERY_TASK_TIME_LIMIT >= CELERY_BROKER_TRANSPORT_OPTIONS["visibility_timeout"]:
    raise ImproperlyConfigured("CELERY_TASK_TIME_LIMIT must stay below CELERY_VISIBILITY_TIMEOUT.")

# --- REST framework ------------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "api.authentication.ApiTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": [
        "rest_framework.permissions.IsAuthenticated",
        "api.permissions.TokenScope",
    ],
    "DEFAULT_FILTER_BACKENDS": [
        "django_filters.rest_framework.DjangoFilterBackend",
        "rest_framework.filters.OrderingFilter",
    ],
    # JSON bodies are read with nesting, digit and size limits (core.documents).
    "DEFAULT_PARSER_CLASSES": [
        "api.parsers.BoundedJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 50,
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_THROTTLE_RATES": {"writes": env_str("RECHECK_WRITE_THROTTLE", "120/min")},
    # RecheckError becomes a 400 with its message; every error body is JSON with a `detail`.
    "EXCEPTION_HANDLER": "api.errors.exception_handler",
}
# Tokens are knox's construction (a SHA-512 digest of 32 random bytes; the secret is shown once)
# on Recheck's own model, which adds a name, scopes, repositories, last use and revocation.
KNOX_TOKEN_MODEL = "access.ApiToken"
# knox's own migrations would make its (swapped-out) token table anyway; nothing needs it.
MIGRATION_MODULES = {"knox": None}
REST_KNOX = {
    "TOKEN_PREFIX": "rck_",
    "AUTH_HEADER_PREFIX": "Token",
    "TOKEN_TTL": timedelta(days=RECHECK_API_TOKEN_DAYS),
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Recheck API",
    "DESCRIPTION": "Code-review findings, their evidence and its verification at every pinned commit.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # Swagger UI would ask validator.swagger.io for a badge about the schema on any host but
    # localhost: the docs load nothing from other hosts.
    "SWAGGER_UI_SETTINGS": {"deepLinking": True, "validatorUrl": None},
    # Several models have a `kind`, `status` or `state` with different choices: name each enum.
    "ENUM_NAME_OVERRIDES": {
        "FindingKindEnum": "findings.models.Finding.Kind",
        "FindingStatusEnum": "findings.models.Finding.Status",
        "EvidenceKindEnum": "findings.models.Evidence.Kind",
        "EvidenceResultStateEnum": "findings.models.EvidenceResult.State",
        "VerificationRunStatusEnum": "findings.models.VerificationRun.Status",
        "FindingLinkKindEnum": "findings.models.FindingLink.Kind",
        "PullRequestStateEnum": "reviews.models.PullRequest.State",
    },
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
}
