# Each verification carries why its error verdict is one, at its own commit (the finding's state
# said it only at the latest verified pin). The verifications stored before are filled by the same
# rule from their own results; only those in error can have a reason.
#
# A report's test cases keep their report's id without a database constraint on it (see the
# model): checking it cost a third of recording a large report, for rows only ever written beside
# their report in its own transaction, and deleted with it by Django's collector.

import django.db.models.deletion
from django.db import migrations, models


def fill_reasons(apps, schema_editor):
    from core.vocabulary import verdict_reason

    Verification = apps.get_model("findings", "Verification")
    EvidenceResult = apps.get_model("findings", "EvidenceResult")
    errors: dict[int, list[str]] = {}
    for verification_id, kind, facts in (
        EvidenceResult.objects.filter(verification__verdict="error", state="error")
        .values_list("verification_id", "evidence__kind", "facts").iterator(chunk_size=2000)
    ):
        outcome = (facts or {}).get("outcome") if kind == "check" and isinstance(facts, dict) else ""
        errors.setdefault(verification_id, []).append(outcome if isinstance(outcome, str) else "")
    for verification_id, outcomes in errors.items():
        reason = verdict_reason("error", outcomes)
        if reason:
            Verification.objects.filter(pk=verification_id).update(verdict_reason=reason)


class Migration(migrations.Migration):

    dependencies = [
        ('findings', '0029_list_rows_verdict_reason'),
    ]

    operations = [
        migrations.AddField(
            model_name='verification',
            name='verdict_reason',
            field=models.CharField(blank=True, default='', max_length=15),
        ),
        migrations.RunPython(fill_reasons, migrations.RunPython.noop),
        migrations.AlterField(
            model_name='reportedtest',
            name='report',
            field=models.ForeignKey(db_constraint=False, on_delete=django.db.models.deletion.CASCADE,
                                    related_name='reported_tests', to='findings.checkreport'),
        ),
    ]
