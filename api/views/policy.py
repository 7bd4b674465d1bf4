"""A repository's merge policy (read by anyone who reads the repository, changed by its Admin),
and the overrides of a pull request's gate: made, listed and revoked. Each write calls its service
in `findings.services.policy`, which checks the actor and records the audit entry."""
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response

from access.permissions import Action
from api import docs
from api.permissions import object_action_check, visible_to
from api.views.reading import ReadMixin
from api.views.writing import ActionView
from core import scopes
from core import vocabulary as v
from findings.models import GateOverride
from findings.selectors.policy import policy_values, pull_request_overrides, repository_policy
from findings.services.policy import gate_override_create, gate_override_revoke, repository_policy_update
from reviews.models import Repository


class PolicySerializer(serializers.Serializer):
    possibly_regressed_block = serializers.BooleanField(
        required=False, help_text="A blocker marked fixed whose evidence holds again blocks the merge. Default false.")
    overdue_cleanups_block = serializers.BooleanField(
        required=False, help_text="While a cleanup follow-up of the repository is overdue, no pull request may "
        "merge. Default false.")
    cleanup_due_days = serializers.IntegerField(
        required=False, min_value=1, max_value=v.LONGEST_DUE_DAYS,
        help_text="A cleanup left open at the merge is due this many days after it. Default 30.")
    blocker_due_days = serializers.IntegerField(
        required=False, min_value=1, max_value=v.LONGEST_DUE_DAYS,
        help_text="A blocker dismissed, fixed anyway or left open at the merge is due this many days after it. "
        "Default 14.")
    regression_restarts_clock = serializers.BooleanField(
        required=False, help_text="A follow-up whose evidence comes back is due a whole period later. Default true.")
    override_role = serializers.ChoiceField(
        choices=list(v.OVERRIDE_ROLES), required=False,
        help_text="The role that may override the gate: maintainer (default) or admin.")
    unverified_blocks = serializers.BooleanField(
        read_only=True, default=True, help_text="Always true: a commit not verified never passes the gate.")

    def validate(self, data):
        if not data:
            raise serializers.ValidationError("Send at least one setting of the merge policy.")
        return data


def _policy_answer(repository: Repository) -> dict:
    return {**policy_values(repository_policy(repository)), "unverified_blocks": True}


class ReadsBesideWrites(ActionView):
    """An action view whose GET is a read: its permissions and token scope are a read's."""

    read_methods = ("GET",)

    def get_permissions(self):
        if self.request.method in self.read_methods:
            return [permission() for permission in ReadMixin.permission_classes]
        return super().get_permissions()

    @property
    def required_scope(self) -> str:
        if self.request.method in self.read_methods:
            return scopes.READ
        return super().required_scope


class RepositoryPolicyView(ReadsBesideWrites):
    required_action = Action.SETTINGS
    audit_action = "repository.policy"

    def _repository(self, request, owner: str, name: str) -> Repository:
        return get_object_or_404(visible_to(Repository.objects.all(), request, "pk"), slug=f"{owner}/{name}")

    @extend_schema(tags=["merge policy"], operation_id="repository_policy", parameters=docs.REPOSITORY_PATH,
                   summary="A repository's merge policy", responses={200: PolicySerializer, **docs.DETAIL_ERRORS})
    def get(self, request, owner: str, name: str):
        return Response(_policy_answer(self._repository(request, owner, name)))

    @extend_schema(tags=["merge policy"], operation_id="repository_policy_update", parameters=docs.REPOSITORY_PATH,
                   summary="Change a repository's merge policy", request=PolicySerializer,
                   responses={200: PolicySerializer, **docs.WRITE_ERRORS, 404: docs.NOT_FOUND},
                   description="What is not sent is not changed. Needs the Admin role on the repository, and a "
                               "token the `settings` scope. Every pull request's gate is derived again with it.")
    def patch(self, request, owner: str, name: str):
        repository = self._repository(request, owner, name)
        object_action_check(request, self, repository)
        body = PolicySerializer(data=request.data)
        body.is_valid(raise_exception=True)
        repository_policy_update(repository=repository, actor=request.user, **body.validated_data)
        return Response(_policy_answer(repository))


