"""The search at 100,000 findings: a word query, a phrase and a filtered query, next to a
primary-key lookup of a finding measured in the same run.

    DATABASE_URL=postgres://... python bench/search_bench.py [--findings 100000] [--seconds 3] [--explain]

Builds a throwaway database (a test database next to DATABASE_URL's, created and dropped by Django's
test machinery; a temporary SQLite file without DATABASE_URL), fills it with findings whose titles
and bodies draw on a small vocabulary (so a rare word matches about 1% of them and a common one
about a fifth), then times each query the way the site and the API run it: the count, the first
page of 25 ranked results with their excerpts, and the reasons each matched. --explain prints the
database's plan for each query's page, to show the full-text index (GIN on PostgreSQL) at work."""
import argparse
import os
import random
import sys
import tempfile
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("SECRET_KEY", "benchmark-only-not-secret")
os.environ["DEBUG"] = "0"
os.environ["DJANGO_SETTINGS_MODULE"] = "recheck.settings"
warnings.filterwarnings("ignore", message="No directory at")

import django  # noqa: E402

django.setup()

from django.db import connection  # noqa: E402
from django.test.utils import setup_test_environment  # noqa: E402
from django.utils import timezone  # noqa: E402

REPOSITORIES = 4
PULL_REQUESTS_PER_REPOSITORY = 25
PAGE = 25
COMMON = ["loader", "config", "dataset", "training", "cache", "worker", "tokenizer", "checkpoint"]
RARE = ["tolerance", "quokka", "submodule", "deadlock", "overflow"]
FILLER = ("the job reads every sample and writes the result back; when the value is wrong nothing says so "
          "and the run goes on for hours before anyone notices").split()


def build(total: int, seed: int = 4108) -> None:
    from findings.models import Finding
    from reviews.models import PullRequest, Repository

    rng = random.Random(seed)
    now = timezone.now()
    pull_requests = []
    for index in range(REPOSITORIES):
        repository = Repository.objects.create(slug=f"acme/bench-{index}", clone_url=f"https://example.com/{index}.git")
        pull_requests += [
            PullRequest.objects.create(repository=repository, number=number, title=f"Change {number}")
            for number in range(1, PULL_REQUESTS_PER_REPOSITORY + 1)
        ]
    per_pull_request = total // len(pull_requests)

    def text(words: int) -> str:
        chosen = [rng.choice(FILLER) for _ in range(words)]
        chosen[rng.randrange(words)] = rng.choice(COMMON)
        if rng.random() < 0.01 * len(RARE):  # each rare word in about 1% of findings
            chosen[rng.randrange(words)] = rng.choice(RARE)
        return " ".join(chosen)

    def finding(pull_request, number: int) -> Finding:
        status = "open" if number % 10 == 0 else ("fixed" if number % 3 else "dismissed")
        return Finding(
            pull_request=pull_request, number=number, kind="blocker" if number % 5 == 0 else "cleanup",
            title=text(8).capitalize(), summary=text(12), body=text(60), fix=text(20),
            path=f"src/{rng.choice(COMMON)}/module_{number % 97}.py", line=number % 500 + 1, status=status,
            resolved_at=None if status == "open" else now,
        )

    for pull_request in pull_requests:
        Finding.objects.bulk_create(
            (finding(pull_request, number) for number in range(1, per_pull_request + 1)), batch_size=2000
        )
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")


def timed(work, seconds: float) -> float:
    """Milliseconds per call of `work`, over about `seconds`."""
    for _ in range(2):
        work()
    count, started = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - started) < seconds:
        work()
        count += 1
    return 1000 * elapsed / count


def explain(queryset) -> str:
    sql, params = queryset.query.sql_with_params()
    prefix = "EXPLAIN QUERY PLAN " if connection.vendor == "sqlite" else "EXPLAIN "
    with connection.cursor() as cursor:
        cursor.execute(prefix + sql, params)
        return "\n".join("        " + str(row[-1]) for row in cursor.fetchall())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--findings", type=int, default=100_000, help="Findings to create (default 100000).")
    parser.add_argument("--seconds", type=float, default=3.0, help="Time per query (default 3).")
    parser.add_argument("--explain", action="store_true", help="Print the plan of each query's page.")
    options = parser.parse_args()

    setup_test_environment()
    database = connection.settings_dict
    if database["ENGINE"].endswith("sqlite3"):
        database["TEST"]["NAME"] = str(Path(tempfile.mkdtemp(prefix="recheck-bench-")) / "bench.sqlite3")
    started = time.perf_counter()
    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        build(options.findings)
        print(f"{connection.vendor}: {options.findings:,} findings in {REPOSITORIES * PULL_REQUESTS_PER_REPOSITORY} "
              f"pull requests, built in {time.perf_counter() - started:.1f}s")
        run(options)
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)


def run(options) -> None:
    from findings.models import Finding
    from findings.search import explain_matches, parse_search

    ids = list(Finding.objects.values_list("pk", flat=True)[:1000])
    rng = random.Random(1)

    def lookup():
        Finding.objects.get(pk=rng.choice(ids))

    baseline = timed(lookup, options.seconds)
    print(f"{'query':58} {'matches':>8} {'ms':>8} {'vs pk lookup':>12}")
    print(f"{'primary-key lookup (baseline)':58} {1:8} {baseline:8.2f} {1:12.1f}")
    queries = [
        ("a rare word", "tolerance"),
        ("a common word", "loader"),
        ("two words", "tolerance loader"),
        ("a phrase", '"nothing says so"'),
        ("a word, filtered: repo, kind, status", "tolerance repo:acme/bench-1 kind:blocker status:open"),
        ("a word, filtered by path", "deadlock path:src/cache/"),
    ]
    for label, text in queries:
        query = parse_search(text)
        results = Finding.objects.select_related("pull_request__repository").search(query)
        matches = results.count()

        def search(results=results, query=query):
            results.count()
            explain_matches(list(results[:PAGE]), query)

        took = timed(search, options.seconds)
        print(f"{label + ': ' + text:58.58} {matches:8,} {took:8.2f} {took / baseline:12.1f}")
        if options.explain:
            print(explain(results[:PAGE]))


if __name__ == "__main__":
    main()
