"""The Celery app. Configuration lives in Django settings under the CELERY_ namespace; the queues,
declared with the router that picks them, in `recheck.routing`."""
import os

from celery import Celery

from recheck.heartbeat import WorkerHeartbeat
from recheck.routing import TASK_QUEUES

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "recheck.settings")

app = Celery("recheck")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.conf.task_queues = TASK_QUEUES
app.autodiscover_tasks()
app.steps["consumer"].add(WorkerHeartbeat)
