"""The app's models, for Django to find: each lives in the package that owns it."""
from forge.follow_up_issues.models import FollowUpIssue, FollowUpIssueSetting  # noqa: F401
from forge.outbox.models import ForgeCall  # noqa: F401
from forge.threads.models import ReviewComment, ReviewThread, ThreadSettings, ThreadSync  # noqa: F401
