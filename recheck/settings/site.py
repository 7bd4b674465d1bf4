"""Recheck settings. Every value that differs between machines comes from the environment
(see docs/operations/configuration.md); nothing here fails open in production."""
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

BASE_DIR = Path(__file__).resolve().parents[2]
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
    "notify",
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
    # The Content-Security-Policy header on every page (CONTENT_SECURITY_POLICY below), a 304 aside.
    "recheck.csp.PolicyMiddleware",
    # A NUL in a path is a 400 before anything reads it (PostgreSQL refuses NUL), with the security
    # headers and the policy of any other page; parameters are checked where they are read.
    "recheck.addresses.RefuseNulMiddleware",
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
    # The gate's one query and the kept pages' key queries run as statements PostgreSQL keeps
    # prepared per connection after a few runs (`reviews.selectors.preparable_cursor`), sparing
    # their planning, most of their time. The ORM's
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
