"""Requests per second of the API's busiest reads, next to a trivial DRF endpoint in the same run.

    python bench/api_bench.py [--seconds 1] [--pairs 5] [--findings 100000] [--explain] [--access] [--only TEXT|TEXT]

Builds a throwaway database (a temporary SQLite file, or a test database next to DATABASE_URL's,
created and dropped by Django's test machinery), fills it with findings spread over a few pull
requests with bulk_create, verifies one pull request at its head, then times each URL through
Django's test client (the whole middleware, authentication, permission and rendering stack, no
network). The ratio to the trivial endpoint says what the endpoint costs beyond DRF itself.
--explain prints the database's plan for each list's count and page queries. --access makes the
repository private and times each URL for a Reader of it (a membership) against a superuser."""
import argparse
import os
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("SECRET_KEY", "benchmark-only-not-secret")
os.environ.setdefault("ALLOWED_HOSTS", "testserver")
os.environ["RECHECK_PUBLIC_READ"] = "1"
os.environ["DEBUG"] = "0"  # DEBUG records every query, which is not what production pays for
os.environ["DJANGO_SETTINGS_MODULE"] = "recheck.settings"
warnings.filterwarnings("ignore", message="No directory at")  # WhiteNoise: no collectstatic here

import django  # noqa: E402
django.setup()

from _interleave import interleave, spread  # noqa: E402

from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext, override_settings, setup_test_environment  # noqa: E402
from django.urls import include, path  # noqa: E402
from django.utils import timezone  # noqa: E402
from rest_framework.permissions import AllowAny  # noqa: E402
from rest_framework.response import Response  # noqa: E402
from rest_framework.views import APIView  # noqa: E402


class Trivial(APIView):
    """The floor: DRF's request/response cycle with nothing behind it."""

    permission_classes = [AllowAny]

    def get(self, request):
        return Response({"ok": True})


# This module is the URLconf for the run: the project's URLs plus the trivial endpoint.
urlpatterns = [path("bench/ok", Trivial.as_view()), path("", include("recheck.urls"))]

PULL_REQUESTS = 4
TYPICAL_FINDINGS = 40


def sha(seed: str) -> str:
    import hashlib

    return hashlib.sha1(seed.encode()).hexdigest()


def build(total: int) -> dict:
    from findings.models import Finding, Verification
    from reviews.models import Commit, PinnedCommit, PullRequest, Repository

    now = timezone.now()
    repository = Repository.objects.create(slug="acme/bench", clone_url="https://example.com/acme/bench.git",
                                           web_url="https://github.com/acme/bench")
    pull_requests = [
        PullRequest.objects.create(repository=repository, number=1000 + index, title=f"Big change {index}")
        for index in range(PULL_REQUESTS)
    ]
    typical = PullRequest.objects.create(repository=repository, number=42, title="A typical pull request")
    head = Commit.objects.create(repository=repository, sha=sha("head"), resolved=True)
    typical_head = Commit.objects.create(repository=repository, sha=sha("typical-head"), resolved=True)
    PinnedCommit.objects.create(pull_request=pull_requests[0], commit=head, role="head")
    PinnedCommit.objects.create(pull_request=typical, commit=typical_head, role="head")

    def finding(pull_request, number: int) -> Finding:
        # One in five a blocker; one in ten still open, the rest fixed or dismissed, as in a
        # knowledge base that has been used for a while.
        status = "open" if number % 10 == 0 else ("fixed" if number % 3 else "dismissed")
        return Finding(
            pull_request=pull_request, number=number, kind="blocker" if number % 5 == 0 else "cleanup",
            caught_by="ci" if number % 7 == 0 else "none", title=f"Finding {number} about module {number % 97}",
            summary="Something that has to change.", body="The **body** explains it at some length. " * 5,
            path=f"src/module_{number % 97}/file_{number % 13}.py", line=number % 500 + 1, status=status,
            resolved_at=None if status == "open" else now,
        )

    per_pull_request = total // PULL_REQUESTS
    for pull_request in pull_requests:
        Finding.objects.bulk_create(
            (finding(pull_request, number) for number in range(1, per_pull_request + 1)), batch_size=5000
        )
    Finding.objects.bulk_create(finding(typical, number) for number in range(1, TYPICAL_FINDINGS + 1))

    verdicts = ["present", "likely_fixed", "present", "partly_fixed"]
    for pull_request, commit in ((pull_requests[0], head), (typical, typical_head)):
        ids = Finding.objects.filter(pull_request=pull_request).values_list("pk", flat=True)
        Verification.objects.bulk_create(
            (Verification(finding_id=pk, commit=commit, verdict=verdicts[pk % 4], checked_at=now) for pk in ids),
            batch_size=5000,
        )
    # Fresh statistics, as a database that has been in use would have them.
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    return {"big": pull_requests[0], "typical": typical, "head": head, "typical_head": typical_head}


