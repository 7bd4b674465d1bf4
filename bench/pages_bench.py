"""Requests per second of the site's pages under load, next to the trivial view in the same run.

    .venv/bin/python bench/pages_bench.py [--seconds 8] [--pairs 3] [--findings 1000] [--workers 3]

Starts its own PostgreSQL and Redis (on free ports, in a temporary directory, as
fault_injection.py does), migrates, loads the demo data (the 9-finding sample, verified at each
of its pins, and NVIDIA-NeMo/RL #4108) and a pull request of --findings findings made with bulk
inserts, then serves the site with gunicorn (--workers sync workers, Redis as the cache) and
drives it with wrk (-t2 -c8) as an anonymous reader: each page and `/healthz` alternate, pair
after pair, so a neighbour's load falls on both alike. Reported per page: requests per second of
the floor and of the page, and their ratio (median [range] of the pairs), against the issue's
targets. Pages are read as built and kept (the first request of a pair's run builds the page; the
rest are served kept), a 304 as a browser revalidating, and the first read after a write as the
time of one request after the pull request's generation moved (median of --writes).

With --in-process N, no server is started: each subject and `/healthz` are called through Django's
WSGI handler in this process, N requests a side, alternating: what the code costs, without the
server, the network and the load generator, which a busy machine makes noisy. The ratio is then
`/healthz`'s time a request over the subject's (as a rate would be); run it on two checkouts one
after the other to compare versions."""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _interleave import interleave, load_average, spread  # noqa: E402
from fault_injection import Postgres, Redis, free_port, wait_for_port  # noqa: E402


def wrk(url: str, seconds: int, *, headers: tuple[str, ...] = ()) -> float:
    """Requests per second wrk reaches at `url` (every answer must be a 2xx or a 304)."""
    command = ["wrk", "-t2", "-c8", f"-d{seconds}s", "--latency"]
    for header in headers:
        command += ["-H", header]
    output = subprocess.run([*command, url], check=True, capture_output=True, text=True).stdout
    if "Non-2xx or 3xx responses" in output:
        raise SystemExit(f"{url} answered with errors under load:\n{output}")
    return float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1))


def fetch(url: str, **headers) -> tuple[int, dict, bytes]:
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def in_process_caller():
    """A function that sends one anonymous GET through Django's WSGI handler in this process and
    returns its status line and headers."""
    import io

    from django.core.handlers.wsgi import WSGIHandler

    handler = WSGIHandler()

    def call(path: str, headers: tuple[str, ...] = ()) -> tuple[int, dict]:
        path, _, query = path.partition("?")
        environ = {
            "REQUEST_METHOD": "GET", "PATH_INFO": path, "QUERY_STRING": query, "SERVER_NAME": "127.0.0.1",
            "SERVER_PORT": "80", "SERVER_PROTOCOL": "HTTP/1.1", "HTTP_HOST": "127.0.0.1", "wsgi.url_scheme": "http",
            "wsgi.input": io.BytesIO(), "wsgi.errors": sys.stderr,
            **{f"HTTP_{name.upper().replace('-', '_')}": value
               for name, value in (header.split(": ", 1) for header in headers)},
        }
        answer = []
        body = handler(environ, lambda status, response_headers, exc_info=None: answer.append((status, response_headers)))
        for _ in body:
            pass
        body.close()
        status, response_headers = answer[0]
        return int(status[:3]), dict(response_headers)

    return call


def per_request(call, path: str, headers: tuple[str, ...], requests: int) -> float:
    """Seconds a request of `requests` calls of `path` in this process."""
    started = time.perf_counter()
    for _ in range(requests):
        call(path, headers)
    return (time.perf_counter() - started) / requests


def subjects_of(site: str, pull_requests: tuple, findings: int, etag: str) -> list[tuple]:
    """(label, URL, headers, target) of each page measured; `etag` is the sample overview's."""
    sample, review, large = pull_requests
    subjects = []
    for label, pull_request in (("sample", sample), ("#4108", review), (f"{findings:,}-finding", large)):
        for page in ("", "blockers/", "cleanups/"):
            subjects.append((f"{label} {page.rstrip('/') or 'overview'}", f"{site}{pull_request.get_absolute_url()}{page}",
                             (), 0.50))
    subjects.append(("sample overview, 304", f"{site}{sample.get_absolute_url()}", (f"If-None-Match: {etag}",), 0.80))
    subjects.append(("home page", f"{site}/", (), 0.30))
    subjects.append(("search ?q=loader", f"{site}/?q=loader", (), 0.30))
    # The pages across a repository's pull requests and a PR's inbox, kept by the repository's
    # version and the PR's generation (no target of their own in the issue: for reference).
    subjects.append(("sample repository", f"{site}{sample.repository.get_absolute_url()}", (), 0.0))
    subjects.append((f"{findings:,}-finding repository", f"{site}{large.repository.get_absolute_url()}", (), 0.0))
    subjects.append(("sample threads", f"{site}{sample.get_absolute_url()}threads/", (), 0.0))
    subjects.append(("decisions queue", f"{site}/decisions/", (), 0.0))
    subjects.append(("gate (for reference)", f"{site}/api/repos/{sample.repository.slug}/pulls/{sample.number}/gate",
                     (), 0.0))
    return subjects


