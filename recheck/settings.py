"""Recheck settings. Every value that differs between machines comes from the environment
(see docs/operations/configuration.md); nothing here fails open in production."""
from datetime import timedelta
from pathlib import Path
from urllib.parse import urlsplit

import dj_database_url
from csp.constants import NONCE as CSP_NONCE
from csp.constants import NONE as CSP_NONE
from csp.constants import SELF as CSP_SELF
from csp.constants import UNSAFE_INLINE as CSP_UNSAFE_INLINE
from django.core.exceptions import ImproperlyConfigured
from django.core.management.utils import get_random_secret_key

from recheck.env import env_bool, env_int, env_list, env_str

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(env_str("RECHECK_VAR_DIR", str(BASE_DIR / "var")))

DEBUG = env_bool("DEBUG", False)
# The demo on a laptop (scripts/serve): a server's pages and error pages (DEBUG off, so a wrong URL
# is the site's 404, not Django's list of every URL pattern) with a laptop's defaults (a throwaway
# key, localhost, plain HTTP, local clone URLs, anonymous reads, the demo users). Never on a server.
RECHECK_DEMO = env_bool("RECHECK_DEMO", False)
_laptop = DEBUG or RECHECK_DEMO

SECRET_KEY = env_str("SECRET_KEY")
if not SECRET_KEY:
    if not _laptop:
        raise ImproperlyConfigured(
            "SECRET_KEY is not set. Set SECRET_KEY in the environment "
            "(or DEBUG=1 for a local development server only)."
        )
    # A fresh key per process is fine for a laptop: sessions just do not survive a restart.
    SECRET_KEY = get_random_secret_key()

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]"] if _laptop else [])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    # The admin's modules are found when its URLs are first loaded (recheck.urls), not by every
    # command at start-up; its "View on site" asks what the site asks (backoffice.site).
    "backoffice.site.RecheckAdminConfig",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "knox",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    # The domain, from the bottom layer up (docs/architecture.md): who may do what, the reviewed
    # code, the findings; then what the pages and reports say, and the forge integration.
    "access",
    "reviews",
    "findings",
    "presentation",
    "forge",
    # The interfaces: the site, the admin and the commands (the REST API needs no app of its own).
    "web",
    "backoffice",
    "cli",
    "allauth",
    "allauth.account",
    "allauth.socialaccount",
    # Each forge's sign-in provider is added below when it is configured.
    "csp",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # The Content-Security-Policy header on every page (CONTENT_SECURITY_POLICY below).
    "csp.middleware.CSPMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "allauth.account.middleware.AccountMiddleware",
    # Hands the request (IP address, API token) to the services that write the audit log.
    "access.audit.AuditMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "recheck.urls"
WSGI_APPLICATION = "recheck.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {
    "default": dj_database_url.parse(
        env_str("DATABASE_URL", f"sqlite:///{BASE_DIR / 'recheck.sqlite3'}"),
        conn_max_age=env_int("DATABASE_CONN_MAX_AGE", 60),
    )
}
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # SQLite has one writer at a time. A transaction that takes the write lock when it begins
    # (IMMEDIATE) waits its turn for up to `timeout` seconds, instead of failing with "database is
    # locked" when it first writes after reading (two webhook deliveries at once, a worker beside
    # the site). PostgreSQL keeps its row locks and stays concurrent.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {"timeout": env_int("DATABASE_SQLITE_TIMEOUT", 20), "transaction_mode": "IMMEDIATE"}
    )
elif DATABASES["default"]["ENGINE"].endswith("postgresql") and env_bool("DATABASE_PREPARED_STATEMENTS", True):
    # The gate's one query runs as a statement PostgreSQL keeps prepared per connection after a
    # few runs (`findings.selectors.gate`), sparing its planning, most of its time. The ORM's
    # queries are bound client-side and never prepared. Off behind a pooler that does not keep
    # prepared statements across transactions (PgBouncer in transaction mode before 1.21).
    DATABASES["default"].setdefault("OPTIONS", {}).setdefault("prepare_threshold", 5)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# API throttle counts live in the cache: shared across processes only with a shared cache. Redis
