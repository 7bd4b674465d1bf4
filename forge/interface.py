"""One forge interface: what Recheck asks of every forge it speaks (GitHub, GitLab), and the
registry that finds a repository's forge by the name it stores (`Repository.forge`).

A forge receives its webhooks (checked by its own secret, acted on once per delivery id, the new
head of a pull or merge request pinned through `pull_request_record_head` and verified once),
reports a verdict (its rows in the outbox: GitHub's check run or status, GitLab's commit status),
keeps one sticky comment (the rows are the same for every forge; sending them is the forge's),
reads the review threads of a pull or merge request (`review_threads_read`, into `forge.threads`'s
inbox; replies and resolutions are outbox rows of kinds `thread_reply` and `thread_resolve`),
sends each outbox row and says what a refused one needs, and at sign-in says which organisations
or groups an account belongs to. Each forge is a package (`forge/github/`, `forge/gitlab/`) whose
`integration` module registers it when the app is ready (`forge.apps`); the name and link shapes it stores live in `core.forges`.

The outbox, the reports' text and the delivery records are shared: a forge says only what differs."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from core.errors import RecheckError

if TYPE_CHECKING:
    from findings.models import VerificationRun
    from forge.content import CommitReport
    from forge.outbox.failures import Failure
    from forge.outbox.models import ForgeCall
    from forge.threads.wire import WireComment, WireThread
    from reviews.models import Commit, PullRequest


class WebhookRefused(RecheckError):
    """A delivery the forge's secret does not vouch for, or one the server is not set up to take:
    `status` is the HTTP answer (401 without a secret sent, 403 with a wrong one or none configured)."""

    def __init__(self, message: str, *, status: int = 403):
        super().__init__(message)
        self.status = status


class WebhookPayloadError(RecheckError):
    """A delivery that passed the secret check but is not what the forge sends (a 400)."""


@dataclass(frozen=True)
class DeliveryOutcome:
    message: str
    duplicate: bool = False
    run: VerificationRun | None = None


def delivery_acted_on_once(delivery_id: str, act) -> DeliveryOutcome:
    """`act()`, which records the delivery as handled in its own transaction. When the verification
    it pinned could not be queued (QueueUnavailable, raised once that transaction committed), the
    delivery is forgotten again, so the forge's redelivery acts on it."""
    from findings.models import WebhookDelivery
    from findings.services.runs import QueueUnavailable

    try:
        return act()
    except QueueUnavailable:
        WebhookDelivery.objects.filter(delivery_id=delivery_id).delete()
        raise


class Forge(Protocol):
    name: str
    label: str

    def webhook_receive(self, *, headers: Mapping[str, str], body: bytes, content_type: str) -> DeliveryOutcome:
        """Check a delivery's secret (WebhookRefused), read it (WebhookPayloadError) and act on it
        at most once per delivery id. Fast: nothing here calls the forge."""

    def verdict_calls(self, *, pull_request: PullRequest, commit: Commit,
                      report: CommitReport | None) -> list[ForgeCall]:
        """The outbox rows reporting `commit`: in progress while `report` is None, else its verdict."""

    def call_send(self, call: ForgeCall) -> tuple[int | None, int, float | None]:
        """Send one row: the forge's id of what it made or changed, the last HTTP status, and how
        long to hold back this forge's other calls when the answer used up a rate limit."""

    def rate_limit_scope(self, call: ForgeCall) -> dict[str, object]:
        """Lookups narrowing which of this forge's waiting calls share the rate limit `call` met
        (none: every call of the forge waits)."""

    def budget_key(self, call: ForgeCall) -> str:
        """The budget `call` is counted in (`forge.outbox.budget`): the installation or host the
        forge's own limits count, shared by every worker. May ask the forge which (a Failure)."""

    def failure_hint(self, call: ForgeCall, failure: Failure, *, gave_up: bool) -> str:
        """What a person should do about a call the forge refused, in the words of its settings pages."""

    def signin_memberships(self, *, token: str) -> list[str]:
        """The organisations or groups (full paths) the signed-in account belongs to, as the forge says now."""

    def commit_checks_readable(self, repository) -> bool:
        """Whether this server can read `repository`'s CI checks back from the forge's API."""

    def commit_checks_read(self, *, repository, sha: str) -> list[str]:
        """Read the CI checks the forge holds for the commit `sha` and record each concluded one as
        a report (`findings.services.reports.check_report_record`); the checks recorded. A
        `forge.outbox.failures.Failure` when the forge does not answer (or the budget says wait)."""

    def review_threads_read(self, *, repository, number: int) -> tuple[list[WireComment], dict[int, WireThread] | None]:
        """Every review comment of pull or merge request `number` (a `forge.outbox.failures.Failure` when
        they cannot be read), and each thread's id and resolution by its first comment's id (None
        when only those could not be read: the comments still stand)."""


_FORGES: dict[str, Forge] = {}


def forge_register(forge: Forge) -> Forge:
    _FORGES[forge.name] = forge
    return forge


def forge_named(name: str) -> Forge:
    """The forge stored as `name`; a RecheckError for one this server does not speak."""
    try:
        return _FORGES[name]
    except KeyError:
        raise RecheckError(f"Recheck does not speak the forge {name!r}: it speaks {', '.join(sorted(_FORGES))}.") from None


def forge_of(repository) -> Forge:
    return forge_named(repository.forge)


def forges_registered() -> list[str]:
    return sorted(_FORGES)

