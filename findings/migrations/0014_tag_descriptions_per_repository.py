# A tag's description belongs to a repository: each repository that carried the tag keeps the
# description it showed, and nothing one repository writes about a tag reaches another.
from django.db import migrations, models
import django.db.models.deletion


def descriptions_per_repository(apps, schema_editor):
    """Each tag's one description, given to every repository whose findings carry the tag (what
    each of them showed until now). A tag carried by no finding has no repository to keep it."""
    Tag = apps.get_model("findings", "Tag")
    Finding = apps.get_model("findings", "Finding")
    TagDescription = apps.get_model("findings", "TagDescription")
    rows = []
    for tag in Tag.objects.exclude(description="").iterator():
        repository_ids = (
            Finding.objects.filter(tags=tag).order_by().values_list("pull_request__repository_id", flat=True).distinct()
        )
        rows += [TagDescription(tag=tag, repository_id=pk, description=tag.description) for pk in repository_ids]
    TagDescription.objects.bulk_create(rows, batch_size=1000)


def one_description_per_tag(apps, schema_editor):
    """Back to one description a tag: the first repository's, by slug."""
    Tag = apps.get_model("findings", "Tag")
    TagDescription = apps.get_model("findings", "TagDescription")
    for row in TagDescription.objects.order_by("tag_id", "repository__slug").iterator():
        Tag.objects.filter(pk=row.tag_id, description="").update(description=row.description)


class Migration(migrations.Migration):

    dependencies = [
        ("findings", "0013_finding_indexes_in_list_order"),
        ("reviews", "0006_repository_visibility"),
    ]

    operations = [
        migrations.CreateModel(
            name="TagDescription",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("description", models.TextField(help_text="What findings with this tag have in common, in this repository.")),
                ("updated_at", models.DateTimeField(auto_now=True)),
                ("repository", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="tag_descriptions", to="reviews.repository")),
                ("tag", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="descriptions", to="findings.tag")),
            ],
            options={
                "ordering": ["tag__slug", "repository__slug"],
                "constraints": [models.UniqueConstraint(fields=("tag", "repository"), name="tag_description_once_per_repository")],
            },
        ),
        migrations.RunPython(descriptions_per_repository, one_description_per_tag),
        migrations.RemoveField(model_name="tag", name="description"),
    ]
