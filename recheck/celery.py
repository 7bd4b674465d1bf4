"""The Celery app. Configuration lives in Django settings under the CELERY_ namespace."""
import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "recheck.settings")

app = Celery("recheck")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
