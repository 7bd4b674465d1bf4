"""Telling people what changed (the `notify` package, docs/using/notifications.md): the batch
window, the outgoing webhooks' timeout, retry schedule and the hosts they may reach inside the
network. Read from the environment like every other setting."""
from recheck.env import env_list, env_str

# Events of one pull request within this many seconds go out together: one webhook per kind, one
# email. Beat also derives, this often, the states of the pull requests that moved and nobody read.
RECHECK_NOTIFY_BATCH_SECONDS = float(env_str("RECHECK_NOTIFY_BATCH_SECONDS", "10"))
# Seconds a webhook receiver has to answer (connect and read).
RECHECK_WEBHOOK_TIMEOUT = float(env_str("RECHECK_WEBHOOK_TIMEOUT", "10"))
# Seconds to wait before each retry of a webhook that failed (each jittered by up to a tenth):
# after the last one the message is failed and waits for a person to resend it.
RECHECK_WEBHOOK_RETRY_SCHEDULE = [
    float(seconds) for seconds in env_list("RECHECK_WEBHOOK_RETRY_SCHEDULE", ["5", "300", "1800", "7200", "18000",
                                                                               "36000", "36000"])
]
# Host names a webhook may be sent to although they resolve to an internal address (a chat server
# inside the network), and over plain http. Empty: only public https URLs.
RECHECK_WEBHOOK_INTERNAL_HOSTS = env_list("RECHECK_WEBHOOK_INTERNAL_HOSTS", [])

# Beat's rounds of notify: the states that moved and nobody read, and the webhooks due whatever
# their wait (a countdown longer than the broker's visibility timeout would be handed out twice).
from recheck.settings.work import CELERY_BEAT_SCHEDULE  # noqa: E402

CELERY_BEAT_SCHEDULE.update({
    "catch-up-timelines": {"task": "notify.tasks.catch_up_timelines", "schedule": RECHECK_NOTIFY_BATCH_SECONDS},
    "send-due-webhooks": {"task": "notify.tasks.send_due_webhooks", "schedule": RECHECK_NOTIFY_BATCH_SECONDS},
    "send-due-mails": {"task": "notify.tasks.send_due_mails", "schedule": RECHECK_NOTIFY_BATCH_SECONDS},
})

# The event kinds, one enum in the OpenAPI document wherever an event's kind is given or taken.
from recheck.settings.work import SPECTACULAR_SETTINGS  # noqa: E402

SPECTACULAR_SETTINGS["ENUM_NAME_OVERRIDES"]["EventKindEnum"] = "core.vocabulary.events.EVENT_KINDS"

# --- Email (Django's mail framework) ---------------------------------------------------------
# EMAIL_URL (smtp://user:password@host:587/?tls=True, smtp+ssl://…, console://) sets the backend and
# the server at once; without it the usual EMAIL_* settings are read, and with neither the console
# backend prints each message (the embedded default: beside scripts/serve's output).
import dj_email_url  # noqa: E402

from recheck.env import env_bool, env_int  # noqa: E402

if env_str("EMAIL_URL"):
    vars().update(dj_email_url.parse(env_str("EMAIL_URL")))
else:
    EMAIL_BACKEND = env_str("EMAIL_BACKEND", "django.core.mail.backends.console.EmailBackend")
    EMAIL_HOST = env_str("EMAIL_HOST", "localhost")
    EMAIL_PORT = env_int("EMAIL_PORT", 25)
    EMAIL_HOST_USER = env_str("EMAIL_HOST_USER")
    EMAIL_HOST_PASSWORD = env_str("EMAIL_HOST_PASSWORD")
    EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", False)
    EMAIL_USE_SSL = env_bool("EMAIL_USE_SSL", False)
EMAIL_TIMEOUT = float(env_str("EMAIL_TIMEOUT", "20"))
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "Recheck <recheck@localhost>")