def measure(client: Client, url: str, seconds: float, *, fresh: bool = False) -> float:
    """Requests per second of `url` over `seconds`; with `fresh`, each built afresh: the cache is
    emptied before every request, as the first read after a write finds it."""
    from django.core.cache import cache

    count = 0
    started = time.perf_counter()
    while (elapsed := time.perf_counter() - started) < seconds:
        if fresh:
            cache.clear()
        client.get(url)
        count += 1
    return count / elapsed


def _deep_cursor(client: Client, pages: int) -> str:
    """The cursor URL of about page `pages` of the findings, reached by following `next` with big pages."""
    url, walked = "/api/findings/?cursor=&page_size=200", 0
    while walked < pages * 50:
        url = client.get(url).json()["next"]
        walked += 200
    return url.replace("page_size=200", "page_size=50").replace("http://testserver", "")


def explain(client: Client, url: str) -> None:
    with CaptureQueriesContext(connection) as queries:
        client.get(url)
    for query in queries.captured_queries[:2]:
        with connection.cursor() as cursor:
            prefix = "EXPLAIN QUERY PLAN " if connection.vendor == "sqlite" else "EXPLAIN "
            cursor.execute(prefix + query["sql"])
            plan = " | ".join(str(row[-1]) for row in cursor.fetchall())
        print(f"      {query['sql'][:90]}…\n        plan: {plan[:400]}")


def print_row(label: str, result) -> None:
    """One endpoint's line: its rate, its time a request, its rate as a share of its baseline's."""
    rates = [1 / seconds for seconds in result.subjects]
    relative = [1 / ratio for ratio in result.ratios]
    print(f"{label:58} {statistics.median(rates):8.0f} {1000 * statistics.median(result.subjects):8.2f} "
          f"{spread(relative, '{:.3f}'):>18}  {min(result.loads):.1f}-{max(result.loads):.1f}")


def profile(client: Client, urls: list, *, fresh: bool = False) -> None:
    """Where each endpoint's time goes: the functions that take the most of 200 requests (each
    built afresh with `fresh`, as --fresh times them)."""
    import cProfile
    import pstats

    from django.core.cache import cache

    for label, url in urls:
        profiler = cProfile.Profile()
        profiler.enable()
        for _ in range(200):
            if fresh:
                cache.clear()
            client.get(url)
        profiler.disable()
        print(f"--- {label}: {url}")
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=1.0, help="Time per URL and pair side (default 1).")
    parser.add_argument("--pairs", type=int, default=5, help="Trivial/endpoint pairs, interleaved (default 5).")
    parser.add_argument("--findings", type=int, default=100_000, help="Findings to create (default 100000).")
    parser.add_argument("--explain", action="store_true", help="Print query plans of the list queries.")
    parser.add_argument(
        "--access", action="store_true",
        help="Make the repository private and time each URL for a Reader of it (a membership: every read "
        "filtered by the repositories they may read) against a superuser (no filter), instead of against "
        "the trivial endpoint.",
    )
    parser.add_argument(
        "--fresh", action="store_true",
        help="Empty the cache before every request of an endpoint: what the first read after a write costs.",
    )
    parser.add_argument("--only", default="",
                        help="Time only the endpoints whose label contains this text (or one of several, joined by |).")
    parser.add_argument("--profile", action="store_true",
                        help="Profile each endpoint (cProfile, 200 requests) instead of timing it.")
    options = parser.parse_args()

    setup_test_environment()
    database = connection.settings_dict  # Django has filled in its TEST defaults here
    workdir = tempfile.mkdtemp(prefix="recheck-bench-")
    if database["ENGINE"].endswith("sqlite3"):
        database["TEST"]["NAME"] = str(Path(workdir) / "bench.sqlite3")
    started = time.perf_counter()
    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        with override_settings(ROOT_URLCONF=__name__, CACHES={
            "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
        }):
            data = build(options.findings)
            print(
                f"{connection.vendor}: {options.findings:,} findings over {PULL_REQUESTS} pull requests + a typical "
                f"one of {TYPICAL_FINDINGS}, built in {time.perf_counter() - started:.1f}s"
            )
            run(data, options)
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)
    print(f"total {time.perf_counter() - started:.0f}s")


