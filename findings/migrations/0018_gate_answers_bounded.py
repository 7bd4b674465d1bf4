# The gate's stored answers now list at most 50 open blockers beside their count (decision record
# 0020). Stored states and answers are derived data: dropping them makes the first read of each
# pull request derive its state again, in the new shape.

from django.db import migrations


def forget_derived_states(apps, schema_editor):
    # Plain DELETEs, the rows that point at a state first: the ORM would load every state, with its
    # JSON, to find what cascades.
    for name in ("FindingListState", "PullRequestGate", "PullRequestState"):
        table = schema_editor.quote_name(apps.get_model("findings", name)._meta.db_table)
        schema_editor.execute(f"DELETE FROM {table}")


class Migration(migrations.Migration):

    dependencies = [
        ('findings', '0017_finding_list_state'),
    ]

    operations = [
        migrations.RunPython(forget_derived_states, migrations.RunPython.noop),
    ]
