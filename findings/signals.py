"""What happens in the domain that other apps act on. The domain sends these; the forge
integration and presentation connect their receivers when their apps are ready, so findings never
imports them. Receivers run synchronously, inside the sender's transaction: what they write
commits or rolls back with it."""
from django.dispatch import Signal

# A verification run was queued, finished, failed or reaped (keyword `run`): the forge reports it.
verification_run_changed = Signal()

# A verification stored new verdicts for a pull request (keyword `pull_request`): the stored
# companion pages are out of date.
verification_stored = Signal()

# A follow-up was opened, verified fixed, marked fixed, closed, found regressed or back open on the
# default branch (keywords `follow_up`, `change`): the forge keeps its issue in step.
follow_up_changed = Signal()

# A verification found check items with no report of their check at the commit it checked
# (keywords `repository`, `sha`, `checks`): the forge may read that commit's checks back.
check_reports_awaited = Signal()
# Events were added to a timeline (keyword `events`: the ReviewEvent rows, of one repository),
# inside the transaction that wrote them: what is delivered of them is written with them.
events_recorded = Signal()
# A pull request's gate was overridden at a commit, or an override revoked (keywords `override`,
# a `findings.models.GateOverride`, and `change`: "overridden" or "revoked"), sent once the write
# commits: the forge reports the commit's check again. A pull request's timeline records it here.
gate_override_changed = Signal()
