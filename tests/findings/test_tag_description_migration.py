"""Migration 0014 gives each repository whose findings carry a described tag the description it
showed until then; a tag carried by no finding has no repository to keep it."""
import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

# Migrating inside a test transaction is not possible on SQLite.
pytestmark = pytest.mark.django_db(transaction=True)

# Repositories as they were then too: later migrations add columns their old model lacks.
BEFORE = [("findings", "0013_finding_indexes_in_list_order"), ("reviews", "0006_repository_visibility")]
AFTER = [("findings", "0014_tag_descriptions_per_repository")]


def test_each_repository_carrying_a_tag_keeps_the_description_it_showed():
    try:
        executor = MigrationExecutor(connection)
        executor.migrate(BEFORE)
        old = executor.loader.project_state(BEFORE).apps
        Repository, PullRequest = old.get_model("reviews", "Repository"), old.get_model("reviews", "PullRequest")
        Finding, Tag = old.get_model("findings", "Finding"), old.get_model("findings", "Tag")
        tag = Tag.objects.create(slug="loops", description="Loops forever.")
        Tag.objects.create(slug="unused", description="Nobody carries it.")
        for slug in ("acme/one", "acme/two"):
            repository = Repository.objects.create(slug=slug, clone_url=f"https://github.com/{slug}.git")
            pull_request = PullRequest.objects.create(repository=repository, number=1, title="A change")
            for number in (1, 2):
                Finding.objects.create(pull_request=pull_request, number=number, kind="blocker", title="T").tags.add(tag)
        Repository.objects.create(slug="acme/three", clone_url="https://github.com/acme/three.git")

        executor = MigrationExecutor(connection)
        executor.migrate(AFTER)
        new = executor.loader.project_state(AFTER).apps
        TagDescription = new.get_model("findings", "TagDescription")
        assert sorted(TagDescription.objects.values_list("tag__slug", "repository__slug", "description")) == [
            ("loops", "acme/one", "Loops forever."), ("loops", "acme/two", "Loops forever."),
        ]
    finally:
        # Back to the latest schema whatever happened: the tests after this one need it.
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())
