"""The project: settings, root URLs, the Celery app (`recheck.celery`, loaded by `celery -A recheck`
in a worker and by `findings.enqueue` the first time a process hands work on), WSGI."""
