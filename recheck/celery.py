"""The Celery app. Configuration lives in Django settings under the CELERY_ namespace; the queues,
declared with the router that picks them, in `recheck.routing`."""
import os

from celery import Celery
from celery.signals import before_task_publish

from recheck.heartbeat import WorkerHeartbeat
from recheck.queue_age import stamp_sent_at
from recheck.routing import TASK_QUEUES

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "recheck.settings")

app = Celery("recheck")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.conf.task_queues = TASK_QUEUES
app.autodiscover_tasks()
app.steps["consumer"].add(WorkerHeartbeat)
before_task_publish.connect(stamp_sent_at, weak=False, dispatch_uid="recheck.stamp_sent_at")
