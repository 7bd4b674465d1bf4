"""A JUnit report of N test cases (100,000 by default, about 30 MB, one in twenty failing) read and
kept: the whole record (`check_report_record`: measured, parsed and written to the database as it
streams), with the process's peak resident memory growth during it; then a bare
`xml.etree.ElementTree.iterparse` pass over the same file, as the floor, and the reader alone
(`engine.reports.junit.junit_rows`: expat through defusedxml's SAX reader); each timed.

    .venv/bin/python bench/reports_bench.py [--tests 100000] [--runs 3]

The figures are the median and range of `--runs` runs, with the load average beside them; the
ratios are against the iterparse pass of the same run. DATABASE_URL picks the database (SQLite in
a temporary directory without it)."""
import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ElementTree
from pathlib import Path

sys.path.insert(0, os.path.dirname(__file__))
from _django import setup  # noqa: E402


def write_report(path: Path, tests: int) -> None:
    """A pytest-like report: classes of twenty tests, parametrised names, one in twenty failing
    with a message and a traceback, as a large suite's report reads."""
    with path.open("w") as out:
        out.write('<?xml version="1.0" encoding="utf-8"?>\n<testsuites><testsuite name="pytest" '
                  f'tests="{tests}">\n')
        for n in range(tests):
            module, klass = n // 2000, n // 20
            out.write(f'<testcase classname="tests.unit.test_module_{module}.TestClass{klass}" '
                      f'name="test_case_{n}[param-{n % 7}-value]" file="tests/unit/test_module_{module}.py" '
                      f'line="{n % 500}" time="0.{n % 1000:03d}">')
            if n % 20 == 0:
                out.write('<failure message="AssertionError: assert 3 == 2">' + "def test():\n    assert 3 == 2\n" * 3
                          + "E       AssertionError</failure>")
            out.write("<system-out>" + "captured output line\n" * 4 + "</system-out></testcase>\n")
        out.write("</testsuite></testsuites>\n")


def peak_rss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tests", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    root = setup("reports")

    from engine.reports import Tally
    from engine.reports.junit import junit_rows
    from findings.models import CheckReport, ReportedTest
    from findings.services.reports import check_report_record
    from reviews.mirrors import repository_fetch
    from reviews.models import Repository

    checkout = Path(tempfile.mkdtemp(prefix="recheck-bench-reports-repo-"))
    git = ["git", "-C", str(checkout), "-c", "user.name=bench", "-c", "user.email=bench@example.com"]
    subprocess.run(["git", "init", "-q", "-b", "main", str(checkout)], check=True)
    (checkout / "README.md").write_text("bench\n")
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "bench"], check=True)
    sha = subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()
    # A slug of its own: a PostgreSQL database given in DATABASE_URL outlives the run.
    repository = Repository.objects.create(slug=f"bench/reports-{os.getpid()}", clone_url=str(checkout))
    repository_fetch(repository=repository)

    report = root / "junit.xml"
    write_report(report, args.tests)
    size = report.stat().st_size
    figures: dict[str, list[float]] = {"record": [], "iterparse": [], "reader": []}
    growth = []
    for run in range(args.runs):
        # The record first: its memory growth is measured from what the process held before it.
        before = peak_rss_bytes()
        start = time.perf_counter()
        with report.open("rb") as source:
            recorded = check_report_record(repository=repository, sha=sha, check="unit-tests", source="upload",
                                           file=source, attempt=run + 1)
        figures["record"].append(time.perf_counter() - start)
        growth.append(peak_rss_bytes() - before)
        assert recorded.created and recorded.report.tests == args.tests

        start = time.perf_counter()
        for _, element in ElementTree.iterparse(report):
            if element.tag == "testcase":
                element.clear()
        figures["iterparse"].append(time.perf_counter() - start)

        tally = Tally()
        start = time.perf_counter()
        with report.open("rb") as source:
            for _ in junit_rows(source, tally):
                pass
        figures["reader"].append(time.perf_counter() - start)
        assert tally.tests == args.tests
    print(f"JUnit report of {args.tests:,} test cases, {size / 1e6:.1f} MB, {args.runs} runs, "
          f"{os.environ['DATABASE_URL'].split(':', 1)[0]}, load {os.getloadavg()[0]:.1f}")
    floor = statistics.median(figures["iterparse"])
    for name in ("iterparse", "reader", "record"):
        times = figures[name]
        print(f"  {name:9}: {statistics.median(times):.2f} s [{min(times):.2f}-{max(times):.2f}], "
              f"{statistics.median(times) / floor:.1f}x the iterparse pass")
    print(f"  peak RSS growth while recording: {growth[0] / 1e6:.0f} MB (the first run, from the process after "
          f"set-up; later runs {max(growth[1:], default=0) / 1e6:.0f} MB at most)")
    kept = CheckReport.objects.filter(repository=repository)
    print(f"  rows kept: {ReportedTest.objects.filter(report__in=kept).count():,} test cases in {kept.count()} reports")


if __name__ == "__main__":
    main()