def in_process(args, pull_requests: tuple) -> None:
    call = in_process_caller()
    status, headers = call(pull_requests[0].get_absolute_url())
    assert status == 200 and "ETag" in headers, (status, headers)
    for label, path, request_headers, target in subjects_of("", pull_requests, args.findings, headers["ETag"]):
        if args.only and args.only not in label:
            continue
        status, _ = call(path, request_headers)
        assert status in (200, 304), (label, status)
        per_request(call, "/healthz", (), args.in_process // 10)  # warmed up: the first reads are kept
        per_request(call, path, request_headers, args.in_process // 10)
        pairs = interleave(label, args.pairs, lambda: per_request(call, "/healthz", (), args.in_process),
                           lambda path=path, headers=request_headers: per_request(call, path, headers, args.in_process))
        # As a rate would be: /healthz's time a request over the subject's.
        ratios = [floor / subject for floor, subject in zip(pairs.floors, pairs.subjects, strict=True)]
        print(f"{label:32} /healthz {spread([f * 1e6 for f in pairs.floors], '{:.0f}')} us, page "
              f"{spread([f * 1e6 for f in pairs.subjects], '{:.0f}')} us, ratio {spread(ratios)} "
              f"(load {min(pairs.loads):.1f}-{max(pairs.loads):.1f}){f'  target >= {target:.2f}' if target else ''}",
              flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=int, default=8)
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--findings", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--writes", type=int, default=15)
    parser.add_argument("--only", default="", help="run only the subjects whose label contains this text")
    parser.add_argument("--in-process", type=int, default=0, metavar="N",
                        help="no server: N requests a side through Django's WSGI handler in this process")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="recheck-pages-"))
    os.chmod(work, 0o755)
    (work / "pg").mkdir()
    postgres, redis = Postgres(work / "pg"), Redis(work)
    postgres.init()
    postgres.start()
    redis.start()
    port = free_port()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "recheck.settings",
        "SECRET_KEY": "pages-bench-only",
        "DEBUG": "0",
        "RECHECK_DEMO": "1",  # static files served from the source tree, as scripts/serve does
        "RECHECK_PUBLIC_READ": "1",
        "ALLOWED_HOSTS": "127.0.0.1",
        "DATABASE_URL": f"postgres://postgres@127.0.0.1:{postgres.port}/postgres",
        "CACHE_URL": f"redis://127.0.0.1:{redis.port}/2",
        "RECHECK_MIRROR_ROOT": str(work / "mirrors"),
        "RECHECK_ALLOW_LOCAL_REPOSITORIES": "1",
        "LOG_LEVEL": "WARNING",
    }
    env.pop("CELERY_BROKER_URL", None)
    os.environ.update(env)
    os.environ.pop("CELERY_BROKER_URL", None)
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)
    call_command("load_demo", verbosity=0, stdout=open(os.devnull, "w"))
    from reviews.models import PullRequest

    # The same large pull request the tests build, its state stored as a verification stores it.
    from tests.factories import large_reviewed_pull_request

    large = large_reviewed_pull_request(findings=args.findings)
    sample = PullRequest.objects.get(repository__slug="recheck-demo/sample", number=1)
    review = PullRequest.objects.get(number=4108)
    if args.in_process:
        try:
            in_process(args, (sample, review, large))
        finally:
            redis.stop()
            from django.db import connections

            connections.close_all()
            postgres.stop()
            shutil.rmtree(work, ignore_errors=True)
        return 0
    server = subprocess.Popen(
        [str(ROOT / ".venv/bin/gunicorn"), "recheck.wsgi", "--workers", str(args.workers), "--bind",
         f"127.0.0.1:{port}", "--log-level", "warning"],
        cwd=ROOT, env=env, start_new_session=True, stdout=open(work / "gunicorn.log", "ab"), stderr=subprocess.STDOUT,
    )
    site = f"http://127.0.0.1:{port}"
    results = []
    try:
        wait_for_port(port)
        floor = f"{site}/healthz"
        status, headers, _ = fetch(f"{site}{sample.get_absolute_url()}")
        assert status == 200 and "ETag" in headers, (status, headers)
        subjects = subjects_of(site, (sample, review, large), args.findings, headers["ETag"])
        if args.only:
            subjects = [subject for subject in subjects if args.only in subject[0]]
        for label, url, headers, target in subjects:
            status, _, _ = fetch(url, **dict(header.split(": ", 1) for header in headers))
            assert status in (200, 304), (label, status)
            pairs = interleave(label, args.pairs, lambda: wrk(floor, args.seconds),
                               lambda url=url, headers=headers: wrk(url, args.seconds, headers=headers))
            results.append((pairs, target))
            ratio = statistics.median(pairs.ratios)
            verdict = "" if not target else ("met" if ratio >= target else "MISSED")
            print(f"{label:32} floor {spread(pairs.floors, '{:.0f}')} req/s, page {spread(pairs.subjects, '{:.0f}')} "
                  f"req/s, ratio {spread(pairs.ratios)} (load {min(pairs.loads):.1f}-{max(pairs.loads):.1f})"
                  f"{f'  target >= {target:.2f}: {verdict}' if target else ''}", flush=True)

        # The first read after a write: the generation moves (a save of the PR), then one request
        # builds the overview of the large pull request (its state derived again, the page built).
        if not args.only or "write" in args.only:
            timings = []
            url = f"{site}{large.get_absolute_url()}"
            for _ in range(args.writes):
                PullRequest.objects.get(pk=large.pk).save()
                started = time.perf_counter()
                status, headers, _ = fetch(url)
                timings.append((time.perf_counter() - started) * 1000)
                assert status == 200
                fetch(url)  # kept now
            median = statistics.median(timings)
            print(f"{args.findings:,}-finding overview, first read after a write: {spread(timings, '{:.0f}')} ms "
                  f"over {args.writes} writes (load {load_average():.1f})  target <= 150 ms: "
                  f"{'met' if median <= 150 else 'MISSED'}")
    finally:
        os.killpg(server.pid, 15)
        server.wait(timeout=30)
        redis.stop()
        from django.db import connections

        connections.close_all()
        postgres.stop()
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
