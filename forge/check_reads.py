"""Reading a commit's CI checks back from its forge: a verification that found check items with no
report of their check at a commit (`findings.signals.check_reports_awaited`) asks the repository's
forge for that commit's checks, once the verification is committed and at most once per commit in
`READ_AGAIN_SECONDS`, through a task on the forge queue that takes its calls from the forge budget."""
import logging

from django.core.cache import cache
from django.db import transaction

from findings.enqueue import enqueue
from forge.interface import forge_of
from reviews.models import Repository

logger = logging.getLogger(__name__)

READ_TASK = "forge.tasks.read_commit_checks"
# A commit's checks are read back at most once in this long: a verification of every pin, or the
# re-derivation a report read back leads to, asks again without calling the forge again.
READ_AGAIN_SECONDS = 600


def commit_checks_read_request(*, repository: Repository, sha: str) -> bool:
    """Queue reading the checks of `sha` back from `repository`'s forge, when the forge can and it
    was not asked lately. Whether it was queued."""
    try:
        forge = forge_of(repository)
    except Exception:  # a forge this server does not speak: nothing to read from
        return False
    if not forge.commit_checks_readable(repository):
        return False
    if not cache.add(f"recheck:checks-read:{repository.pk}:{sha}", 1, timeout=READ_AGAIN_SECONDS):
        return False

    def send():
        try:
            enqueue(READ_TASK, repository.pk, sha)
        except Exception:
            # The verification stands; its items wait for the forge's webhooks instead.
            logger.exception("Reading the checks of %s at %s back could not be queued", repository.slug, sha[:8])

    transaction.on_commit(send)
    return True
