# A run records the Celery worker that claimed it, and when that worker's process last said it was
# running it (decision 0032). The runs from before, and the runs carried out in-process, have none:
# they keep the time rule alone. The partial index serves the worker's heartbeat and the reaper,
# which look only at running runs.

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('findings', '0031_verification_reason_reported_tests'),
    ]

    operations = [
        migrations.AddField(
            model_name='verificationrun',
            name='worker',
            field=models.CharField(blank=True, max_length=255),
        ),
        migrations.AddField(
            model_name='verificationrun',
            name='worker_seen_at',
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddIndex(
            model_name='verificationrun',
            index=models.Index(condition=models.Q(('status', 'running')), fields=['worker', 'worker_seen_at'], name='run_running_worker'),
        ),
    ]