# down or slow is a miss (recheck.cache), after at most a second's wait, never an error.
CACHE_URL = env_str("CACHE_URL")
CACHES = {
    "default": {"BACKEND": "recheck.cache.ForgivingRedisCache", "LOCATION": CACHE_URL,
                "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 1}}
    if CACHE_URL.startswith(("redis://", "rediss://"))
    else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = Path(env_str("STATIC_ROOT", str(BASE_DIR / "staticfiles")))
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"
        if not _laptop
        else "django.contrib.staticfiles.storage.StaticFilesStorage"
    },
}
# Without DEBUG, runserver serves no static files: in the demo WhiteNoise serves them straight from
# the apps' static folders (no collectstatic step), as a server serves its collected ones.
WHITENOISE_USE_FINDERS = RECHECK_DEMO
if RECHECK_DEMO and not STATIC_ROOT.is_dir():
    # Nothing was collected there, and WhiteNoise would warn of the missing folder on start-up.
    STATIC_ROOT = None

LOGIN_URL = "account_login"
FORMS_URLFIELD_ASSUME_HTTPS = True

# --- Signing in ----------------------------------------------------------------------------------
# Every sign-in form is allauth's (the admin's login page sends people there), so its rate limits
# cover them all: 10 failed attempts a minute per address, 5 per 5 minutes per account.
RECHECK_PASSWORD_LOGIN = env_bool("RECHECK_PASSWORD_LOGIN", True)
AUTHENTICATION_BACKENDS = (
    ["django.contrib.auth.backends.ModelBackend", "allauth.account.auth_backends.AuthenticationBackend"]
    if RECHECK_PASSWORD_LOGIN
    else ["forge.signin.NoPasswordBackend"]
)
ACCOUNT_ADAPTER = "forge.signin.AccountAdapter"
ACCOUNT_FORMS = {"login": "forge.signin.LoginForm"}
SOCIALACCOUNT_ADAPTER = "forge.signin.SocialAccountAdapter"
ACCOUNT_LOGIN_METHODS = {"username", "email"}
ACCOUNT_EMAIL_VERIFICATION = "none"
SOCIALACCOUNT_EMAIL_VERIFICATION = "none"
SOCIALACCOUNT_ONLY = not RECHECK_PASSWORD_LOGIN
ACCOUNT_LOGOUT_ON_GET = False
# A signed-in user who is sent to the login page (staff pages for a non-staff user) sees it,
# rather than being redirected back and forth.
ACCOUNT_AUTHENTICATED_LOGIN_REDIRECTS = False
LOGIN_REDIRECT_URL = "/"
SOCIALACCOUNT_STORE_TOKENS = False
ACCOUNT_RATE_LIMITS = {"login_failed": env_str("RECHECK_LOGIN_RATE_LIMIT", "10/m/ip,5/300s/key")}

RECHECK_GITHUB_URL = env_str("RECHECK_GITHUB_URL").rstrip("/")
RECHECK_GITLAB_URL = env_str("RECHECK_GITLAB_URL", "https://gitlab.com").rstrip("/")
RECHECK_SIGNIN_GRANT_READER = env_bool("RECHECK_SIGNIN_GRANT_READER", False)
RECHECK_SIGNIN_ALLOWED = {
    "github": env_list("RECHECK_GITHUB_ALLOWED_ORGS", []),
    "gitlab": env_list("RECHECK_GITLAB_ALLOWED_GROUPS", []),
    "oidc": env_list("RECHECK_OIDC_ALLOWED_GROUPS", []),
}
SOCIALACCOUNT_PROVIDERS = {}
if env_str("RECHECK_GITHUB_CLIENT_ID"):
    SOCIALACCOUNT_PROVIDERS["github"] = {
        "APPS": [{"client_id": env_str("RECHECK_GITHUB_CLIENT_ID"), "secret": env_str("RECHECK_GITHUB_SECRET")}],
        # read:org lets the organisation check see private memberships too.
        "SCOPE": ["read:user", "user:email", "read:org"],
        **({"GITHUB_URL": RECHECK_GITHUB_URL} if RECHECK_GITHUB_URL else {}),
    }
if env_str("RECHECK_GITLAB_CLIENT_ID"):
    SOCIALACCOUNT_PROVIDERS["gitlab"] = {
        "APPS": [{
            "client_id": env_str("RECHECK_GITLAB_CLIENT_ID"), "secret": env_str("RECHECK_GITLAB_SECRET"),
            "settings": {"gitlab_url": RECHECK_GITLAB_URL},
        }],
        # read_api lets the group check list the user's groups.
        "SCOPE": ["read_user", "read_api"],
    }
if env_str("RECHECK_OIDC_CLIENT_ID"):
    SOCIALACCOUNT_PROVIDERS["openid_connect"] = {
        "APPS": [{
            "provider_id": "oidc", "name": env_str("RECHECK_OIDC_NAME", "Single sign-on"),
            "client_id": env_str("RECHECK_OIDC_CLIENT_ID"), "secret": env_str("RECHECK_OIDC_SECRET"),
            "settings": {"server_url": env_str("RECHECK_OIDC_SERVER_URL")},
        }],
        "SCOPE": ["openid", "profile", "email", "groups"],
    }
