# The list rows carry why an error verdict is one, as the finding's detail says it. The rows of the
# states stored before are filled from their state's findings, which have said it since shape 3;
# only the states with a reason to give are touched.

from django.db import migrations, models


def fill_reasons(apps, schema_editor):
    PullRequestState = apps.get_model("findings", "PullRequestState")
    FindingListState = apps.get_model("findings", "FindingListState")
    for state_id, findings in PullRequestState.objects.values_list("id", "findings").iterator(chunk_size=200):
        reasons = {int(pk): finding.get("verdict_reason") for pk, finding in (findings or {}).items()
                   if finding.get("verdict_reason")}
        for finding_id, reason in reasons.items():
            FindingListState.objects.filter(state_id=state_id, finding_id=finding_id).update(verdict_reason=reason)


class Migration(migrations.Migration):

    dependencies = [
        ('findings', '0028_follow_up_due_event_kinds'),
    ]

    operations = [
        migrations.AddField(
            model_name='findingliststate',
            name='verdict_reason',
            field=models.CharField(blank=True, default='', max_length=15),
        ),
        migrations.RunPython(fill_reasons, migrations.RunPython.noop),
    ]
