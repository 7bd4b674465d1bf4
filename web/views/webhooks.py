"""A repository's outgoing webhooks, for its Admin: the endpoints, each with its latest messages
and every attempt, and the forms that add, change, rotate, remove and resend (the services in
`notify.webhooks.services` check the role and audit each write)."""
from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from access.permissions import Action, user_may
from core.errors import RecheckError
from core.vocabulary import events as ev
from notify.models import WebhookEndpoint, WebhookMessage
from notify.webhooks.selectors import endpoint_messages, repository_webhooks
from notify.webhooks.services import (
    webhook_endpoint_create,
    webhook_endpoint_delete,
    webhook_endpoint_update,
    webhook_message_resend,
    webhook_secret_rotate,
)
from reviews.models import Repository
from web.doors import readable


def _repository(request, owner: str, name: str) -> Repository:
    repository = get_object_or_404(Repository.objects.readable_by(request.user), slug=f"{owner}/{name}")
    if not user_may(request.user, Action.SETTINGS, repository):
        raise PermissionDenied(f"The webhooks of {repository.slug} are set by its Admins.")
    return repository


def _back(repository):
    return redirect("findings:webhooks", owner=repository.owner, name=repository.name)


@require_http_methods(["GET", "POST"])
@readable
def webhooks_page(request, owner: str, name: str):
    repository = _repository(request, owner, name)
    if request.method == "POST":
        try:
            endpoint, secret = webhook_endpoint_create(
                repository=repository, actor=request.user, url=request.POST.get("url", ""),
                kinds=request.POST.getlist("kinds"), preset=request.POST.get("preset", "standard"),
                description=request.POST.get("description", ""))
        except RecheckError as error:
            messages.error(request, str(error))
        else:
            messages.success(request, f"Webhook {endpoint.pk} added. Its secret, shown this once: {secret}")
        return _back(repository)
    endpoints = [(endpoint, endpoint_messages(endpoint, limit=20)) for endpoint in repository_webhooks(repository)]
    return render(request, "findings/webhooks.html", {
        "repository": repository, "endpoints": endpoints, "kinds": ev.EVENT_KIND_LABELS.items(),
        "presets": WebhookEndpoint.Preset.choices,
    })


@require_POST
@readable
def webhook_change(request, owner: str, name: str, endpoint_id: int):
    repository = _repository(request, owner, name)
    endpoint = get_object_or_404(WebhookEndpoint.objects.select_related("repository"), pk=endpoint_id,
                                 repository=repository)
    action = request.POST.get("action", "")
    try:
        if action == "delete":
            webhook_endpoint_delete(endpoint=endpoint, actor=request.user)
            messages.success(request, f"Webhook {endpoint_id} removed.")
        elif action == "rotate":
            secret = webhook_secret_rotate(endpoint=endpoint, actor=request.user)
            messages.success(request, f"New secret, shown this once (the old ones sign beside it until retired): {secret}")
        elif action == "retire":
            webhook_secret_rotate(endpoint=endpoint, actor=request.user, retire=True)
            messages.success(request, "Only the newest secret signs now.")
        elif action in ("on", "off"):
            webhook_endpoint_update(endpoint=endpoint, actor=request.user, active=action == "on")
            messages.success(request, f"Webhook {endpoint_id} turned {action}.")
        elif action == "kinds":
            webhook_endpoint_update(endpoint=endpoint, actor=request.user, kinds=request.POST.getlist("kinds"))
            messages.success(request, f"Webhook {endpoint_id} now sends {len(endpoint.kinds)} kinds of event.")
        else:
            messages.error(request, "Choose what to do with the webhook.")
    except RecheckError as error:
        messages.error(request, str(error))
    return _back(repository)


@require_POST
@readable
def webhook_resend(request, owner: str, name: str, endpoint_id: int, message_id: int):
    repository = _repository(request, owner, name)
    message = get_object_or_404(WebhookMessage.objects.select_related("endpoint__repository"), pk=message_id,
                                endpoint_id=endpoint_id, endpoint__repository=repository)
    try:
        webhook_message_resend(message=message, actor=request.user)
    except RecheckError as error:
        messages.error(request, str(error))
    else:
        messages.success(request, f"Message {message.message_id} will be sent again, with the same webhook-id.")
    return _back(repository)
