"""The admin's "View on site" (`/admin/r/<content type>/<id>/`): a redirect to the object's page on
the site, for someone who may read it there.

The rule is the site's own: each model the shortcut serves is read through the queryset its pages
read it through (`readable_by`, `tags_readable_by`), so an object a person may not read answers
exactly as an id that does not exist (the same 404, the same page), and so does an id of another
content type, a content type that is no model, or a model the shortcut does not serve. A model
that gains a page (`get_absolute_url`) is served only once it is named in `READABLE`; a test fails
until it is."""
from collections.abc import Callable

from django.contrib.contenttypes.models import ContentType
from django.db.models import QuerySet
from django.http import Http404, HttpResponseRedirect

from findings.models import Finding, FollowUp, Tag
from findings.selectors.findings import tags_readable_by
from reviews.models import PullRequest, Repository

# The largest id a primary key holds (PostgreSQL's bigint): a larger one names nothing, and asking
# the database for it would be an error rather than a miss.
_LARGEST_ID = 2**63 - 1

NOT_FOUND = "No such object."

READABLE: dict[type, Callable[[object], QuerySet]] = {
    Repository: lambda user: Repository.objects.readable_by(user),
    PullRequest: lambda user: PullRequest.objects.readable_by(user),
    Finding: lambda user: Finding.objects.readable_by(user),
    FollowUp: lambda user: FollowUp.objects.readable_by(user),
    Tag: tags_readable_by,
}


def view_on_site(request, content_type_id: str, object_id: str):
    found = _readable_object(request.user, content_type_id, object_id)
    if found is None:
        raise Http404(NOT_FOUND)
    return HttpResponseRedirect(found.get_absolute_url())


def _readable_object(user, content_type_id: str, object_id: str):
    """The object, if `user` may read it on the site; None for anything else, whatever the reason,
    so that no answer tells a private object from a missing one."""
    content_type_pk = _id(content_type_id)
    if content_type_pk is None:
        return None
    try:
        model = ContentType.objects.get_for_id(content_type_pk).model_class()
    except ContentType.DoesNotExist:
        return None
    readable = READABLE.get(model)
    pk = _id(object_id)
    if readable is None or pk is None:
        return None
    return readable(user).filter(pk=pk).first()


def _id(value: str) -> int | None:
    """A positive id in ASCII digits (every model served has an integer key; Python's int() would
    also read other scripts' digits), or None."""
    if not value.isascii() or not value.isdigit():
        return None
    number = int(value)
    return number if 0 < number <= _LARGEST_ID else None
