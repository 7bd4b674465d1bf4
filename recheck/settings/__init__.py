"""Django's settings (DJANGO_SETTINGS_MODULE=recheck.settings), all read from the environment:
the site's (recheck.settings.site: Django, the database, the cache, signing in, the CSP) and
Recheck's own (recheck.settings.work: forges, operations, Celery and its queues; recheck.settings.notify:
webhooks and the batch window)."""
from recheck.settings.site import *  # noqa: F401,F403
from recheck.settings.work import *  # noqa: F401,F403
from recheck.settings.notify import *  # noqa: F401,F403
