# The findings lists' filters read a page of matches in the lists' order (pull request, number).

from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('findings', '0012_finding_event_kind'),
        ('reviews', '0005_pull_request_generation'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RemoveIndex(
            model_name='finding',
            name='finding_pr_kind_status',
        ),
        migrations.RemoveIndex(
            model_name='finding',
            name='finding_status_kind',
        ),
        migrations.AddIndex(
            model_name='finding',
            index=models.Index(fields=['pull_request', 'kind', 'status', 'number'], name='finding_pr_kind_status_nr'),
        ),
        migrations.AddIndex(
            model_name='finding',
            index=models.Index(fields=['status', 'kind', 'pull_request', 'number'], name='finding_status_kind_pr_nr'),
        ),
    ]
