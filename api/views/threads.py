"""A pull request's inbox of review threads: each thread's state (new, triaged as a finding,
attached, not a finding), what could not be done with it, its finding and its comments."""
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from access.permissions import Action
from api import docs
from api.lookups import pull_request_by_number
from api.permissions import object_action_check, repository_limit, visible_to
from api.views.reading import ReadMixin
from api.views.writing import ActionView
from findings.models import Finding
from forge.threads.models import ReviewThread
from forge.threads.selectors import pull_request_thread_sync, pull_request_threads
from forge.threads.triage import TRIAGE_OUTCOMES, review_thread_attach, review_thread_triage
from forge.threads.verdicts import THREAD_SETTINGS_FIELDS, thread_settings_update
from reviews.models import Repository


class ReviewCommentSerializer(serializers.Serializer):
    id = serializers.IntegerField(source="github_id", help_text="GitHub's id of the comment.")
    author = serializers.CharField(source="author_login")
    body = serializers.CharField(help_text="Markdown as written on GitHub (not sanitised: render it safely).")
    html_url = serializers.CharField()
    created_at = serializers.DateTimeField(allow_null=True)
    updated_at = serializers.DateTimeField(allow_null=True)
    deleted = serializers.BooleanField(help_text="Gone from GitHub; kept here.")
    by_recheck = serializers.BooleanField()


class ReviewThreadSerializer(serializers.Serializer):
    id = serializers.IntegerField(source="root_comment_id", help_text="GitHub's id of the thread's first comment.")
    state = serializers.CharField(help_text="new, finding, attached or not_a_finding.")
    state_label = serializers.CharField(source="get_state_display")
    problem = serializers.CharField(help_text="'' or what could not be done: first_deleted, commit_missing, "
                                              "file_missing, line_beyond, binary.")
    problem_detail = serializers.CharField()
    placement = serializers.CharField(help_text="How the finding's evidence was taken from the comment.")
    path = serializers.CharField()
    side = serializers.CharField()
    original_commit_id = serializers.CharField()
    original_start_line = serializers.IntegerField(allow_null=True)
    original_line = serializers.IntegerField(allow_null=True)
    html_url = serializers.CharField()
    resolved = serializers.BooleanField()
    finding = serializers.IntegerField(source="finding.number", allow_null=True, default=None)
    comments = ReviewCommentSerializer(many=True, source="comments.all")


class ThreadInboxSerializer(serializers.Serializer):
    pull_request = serializers.CharField()
    sync_status = serializers.CharField()
    sync_message = serializers.CharField()
    synced_at = serializers.DateTimeField(allow_null=True)
    threads = ReviewThreadSerializer(many=True)


class PullRequestThreads(ReadMixin, APIView):
    @extend_schema(tags=["review threads"], operation_id="pull_request_threads", parameters=docs.PULL_REQUEST_PATH,
                   responses={200: ThreadInboxSerializer, **docs.DETAIL_ERRORS},
                   summary="The pull request's review threads (its inbox)")
    def get(self, request, owner: str, name: str, number: int):
        pull_request = self.pull_request(owner=owner, name=name, number=number)
        sync = pull_request_thread_sync(pull_request)
        return Response(ThreadInboxSerializer({
            "pull_request": pull_request.reference, "sync_status": sync.status, "sync_message": sync.message,
            "synced_at": sync.synced_at, "threads": list(pull_request_threads(pull_request)),
        }).data)


class ThreadSettingsSerializer(serializers.Serializer):
    publish_verdicts = serializers.BooleanField(
        required=False, help_text="After each verification, one reply per triaged thread with its finding's verdict, "
        "edited in place.")
    resolve_when_verified = serializers.BooleanField(
        required=False, help_text="Resolve a thread once its finding is verified fixed (otherwise when a maintainer "
        "marks it fixed).")

    def validate(self, data):
        if not data:
            raise serializers.ValidationError("Send publish_verdicts, resolve_when_verified or both.")
        return data


class RepositoryThreadSettings(ActionView):
    required_action = Action.SETTINGS
    audit_action = "repository.settings"

    @extend_schema(tags=["review threads"], operation_id="repository_thread_settings_update",
                   summary="What Recheck says in a repository's review threads", parameters=docs.REPOSITORY_PATH,
                   request=ThreadSettingsSerializer,
                   responses={200: ThreadSettingsSerializer, **docs.WRITE_ERRORS, 404: docs.NOT_FOUND},
                   description="Off until turned on. Needs the Admin role on the repository, and a token the "
                               "`settings` scope.")
    def patch(self, request, owner: str, name: str):
        repository = get_object_or_404(visible_to(Repository.objects.all(), request, "pk"), slug=f"{owner}/{name}")
        object_action_check(request, self, repository)
        body = ThreadSettingsSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        settings = thread_settings_update(repository=repository, actor=request.user, **body.validated_data)
        return Response({name: getattr(settings, name) for name in THREAD_SETTINGS_FIELDS})


class ThreadTriageSerializer(serializers.Serializer):
    outcome = serializers.ChoiceField(choices=[*TRIAGE_OUTCOMES, "attach"],
                                      help_text="blocker, cleanup, not_a_finding, or attach (with `finding`).")
    finding = serializers.IntegerField(required=False, min_value=1,
                                       help_text="With attach: the number of the pull request's finding.")

    def validate(self, data):
        if data["outcome"] == "attach" and "finding" not in data:
            raise serializers.ValidationError({"finding": "Name the finding to attach the thread to."})
        return data


class PullRequestThreadTriage(ActionView):
    required_action = Action.WRITE
    audit_action = "review_thread.triage"

    @extend_schema(tags=["review threads"], operation_id="pull_request_thread_triage",
                   summary="Triage a review thread: a finding, attached to one, or not a finding",
                   parameters=docs.PULL_REQUEST_PATH, request=ThreadTriageSerializer,
                   responses={200: ReviewThreadSerializer, **docs.WRITE_ERRORS, 404: docs.NOT_FOUND},
                   description="Needs the Reviewer role on the repository, and a token the `import` scope. A "
                               "thread triaged already is refused (400).")
    def post(self, request, owner: str, name: str, number: int, thread_id: int):
        pull_request = pull_request_by_number(owner=owner, name=name, number=number,
                                              repository_ids=repository_limit(request))
        thread = get_object_or_404(ReviewThread.objects.select_related("pull_request__repository"),
                                   pull_request=pull_request, root_comment_id=thread_id)
        object_action_check(request, self, pull_request.repository)
        body = ThreadTriageSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        if body.validated_data["outcome"] == "attach":
            finding = get_object_or_404(Finding, pull_request=pull_request, number=body.validated_data["finding"])
            review_thread_attach(thread=thread, finding=finding, actor=request.user, source="api")
        else:
            review_thread_triage(thread=thread, actor=request.user, outcome=body.validated_data["outcome"],
                                 source="api")
        [thread] = pull_request_threads(pull_request).filter(pk=thread.pk)
        return Response(ReviewThreadSerializer(thread).data)
