"""A follow-up that moved goes on its repository's timeline (and its pull request's), once per
change it records (`FollowUpEvent`): the follow-up services announce it (`follow_up_changed`).
An override of the gate made or revoked is a difference of stored states (`findings.state.timeline`):
the state is derived once the override commits, so its event is written then, not at the next read."""
from django.dispatch import receiver

from core.vocabulary import events as ev
from findings.models import FollowUp, FollowUpEvent
from findings.signals import follow_up_changed, gate_override_changed
from findings.state.stored import pull_request_state
from findings.state.timeline import timeline_event_write

KIND_OF_CHANGE = {"opened": ev.FOLLOW_UP_OPENED, "verified_fixed": ev.FOLLOW_UP_VERIFIED_FIXED,
                  "regressed": ev.FOLLOW_UP_REGRESSED}


@receiver(follow_up_changed, sender=FollowUp)
def _follow_up_changed(sender, follow_up, change, **kwargs):
    last = FollowUpEvent.objects.filter(follow_up_id=follow_up.pk).order_by("-id").values_list(
        "id", "actor_id", "note", "commit__sha").first()
    event_id, actor_id, note, sha = last or (0, None, "", "")
    kind = KIND_OF_CHANGE.get(change, ev.FOLLOW_UP_CHANGED)
    timeline_event_write(
        repository_id=follow_up.repository_id, pull_request_id=follow_up.pull_request_id, kind=kind,
        key=f"follow_up:{follow_up.pk}:{event_id or change}", sha=sha or "", actor_id=actor_id,
        finding_id=follow_up.finding_id, finding_number=follow_up.finding.number,
        payload={"follow_up": follow_up.pk, "change": change, "state": follow_up.state,
                 "verdict": follow_up.verdict or None, "note": note or "", "commit": sha or None},
    )


@receiver(gate_override_changed, dispatch_uid="findings.timeline_override")
def _gate_override_changed(sender, override, change, **kwargs):
    pull_request_state(pull_request_id=override.pull_request_id)
