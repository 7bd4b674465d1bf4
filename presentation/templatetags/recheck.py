"""Template filters of the site. Only what the sanitiser or the highlighter produced is marked safe."""
from django import template

from access import permissions
from core import vocabulary
from findings import forms as resolve_forms
from presentation.rendering.markdown import render_markdown
from presentation import wording

register = template.Library()


@register.filter
def markdown(text: str):
    return render_markdown(text)


@register.filter
def number_word(number: int) -> str:
    return wording.number_word(int(number))


@register.filter
def label(value: str, kind: str) -> str:
    """`{{ verdict|label:"verdict" }}`, `{{ item.state|label:"state" }}`, `{{ finding.status|label:"status" }}`:
    the one way a template names a verdict, an evidence state or a status, in the vocabulary's
    words (core.vocabulary); '' reads as not verified. Templates write none of these by hand."""
    return vocabulary.label(kind, value)


@register.filter
def event_verdict(payload: dict, side: str) -> str:
    """`{{ event.payload|event_verdict:"from" }}`: one side of a verdict event as the finding's
    badge said it, with its reason (`from_reason`, `to_reason`): "Flaky" where a plain label says
    "Check failed"."""
    return vocabulary.finding_verdict_label(payload.get(side), payload.get(f"{side}_reason") or "")


@register.filter
def lines(evidence) -> str:
    """`path:40–42` for an evidence item or a result with lines; the path alone otherwise."""
    return vocabulary.location(evidence.path, getattr(evidence, "start_line", None), getattr(evidence, "end_line", None))


@register.simple_tag
def user_may(user, action: str, repository=None) -> bool:
    """`{% user_may user "resolve" repository as may_resolve %}`: the one permission function,
    for what a template shows (the views still refuse what it hides). The error pages render
    without a user in their context (the database may be the error): nobody may do anything there."""
    if not hasattr(user, "is_authenticated"):
        return False
    return permissions.user_may(user, action, repository)


@register.simple_tag
def resolve_limit(field: str) -> int:
    """`maxlength="{% resolve_limit "commit" %}"`: the resolve form's own limit on a field, for the
    small forms a page writes by hand beside a finding."""
    return resolve_forms.ResolveForm.base_fields[field].max_length
