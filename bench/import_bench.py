"""Import a bundle of N new findings (two evidence items each, the CI test's `large_bundle`) and
then the same bundle again (which changes nothing), timing each and counting its queries.

    .venv/bin/python bench/import_bench.py [--findings 1000] [--runs 3]

Each fresh import goes to a pull request of its own; the figures are the median and range of
`--runs` runs, with the load average beside them. DATABASE_URL picks the database (SQLite in a
temporary directory without it)."""
import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from _django import setup  # noqa: E402


class Counted:
    """An execute wrapper that counts the statements sent (the test utilities keep only 9,000)."""

    queries = 0

    def __call__(self, execute, sql, params, many, context):
        self.queries += 1
        return execute(sql, params, many, context)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--findings", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    setup("import")

    from django.contrib.auth import get_user_model
    from django.db import connection

    from findings.services.review_import import review_import
    from tests.api.test_background_import import large_bundle

    actor = get_user_model().objects.create_superuser("bench", "bench@example.com", "bench")
    figures: dict[str, list[tuple[float, int]]] = {"fresh": [], "again": []}
    for run in range(args.runs):
        data = large_bundle(args.findings)
        data["pull_request"]["number"] = 1000 + run
        for name in ("fresh", "again"):
            counted = Counted()
            with connection.execute_wrapper(counted):
                start = time.perf_counter()
                report = review_import(data=data, actor=actor)
                elapsed = time.perf_counter() - start
            assert len(report.created if name == "fresh" else report.unchanged) >= args.findings, report.as_dict()
            figures[name].append((elapsed, counted.queries))
    print(f"{connection.vendor}, {args.findings} findings, {args.runs} runs, load {os.getloadavg()[0]:.1f}")
    for name, runs in figures.items():
        times = [elapsed for elapsed, _ in runs]
        print(f"  {name:5}: {statistics.median(times):.2f} s [{min(times):.2f}-{max(times):.2f}], "
              f"{runs[0][1]} queries")


if __name__ == "__main__":
    main()
