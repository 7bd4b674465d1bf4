"""What every write endpoint starts from: ActionView. Each write validates its input, calls the one
service that does the work (the same one the admin and the commands call), and presents the result.
Each needs its own permission and counts against the per-user write throttle."""
from rest_framework.views import APIView

from access.permissions import ACTION_SCOPES, Action
from api.permissions import HasActionPermission, TokenScope
from api.throttles import WriteThrottle


class ActionView(APIView):
    permission_classes = [HasActionPermission, TokenScope]
    throttle_classes = [WriteThrottle]
    required_action: Action
    # What the view's service records a write as ("tag.describe"): a refused request is recorded
    # under it too, so the audit log's filter by action finds the refusals beside the writes.
    audit_action: str

    @property
    def required_scope(self) -> str:
        return ACTION_SCOPES[self.required_action]
