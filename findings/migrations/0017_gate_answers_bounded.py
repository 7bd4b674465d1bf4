# The gate's stored answers now list at most 50 open blockers beside their count (decision record
# 0020). Stored states and answers are derived data: dropping them makes the first read of each
# pull request derive its state again, in the new shape.

from django.db import migrations


def forget_derived_states(apps, schema_editor):
    apps.get_model("findings", "PullRequestGate").objects.all().delete()
    apps.get_model("findings", "PullRequestState").objects.all().delete()


class Migration(migrations.Migration):

    dependencies = [
        ('findings', '0016_follow_ups'),
    ]

    operations = [
        migrations.RunPython(forget_derived_states, migrations.RunPython.noop),
    ]