class GateOverrideSerializer(serializers.Serializer):
    id = serializers.IntegerField(read_only=True)
    commit = serializers.CharField(help_text="The pinned commit the override holds at (full or abbreviated SHA).")
    reason = serializers.ChoiceField(choices=list(v.OVERRIDE_REASONS),
                                     help_text="urgent_fix, accepted_risk, false_positive or other (with a note).")
    note = serializers.CharField(required=False, allow_blank=True, default="", max_length=2000)
    by = serializers.CharField(read_only=True, source="by_label")
    at = serializers.DateTimeField(read_only=True)
    active = serializers.SerializerMethodField()
    revoked_at = serializers.DateTimeField(read_only=True, allow_null=True)
    revoked_by = serializers.CharField(read_only=True, source="revoked_by_label")

    def get_active(self, override) -> bool:
        return override.revoked_at is None

    def to_representation(self, override):
        data = super().to_representation(override)
        data["commit"] = override.commit.sha
        return data


class PullRequestOverrides(ReadsBesideWrites):
    # The first gate: a Maintainer somewhere; the service asks again for the role the repository's
    # policy names, on this repository (and records a refusal).
    required_action = Action.RESOLVE
    audit_action = "pull_request.gate_override"

    @extend_schema(tags=["merge gate"], operation_id="pull_request_overrides", parameters=docs.PULL_REQUEST_PATH,
                   summary="The overrides of a pull request's gate, newest first (revoked ones too)",
                   responses={200: GateOverrideSerializer(many=True), **docs.DETAIL_ERRORS})
    def get(self, request, owner: str, name: str, number: int):
        pull_request = ReadMixin.pull_request(self, owner=owner, name=name, number=number)
        return Response(GateOverrideSerializer(pull_request_overrides(pull_request), many=True).data)

    @extend_schema(tags=["merge gate"], operation_id="pull_request_override", parameters=docs.PULL_REQUEST_PATH,
                   summary="Override the gate at one pinned commit", request=GateOverrideSerializer,
                   responses={201: GateOverrideSerializer, **docs.WRITE_ERRORS, 404: docs.NOT_FOUND},
                   description="The gate then answers `mergeable: true` with `overridden` at that commit only. "
                               "Needs the role the repository's policy names (Maintainer by default), and a token "
                               "the `resolve` scope. A commit that is not pinned to the pull request, a reason "
                               "`other` without a note, or a commit overridden already: 400.")
    def post(self, request, owner: str, name: str, number: int):
        pull_request = ReadMixin.pull_request(self, owner=owner, name=name, number=number)
        body = GateOverrideSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        override = gate_override_create(pull_request=pull_request, sha=body.validated_data["commit"],
                                        reason=body.validated_data["reason"], note=body.validated_data["note"],
                                        actor=request.user)
        return Response(GateOverrideSerializer(override).data, status=status.HTTP_201_CREATED)


class PullRequestOverrideRevoke(ActionView):
    required_action = Action.RESOLVE
    audit_action = "pull_request.gate_override_revoke"

    @extend_schema(tags=["merge gate"], operation_id="pull_request_override_revoke",
                   parameters=[*docs.PULL_REQUEST_PATH, *docs.ID_PATH], request=None,
                   summary="Revoke an override of the gate",
                   responses={200: GateOverrideSerializer, **docs.WRITE_ERRORS, 404: docs.NOT_FOUND},
                   description="The gate at its commit answers as the findings and the policy say again. Needs the "
                               "role that may override. One revoked already: 400.")
    def post(self, request, owner: str, name: str, number: int, id: int):
        pull_request = ReadMixin.pull_request(self, owner=owner, name=name, number=number)
        override = get_object_or_404(GateOverride.objects.select_related("pull_request__repository", "commit"),
                                     pull_request=pull_request, pk=id)
        return Response(GateOverrideSerializer(gate_override_revoke(override=override, actor=request.user)).data)

