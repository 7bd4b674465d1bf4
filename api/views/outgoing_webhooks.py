"""A repository's outgoing webhooks, for its Admin (the `settings` scope): list and add endpoints,
change or remove one, rotate its secret, read its latest messages with every attempt, and send a
message again. The services check the role and audit (`notify.webhooks.services`)."""
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.response import Response

from access.permissions import Action
from api import docs
from api.permissions import object_action_check, visible_to
from api.serializers.outgoing_webhooks import (
    WebhookEndpointCreatedSerializer,
    WebhookEndpointSerializer,
    WebhookMessageSerializer,
)
from api.views.writing import ActionView
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

ENDPOINT_PATH = [*docs.REPOSITORY_PATH, OpenApiParameter("endpoint", int, OpenApiParameter.PATH)]


class WebhookView(ActionView):
    required_action = Action.SETTINGS
    audit_action = "webhook.update"

    def repository(self, request, owner: str, name: str) -> Repository:
        repository = get_object_or_404(visible_to(Repository.objects.all(), request, "pk"), slug=f"{owner}/{name}")
        object_action_check(request, self, repository)
        return repository

    def endpoint(self, request, owner: str, name: str, endpoint: int) -> WebhookEndpoint:
        repository = self.repository(request, owner, name)
        return get_object_or_404(WebhookEndpoint.objects.select_related("repository"), pk=endpoint,
                                 repository=repository)


class RepositoryWebhooks(WebhookView):
    audit_action = "webhook.create"

    @extend_schema(tags=["repositories"], parameters=docs.REPOSITORY_PATH,
                   responses={200: WebhookEndpointSerializer(many=True), **docs.DETAIL_ERRORS})
    def get(self, request, owner: str, name: str):
        """The repository's outgoing webhooks."""
        repository = self.repository(request, owner, name)
        return Response(WebhookEndpointSerializer(repository_webhooks(repository), many=True).data)

    @extend_schema(tags=["repositories"], parameters=docs.REPOSITORY_PATH, request=WebhookEndpointSerializer,
                   responses={201: WebhookEndpointCreatedSerializer, **docs.WRITE_ERRORS, 404: docs.NOT_FOUND})
    def post(self, request, owner: str, name: str):
        """Add a webhook; the answer holds its secret, this once."""
        repository = self.repository(request, owner, name)
        body = WebhookEndpointSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        endpoint, secret = webhook_endpoint_create(
            repository=repository, actor=request.user, url=data["url"], kinds=data["kinds"],
            preset=data.get("preset", WebhookEndpoint.Preset.STANDARD), description=data.get("description", ""))
        return Response({**WebhookEndpointSerializer(endpoint).data, "secret": secret}, status=status.HTTP_201_CREATED)


class RepositoryWebhook(WebhookView):
    @extend_schema(tags=["repositories"], parameters=ENDPOINT_PATH, request=WebhookEndpointSerializer,
                   responses={200: WebhookEndpointSerializer, **docs.WRITE_ERRORS, 404: docs.NOT_FOUND})
    def patch(self, request, owner: str, name: str, endpoint: int):
        """Change what is given: URL, kinds, preset, description, on or off."""
        found = self.endpoint(request, owner, name, endpoint)
        body = WebhookEndpointSerializer(data=request.data, partial=True)
        body.is_valid(raise_exception=True)
        updated = webhook_endpoint_update(endpoint=found, actor=request.user, **body.validated_data)
        return Response(WebhookEndpointSerializer(updated).data)

    @extend_schema(tags=["repositories"], parameters=ENDPOINT_PATH, responses={204: None, **docs.WRITE_ERRORS, 404: docs.NOT_FOUND})
    def delete(self, request, owner: str, name: str, endpoint: int):
        """Remove the webhook, with its messages."""
        webhook_endpoint_delete(endpoint=self.endpoint(request, owner, name, endpoint), actor=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class RepositoryWebhookSecret(WebhookView):
    audit_action = "webhook.secret"

    @extend_schema(tags=["repositories"], parameters=ENDPOINT_PATH,
                   request=inline_serializer("WebhookRotation", {"retire": serializers.BooleanField(required=False)}),
                   responses={200: inline_serializer("WebhookSecret", {"secret": serializers.CharField(allow_null=True)}),
                              **docs.WRITE_ERRORS, 404: docs.NOT_FOUND})
    def post(self, request, owner: str, name: str, endpoint: int):
        """A new secret signing beside the old ones (returned this once), or with `retire` the old ones dropped."""
        secret = webhook_secret_rotate(endpoint=self.endpoint(request, owner, name, endpoint), actor=request.user,
                                       retire=bool(request.data.get("retire")))
        return Response({"secret": secret})


class RepositoryWebhookMessages(WebhookView):
    @extend_schema(tags=["repositories"], parameters=ENDPOINT_PATH,
                   responses={200: WebhookMessageSerializer(many=True), **docs.DETAIL_ERRORS})
    def get(self, request, owner: str, name: str, endpoint: int):
        """The webhook's latest messages, newest first, each with every attempt."""
        messages = endpoint_messages(self.endpoint(request, owner, name, endpoint))
        return Response(WebhookMessageSerializer(messages, many=True).data)


class RepositoryWebhookResend(WebhookView):
    audit_action = "webhook.resend"

    @extend_schema(tags=["repositories"], request=None,
                   parameters=[*ENDPOINT_PATH, OpenApiParameter("message", int, OpenApiParameter.PATH)],
                   responses={200: WebhookMessageSerializer, **docs.WRITE_ERRORS, 404: docs.NOT_FOUND})
    def post(self, request, owner: str, name: str, endpoint: int, message: int):
        """Send the message again now, with the same webhook-id."""
        found = self.endpoint(request, owner, name, endpoint)
        row = get_object_or_404(WebhookMessage.objects.select_related("endpoint__repository"), pk=message,
                                endpoint=found)
        resent = webhook_message_resend(message=row, actor=request.user)
        return Response(WebhookMessageSerializer(resent).data)
