"""The site's merge policy: overriding a pull request's gate at its head (and revoking it) from
the blockers page, and a repository's Admin changing its policy from the repository page. Each
view loads what the URL names, hands what was typed to its service in `findings.services.policy`
(which checks the actor and audits) and says what came of it."""
from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect
from django.views.decorators.http import require_POST

from access.permissions import Action
from core import vocabulary as v
from core.errors import RecheckError
from findings.models import GateOverride
from findings.services.policy import gate_override_create, gate_override_revoke, repository_policy_update
from reviews.models import Repository
from web.doors import pull_request_for, readable, require_action
from web.forms.policy import PolicyForm


def _blockers(pull_request):
    return redirect(f"{pull_request.get_absolute_url()}blockers/#merge-gate")


@require_POST
@readable
def gate_override_now(request, owner: str, name: str, number: int):
    pull_request = pull_request_for(request, owner, name, number)
    try:
        override = gate_override_create(pull_request=pull_request, sha=request.POST.get("commit", ""),
                                        reason=request.POST.get("reason", ""), note=request.POST.get("note", ""),
                                        actor=request.user)
    except RecheckError as error:
        messages.error(request, str(error))
    else:
        messages.success(request, v.override_sentence({"by": override.by_label, "reason": override.reason,
                                                       "note": override.note, "commit": override.commit.sha}))
    return _blockers(pull_request)


@require_POST
@readable
def gate_override_revoke_now(request, owner: str, name: str, number: int, override_id: int):
    pull_request = pull_request_for(request, owner, name, number)
    override = get_object_or_404(GateOverride.objects.select_related("pull_request__repository", "commit"),
                                 pk=override_id, pull_request=pull_request)
    try:
        gate_override_revoke(override=override, actor=request.user)
    except RecheckError as error:
        messages.error(request, str(error))
    else:
        messages.success(request, f"The override at {override.commit.short_sha} is revoked: the gate answers as "
                                  "the findings and the policy say.")
    return _blockers(pull_request)


@require_POST
@readable
def repository_policy_now(request, owner: str, name: str):
    repository = get_object_or_404(Repository.objects.readable_by(request.user), slug=f"{owner}/{name}")
    # The role first: what someone without it typed is not worth reading back to them.
    require_action(request, Action.SETTINGS, repository, audit_action="repository.policy",
                   target=f"merge policy of {repository.slug}")
    form = PolicyForm(request.POST)
    if not form.is_valid():
        messages.error(request, "The merge policy was not changed: " + "; ".join(
            f"{field}: {' '.join(errors)}" for field, errors in form.errors.items()))
    else:
        try:
            repository_policy_update(repository=repository, actor=request.user, **form.cleaned_data)
        except RecheckError as error:
            messages.error(request, f"The merge policy was not changed: {error}")
        else:
            messages.success(request, "The merge policy is saved: every pull request's gate follows it.")
    return redirect(f"{repository.get_absolute_url()}#merge-policy")