# Only the configured providers are installed: allauth imports each installed provider's views (and
# with them `requests`) when it starts, which every command and web process would pay for.
INSTALLED_APPS += [f"allauth.socialaccount.providers.{provider}" for provider in SOCIALACCOUNT_PROVIDERS]

# A strict Content-Security-Policy on every response (django-csp; docs/operations/deployment.md
# says why each directive is there). Scripts come from the site alone; the few inline ones a page
# needs carry the request's nonce (`request.csp_nonce`). Styles allow 'unsafe-inline': Mermaid,
# run at its strict level, writes each diagram's CSS as a <style> element and style attributes
# while it draws, and the API's docs (Swagger UI, Redoc) style themselves the same way. No
# template of ours has an inline style, and Markdown's sanitiser strips style from user text.
# A sign-in form posts to the site, which sends the browser on to the forge: each configured
# forge's origin is allowed as a form's destination, and nothing else.
_signin_origins = sorted({
    f"{_url.scheme}://{_url.netloc}"
    for _url in map(urlsplit, [
        RECHECK_GITHUB_URL or "https://github.com" if "github" in SOCIALACCOUNT_PROVIDERS else "",
        RECHECK_GITLAB_URL if "gitlab" in SOCIALACCOUNT_PROVIDERS else "",
        *(app["settings"]["server_url"] for app in SOCIALACCOUNT_PROVIDERS.get("openid_connect", {}).get("APPS", [])),
    ])
    if _url.scheme and _url.netloc
})
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [CSP_SELF],
        "script-src": [CSP_SELF, CSP_NONCE],
        "style-src": [CSP_SELF, CSP_UNSAFE_INLINE],
        "img-src": [CSP_SELF, "data:"],
        # Redoc runs its search in a worker it makes from a blob.
        "worker-src": [CSP_SELF, "blob:"],
        "object-src": [CSP_NONE],
        "base-uri": [CSP_NONE],
        "frame-ancestors": [CSP_NONE],
        "form-action": [CSP_SELF, *_signin_origins],
    },
}

if not _laptop:
    # Behind a TLS-terminating proxy, the header it sets (X-Forwarded-Proto) tells Django that the
    # request came in over https. Only with such a proxy: without one, any client could claim it.
    _proxy_header = env_str("SECURE_PROXY_SSL_HEADER")
    if _proxy_header:
        SECURE_PROXY_SSL_HEADER = ("HTTP_" + _proxy_header.strip().upper().replace("-", "_"), "https")
    SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", True)
    CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", True)
    # The forge sends people back to the callback over HTTPS.
    ACCOUNT_DEFAULT_HTTP_PROTOCOL = "https"
    SECURE_CONTENT_TYPE_NOSNIFF = True
    # Off by default so that a first deployment does not pin browsers to https before it works;
    # the production settings in docs/operations/deployment.md turn them on (`check --deploy` passes with them).
    SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", False)
    SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
    SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", False)
    SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", False)

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
    # The GitHub calls whose time has come, however long their backoff (a countdown longer than
    # the visibility timeout would be handed out twice by Redis, so long waits are left to beat).
    "send-due-github-calls": {
        "task": "forge.tasks.send_due_github_calls",
        "schedule": RECHECK_GITHUB_SEND_INTERVAL_SECONDS,
    },
}
# --- Queues and routing (recheck.routing, decision 0024) --------------------------------------
# Work goes to a queue by kind (verify, forge, render, maintenance); a worker started without -Q
# consumes them all. Work that reads a repository's mirror goes to verify.<n>, n a stable hash of
# the repository out of RECHECK_VERIFY_SHARDS (0: no shards), while a worker consuming that queue
# has sent a heartbeat in the last RECHECK_WORKER_ALIVE_SECONDS; otherwise to verify. The queues
# themselves are declared with the router, in recheck.routing (set on the app in recheck.celery).
CELERY_TASK_ROUTES = ("recheck.routing.route_task",)
RECHECK_VERIFY_SHARDS = env_int("RECHECK_VERIFY_SHARDS", 0)
RECHECK_WORKER_HEARTBEAT_SECONDS = float(env_str("RECHECK_WORKER_HEARTBEAT_SECONDS", "30"))
RECHECK_WORKER_ALIVE_SECONDS = 3 * RECHECK_WORKER_HEARTBEAT_SECONDS
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
