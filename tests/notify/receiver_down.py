"""A reviewed pull request whose repository has a webhook to a local receiver that answers 503
until the test says it is up: what the worker's and the embedded sender's tests of "down for a
while, then back" share."""
import time
from dataclasses import dataclass

from werkzeug import Response

from access.models import Membership
from core.vocabulary import events as ev
from notify.webhooks.services import webhook_endpoint_create
from tests import personas
from tests.timeline_world import TimelineWorld


@dataclass
class DownReceiver:
    world: TimelineWorld
    endpoint: object
    secret: str
    up: dict


def receiver_down_at_first(tmp_path, settings, httpserver, *, retry_seconds: float, retries: int) -> DownReceiver:
    settings.RECHECK_ALLOW_LOCAL_REPOSITORIES = True
    settings.RECHECK_NOTIFY_BATCH_SECONDS = 0
    settings.RECHECK_WEBHOOK_INTERNAL_HOSTS = ["localhost"]
    settings.RECHECK_WEBHOOK_RETRY_SCHEDULE = [retry_seconds] * retries
    world = TimelineWorld(tmp_path, actor=personas.user_with_role("maintainer", username="ada")).imported()
    admin = personas.member_of(world.pull_request.repository, personas.user_with_role("no_role", username="adam"),
                               Membership.Role.ADMIN)
    endpoint, secret = webhook_endpoint_create(repository=world.pull_request.repository, actor=admin,
                                               url=httpserver.url_for("/hook"), kinds=list(ev.EVENT_KINDS))
    up = {"now": False}
    httpserver.expect_request("/hook").respond_with_handler(
        lambda request: Response("ok") if up["now"] else Response("down", status=503))
    return DownReceiver(world=world, endpoint=endpoint, secret=secret, up=up)


def wait_for(predicate, timeout: float = 60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if value := predicate():
            return value
        time.sleep(0.1)
    raise AssertionError("timed out")
