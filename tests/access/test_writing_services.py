"""Every function of the domain's services that writes is registered, and a registered service
checks its actor and records an audit entry (tests/access/writing_scan.py reads the code). The
scan is shown to catch a planted service that writes without either."""
import importlib
import textwrap

from access.audit import WRITING_SERVICES
from tests.access.writing_scan import REQUIRED, ROOT, read_module, scan


def test_every_writing_service_checks_its_actor_and_records_an_audit_entry():
    assert scan() == []


def test_the_scan_reads_the_registry_the_decorator_keeps():
    """What the scan reads from the code is what `writes` registered when the modules loaded."""
    for path in REQUIRED:
        importlib.import_module(".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__"))
    static = {
        function.dotted for path in REQUIRED for function in read_module(path, required=True)
        if function.registered is not None
    }
    assert static == {name for name in WRITING_SERVICES if name.startswith("findings.services.")}
    assert {"findings.services.tags_and_links.finding_tags_set", "findings.services.tags_and_links.tag_describe",
            "findings.services.tags_and_links.finding_link_create", "findings.services.tags_and_links.finding_link_delete",
            "findings.services.review_import.review_import", "findings.services.authoring.finding_write",
            "findings.services.resolution.finding_resolve"} <= static


PLANTED = '''
from access.audit import audit_record, writes
from access.permissions import Action, actor_check
from findings.models import Tag


def tag_rename(*, tag, slug, actor):
    """Writes, and nobody registered it."""
    tag.slug = slug
    tag.save()


@writes("tag.retire")
def tag_retire(*, tag, actor):
    """Registered, but checks no one and records nothing."""
    Tag.objects.filter(pk=tag.pk).delete()


@writes("tag.merge")
def tag_merge(*, tag, into, actor):
    """Checks its actor, records nothing."""
    actor_check(actor, Action.WRITE, None, audit_action="tag.merge")
    _move(tag, into)


def _move(tag, into):
    into.findings.add(*tag.findings.all())


@writes("tag.note", within=("planted.tag_merge",))
def tag_note(*, tag):
    """A part within a service that never calls it."""
    Tag.objects.filter(pk=tag.pk).update(slug=tag.slug)


@writes("tag.touch")
def tag_touch(*, tag, actor):
    """Does everything right."""
    actor_check(actor, Action.WRITE, None, audit_action="tag.touch")
    tag.save()
    audit_record(action="tag.touch", actor=actor)
'''


def test_the_scan_fails_a_planted_service_without_the_check_or_the_audit_entry(tmp_path):
    path = tmp_path / "planted.py"
    path.write_text(textwrap.dedent(PLANTED))
    problems = scan(required=[path], known=[])
    assert len(problems) == 5, problems
    text = "\n".join(problems)
    assert "tag_rename (line 7) writes but is not registered" in text
    assert "tag_retire (line 14) writes without checking its actor" in text
    assert "tag_retire (line 14) writes without an audit entry" in text
    assert "tag_merge (line 20) writes without an audit entry" in text
    assert "tag_note is a part within planted.tag_merge, which never calls it" in text
    assert "tag_touch" not in text