def run(data: dict, options) -> None:
    from findings.models import Finding

    big, typical, head = data["big"], data["typical"], data["head"]
    open_blockers = Finding.objects.filter(pull_request=big, kind="blocker", status="open").count()
    middle = Finding.objects.count() // 50 // 2
    urls = [
        ("trivial DRF endpoint", "/bench/ok"),
        ("findings, page 1", "/api/findings/?page_size=50"),
        (f"findings, page {middle:,}", f"/api/findings/?page_size=50&page={middle}"),
        ("findings of a PR: open blockers",
         f"/api/findings/?pull_request={big.pk}&kind=blocker&status=open&page_size=50"),
        ("findings by repo+number, open",
         "/api/findings/?repository=acme/bench&pull_request_number=1001&status=open&page_size=50"),
        ("findings: status=open, kind=blocker", "/api/findings/?status=open&kind=blocker&page_size=50"),
        ("findings: present at a commit", f"/api/findings/?verdict=present&commit={head.sha[:10]}&page_size=50"),
        ("findings: path prefix", "/api/findings/?path=src/module_5/&page_size=50"),
        ("findings: text search q", "/api/findings/?q=module%2096&page_size=50"),
        ("findings, ordering=-updated_at", "/api/findings/?ordering=-updated_at&page_size=50"),
        ("findings, cursor page 1", "/api/findings/?cursor=&page_size=50"),
        ("findings, a deep cursor page", "DEEP_CURSOR"),
        (f"gate, typical PR ({TYPICAL_FINDINGS} findings)", f"/api/repos/acme/bench/pulls/{typical.number}/gate"),
        (f"gate, PR of {options.findings // PULL_REQUESTS:,} findings ({open_blockers:,} open blockers)",
         f"/api/repos/acme/bench/pulls/{big.number}/gate?commit={head.sha[:12]}"),
    ]
    client = Client()
    if options.access:
        run_access(urls, options, middle)
        return
    urls = [(label, _deep_cursor(client, middle) if url == "DEEP_CURSOR" else url) for label, url in urls]
    trivial_url = urls.pop(0)[1]
    urls = [(label, url) for label, url in urls if any(text in label for text in options.only.split("|"))]
    for _, url in [(None, trivial_url), *urls]:  # warm caches and lazy imports, and check each answers
        for _ in range(3):
            response = client.get(url)
            assert response.status_code == 200, (url, response.status_code, response.content[:300])
    if options.profile:
        profile(client, [("trivial DRF endpoint", trivial_url), *urls], fresh=options.fresh)
        return
    if options.fresh:
        print("each endpoint's requests built afresh: the cache emptied before every one")
    print(f"{'endpoint':58} {'req/s':>8} {'ms/req':>8} {'vs trivial':>18}  load")
    for label, url in urls:
        # The trivial endpoint and this one alternate, pair after pair, so the machine's load
        # falls on both alike; figures are medians of the pairs, ranges in brackets.
        result = interleave(
            label, options.pairs,
            lambda: 1 / measure(client, trivial_url, options.seconds),
            lambda url=url: 1 / measure(client, url, options.seconds, fresh=options.fresh),
        )
        print_row(label, result)
        if options.explain and url.startswith("/api/findings/"):
            explain(client, url)
    print(f"trivial DRF endpoint: {1 / statistics.median(result.floors):.0f} req/s in the last pairs")

def run_access(urls, options, middle: int) -> None:
    """Each URL read by a Reader of the private repository (a membership) against the same URL read
    by a superuser, whom no filter narrows: what per-repository access costs a read."""
    from django.contrib.auth import get_user_model

    from access.models import Membership
    from reviews.models import Repository

    repository = Repository.objects.get(slug="acme/bench")
    repository.visibility = Repository.Visibility.PRIVATE
    repository.save()
    User = get_user_model()
    superuser = User.objects.create_superuser("bench-admin", "admin@example.com", "x")
    reader = User.objects.create_user("bench-reader")
    Membership.objects.create(repository=repository, user=reader, role=Membership.Role.READER)
    admin_client, reader_client = Client(), Client()
    admin_client.force_login(superuser)
    reader_client.force_login(reader)
    urls = [(label, _deep_cursor(admin_client, middle) if url == "DEEP_CURSOR" else url) for label, url in urls[1:]]
    for _, url in urls:
        for client in (admin_client, reader_client):
            response = client.get(url)
            assert response.status_code == 200, (url, response.status_code, response.content[:300])
        anonymous = Client().get(url)
        # The check that the filter works at all: to anyone else the private repository does not exist.
        if "acme/bench" in url.split("?")[0]:
            assert anonymous.status_code == 404, (url, anonymous.status_code)
        else:
            assert b"acme/bench" not in anonymous.content, (url, anonymous.content[:300])
    print(f"{'endpoint, as a Reader of the private repository':58} {'req/s':>8} {'ms/req':>8} "
          f"{'vs superuser':>18}  load")
    for label, url in urls:
        result = interleave(
            label, options.pairs,
            lambda url=url: 1 / measure(admin_client, url, options.seconds),
            lambda url=url: 1 / measure(reader_client, url, options.seconds),
        )
        print_row(label, result)
        if options.explain and url.startswith("/api/findings/"):
            explain(reader_client, url)


if __name__ == "__main__":
    main()
