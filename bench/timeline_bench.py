"""What the timeline costs a push that moves every verdict: storing the state of a PR of N findings
(5,000 by default) when all their verdicts moved (N events written with it, and one webhook
message per kind for an endpoint that wants them) against storing it when nothing moved (the same
derivation and store, no event).

    .venv/bin/python bench/timeline_bench.py [--findings 5000] [--pairs 5]
"""
import argparse
import time

from _django import setup
from _interleave import interleave, print_pairs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--findings", type=int, default=5000)
    parser.add_argument("--pairs", type=int, default=5)
    args = parser.parse_args()
    setup("timeline")

    from django.utils import timezone

    from findings.models import Finding, ReviewEvent, Verification
    from findings.state.stored import pull_request_state
    from notify.models import WebhookEndpoint, WebhookMessage
    from reviews.models import Commit, PinnedCommit
    from reviews.services import pull_request_changed
    from tests.factories import large_reviewed_pull_request

    pull_request = large_reviewed_pull_request(findings=args.findings)
    WebhookEndpoint.objects.create(repository=pull_request.repository, url="https://hooks.example.com/recheck",
                                   kinds=["finding.verdict_changed"], secrets=["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"])
    ids = list(Finding.objects.filter(pull_request=pull_request).values_list("pk", flat=True))
    pushes = iter(range(10**6))

    def stored() -> float:
        started = time.perf_counter()
        pull_request_state(pull_request_id=pull_request.pk)
        return time.perf_counter() - started

    def nothing_moved() -> float:
        pull_request_changed(pull_request_id=pull_request.pk)
        return stored()

    def every_verdict_moved() -> float:
        push = next(pushes)
        head = Commit.objects.create(repository=pull_request.repository, sha=f"{push:040x}", resolved=True)
        PinnedCommit.objects.create(pull_request=pull_request, commit=head, role="head")
        verdict = "likely_fixed" if push % 2 == 0 else "present"
        Verification.objects.bulk_create(Verification(finding_id=pk, commit=head, verdict=verdict,
                                                      checked_at=timezone.now()) for pk in ids)
        pull_request_changed(pull_request_id=pull_request.pk)
        before = ReviewEvent.objects.count()
        seconds = stored()
        assert ReviewEvent.objects.count() - before >= len(ids), "every verdict moved: one event each"
        return seconds

    result = interleave(f"store the state of {args.findings} findings: nothing moved / every verdict moved",
                        args.pairs, nothing_moved, every_verdict_moved)
    print_pairs(result)
    print(f"  webhook messages written: {WebhookMessage.objects.count()} (pushes within the batch window join one)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
