"""Recheck past one machine, simulated on this one: one PostgreSQL and one Redis; three verification
"hosts", each a Celery worker in a process group of its own with its own mirror root (no network
namespaces: the processes share this machine's network), serving its shard and the plain verify
queue; a fourth worker host for the rest (render, maintenance, forge), as the deployment page lays
out; this test's process is the web host, with a mirror root of its own, receiving the pushes as a
webhook would and serving the code browser.

The scale is bounded so that it runs in CI in about a minute on two cores: 3 real git repositories
made here, 6 pull requests (two on each), 20 pushes in three bursts. During the second burst, once
each is verifying, one verification host's mirrors are removed (the cache cleared under it) and
another verification host is killed (its whole process group, SIGKILL; it is not started again).
It must change none of:

- every verdict equals a single-host run of the same pushes (every head pushed, verified in this
  process as each arrives);
- each pull request's newest head is verified; no push's run is lost, none is verified twice, none
  is left running;
- a host fetches only what its mirror lacks: never twice for one commit (the host whose mirrors
  were removed: once before, and at most twice after, a fetch the removal cut short and its
  retry), and in the first burst each repository is fetched by one worker host only (routed by
  repository to its shard);
- the web host serves the code browser and the diff from its own mirrors, fetching each
  repository once.
"""
import os
import re
import shutil
import signal
import subprocess
import time
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from findings.models import Verification, VerificationRun
from findings.services.review_import import review_import
from findings.services.tracking import pull_request_record_head
from findings.tasks import reap_dead_runs
from recheck.celery import app
from recheck.routing import served_queues, verify_shard
from reviews.models import PullRequest, Repository, WorkerHost
from tests.findings.test_redis_restart import OwnRedis
from tests.forge.outbox.test_budget import _database_url
from tests.gitrepo import GitRepoBuilder
from web.code_browser import diff_url

ROOT = Path(__file__).resolve().parents[2]
HOSTS = 3
REPOSITORIES = 3
PULL_REQUESTS_PER_REPOSITORY = 2
# The pull requests (by index) each push goes to, burst by burst: 20 pushes.
BURSTS = ([0, 1, 2, 3, 4, 5], [0, 3, 0, 3, 0, 3, 0, 3], [1, 4, 1, 4, 1, 4])
LINES = 40
FETCHED = re.compile(r"Mirror (fetched|already held) of (\S+) on \S+ for (\S+)")

pytestmark = [
    pytest.mark.skipif(shutil.which("redis-server") is None and not os.environ.get("CI"), reason="needs redis-server"),
    pytest.mark.skipif(not os.environ.get("DATABASE_URL", "").startswith("postgres") and not os.environ.get("CI"),
                       reason="several processes writing at once need PostgreSQL"),
]


def source_text(pull_request: int, push: int) -> str:
    """src/calc.py as push `push` of pull request `pull_request` leaves it: lines moved down by a
    header that grows, the blocker's line fixed on some pushes and back on others."""
    lines = [f"value_{n} = {n}" for n in range(LINES)]
    lines[5] = "tolerance = 0" if (pull_request + push) % 3 else "tolerance = 1e-6"
    return "".join(f"# push {n}\n" for n in range(push % 4)) + "\n".join(lines) + "\n"


def review(slug: str, clone_url: str, number: int, reviewed: str) -> dict:
    findings = [
        {"number": 1, "kind": "blocker", "title": "Tolerance 0 never stops",
         "evidence": [{"kind": "snippet", "path": "src/calc.py", "start_line": 6, "end_line": 6}]},
        {"number": 2, "kind": "blocker", "title": "Debug config shipped",
         "evidence": [{"kind": "path", "path": "config.yaml", "expect": "exists"}]},
    ] + [
        {"number": n, "kind": "cleanup", "title": f"Value {n} is magic",
         "evidence": [{"kind": "snippet", "path": "src/calc.py", "start_line": n + 1, "end_line": n + 1}]}
        for n in range(10, LINES)
    ]
    return {"repository": {"slug": slug, "clone_url": clone_url, "web_url": f"https://github.com/{slug}"},
            "pull_request": {"number": number, "title": f"Change {number}"},
            "commits": [{"sha": reviewed, "role": "reviewed"}], "findings": findings}


def make_repositories(tmp_path) -> list[GitRepoBuilder]:
    repos = []
    for index in range(REPOSITORIES):
        repo = GitRepoBuilder(tmp_path / "upstream", name=f"repo{index}")
        repo.reviewed = repo.write("src/calc.py", source_text(0, 0)).write("config.yaml", "debug: true\n").commit("reviewed")
        for number in range(1, PULL_REQUESTS_PER_REPOSITORY + 1):
            repo.branch(f"pr-{number}")
        repos.append(repo)
    return repos


def record_reviews(repos, prefix: str) -> list[PullRequest]:
    """The same review of every pull request of every repository, under the slugs `prefix/repoN`."""
    pull_requests = []
    for index, repo in enumerate(repos):
        for number in range(1, PULL_REQUESTS_PER_REPOSITORY + 1):
            review_import(data=review(f"{prefix}/repo{index}", str(repo.path), number, repo.reviewed), actor=None)
            pull_requests.append(PullRequest.objects.select_related("repository").get(
                repository__slug=f"{prefix}/repo{index}", number=number))
    return pull_requests


def record_one_repository_per_shard(repos) -> list[PullRequest]:
    """The reviews, recorded again until the repositories land on three different shards, so that
    each worker host keeps one (the shard is a hash of the id, and ids only grow)."""
    while True:
        pull_requests = record_reviews(repos, "sim")
        if len({verify_shard(pr.repository_id, HOSTS) for pr in pull_requests}) == HOSTS:
            return pull_requests
        Repository.objects.filter(slug__startswith="sim/").delete()


def push_plan() -> list[list[tuple[int, int]]]:
    """(pull request index, push number) of every push, burst by burst: every PR once, then two
    bursts of several pushes to the same PRs, faster than one worker verifies them."""
    plan, counts = [], defaultdict(int)
    for burst in BURSTS:
        plan.append([])
        for pr in burst:
            counts[pr] += 1
            plan[-1].append((pr, counts[pr]))
    return plan


def make_push(repos, pr_index: int, push: int) -> str:
    repo = repos[pr_index // PULL_REQUESTS_PER_REPOSITORY]
    number = pr_index % PULL_REQUESTS_PER_REPOSITORY + 1
    repo.checkout(f"pr-{number}").write("src/calc.py", source_text(pr_index, push))
    if (pr_index + push) % 2:
        if (repo.path / "config.yaml").exists():
            repo.delete("config.yaml")
    else:
        repo.write("config.yaml", f"debug: {push}\n")
    return repo.commit(f"push {push} to pr-{number}")


class Host:
    def __init__(self, index: int, work: Path, env: dict, queues: str):
        self.index, self.name, self.queues = index, f"host{index}@simulation", queues
        self.mirrors = work / f"host{index}-mirrors"
        self.log = work / f"host{index}.log"
        self.env = {**env, "RECHECK_MIRROR_ROOT": str(self.mirrors)}
        self.process = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            [str(ROOT / ".venv/bin/celery"), "-A", "recheck", "worker", "--pool=solo", "--without-mingle",
             "--without-gossip", "--loglevel=INFO", "-Q", self.queues, "-n", self.name],
            cwd=ROOT, env=self.env, stdout=subprocess.DEVNULL, stderr=open(self.log, "w"), start_new_session=True,
        )

    def kill(self) -> None:
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)

    def fetches(self) -> list[tuple[str, str, str]]:
        return FETCHED.findall(self.log.read_text()) if self.log.exists() else []


def wait_until(condition, seconds: float, what: str, *, reap: bool = True) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        if reap:
            reap_dead_runs()  # beat's round, as often as a test can afford
        time.sleep(0.2)


def all_ended() -> bool:
    return not VerificationRun.objects.active().exists()


@pytest.fixture
def broker(settings):
    server = OwnRedis()
    server.start()
    url = f"redis://127.0.0.1:{server.port}/0"
    keys = ("task_always_eager", "broker_url", "broker_write_url", "result_backend")
    saved = {key: app.conf.get(key) for key in keys}
    settings.CELERY_BROKER_URL = url
    app.conf.update(broker_url=url, broker_write_url=url, task_always_eager=False,
                    result_backend=f"redis://127.0.0.1:{server.port}/1")
    app._pool = None
    app.amqp._producer_pool = None
    yield url
    app.conf.update(saved)
    app._pool = None
    app.amqp._producer_pool = None
    server.stop()


@pytest.mark.django_db(transaction=True)
def test_three_worker_hosts_and_a_web_host_verify_as_one_host_would(tmp_path, settings, broker, client, caplog):
    settings.RECHECK_ALLOW_LOCAL_REPOSITORIES = True
    settings.RECHECK_VERIFY_SHARDS = HOSTS
    settings.RECHECK_ROUTING_CACHE_SECONDS = 0.2
    settings.RECHECK_WORKER_HEARTBEAT_SECONDS = 0.5
    settings.RECHECK_WORKER_ALIVE_SECONDS = 3  # six heartbeats: a loaded machine delays some
    # As the workers are configured below: a run silent for longer than a task may run is dead.
    settings.RECHECK_RUN_STALE_SECONDS = 25
    settings.RECHECK_MIRROR_ROOT = tmp_path / "web-mirrors"
    served_queues.forget()
    repos = make_repositories(tmp_path)
    pull_requests = record_one_repository_per_shard(repos)

    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "recheck.test_settings",
        "DATABASE_URL": _database_url(),
        "CELERY_BROKER_URL": broker,
        "CELERY_RESULT_BACKEND": broker.replace("/0", "/1"),
        "RECHECK_ALLOW_LOCAL_REPOSITORIES": "1",
        "RECHECK_VERIFY_SHARDS": str(HOSTS),
        "RECHECK_WORKER_HEARTBEAT_SECONDS": "0.5",
        "RECHECK_ROUTING_CACHE_SECONDS": "0.2",
        "CELERY_TASK_SOFT_TIME_LIMIT": "15",
        "CELERY_TASK_TIME_LIMIT": "20",
        "CELERY_VISIBILITY_TIMEOUT": "30",
        "RECHECK_RUN_REAP_MARGIN_SECONDS": "5",
        "LOG_LEVEL": "INFO",
    }
    hosts = [Host(index, tmp_path, env, f"verify.{index},verify") for index in range(HOSTS)]
    rest = Host(HOSTS, tmp_path, env, "render,maintenance,forge,celery")
    for host in [*hosts, rest]:
        host.start()
    heads: dict[int, list[str]] = defaultdict(list)
    burst_fetches = []
    mid_run: set[str] = set()
    cleared_at: list[int] = []
    try:
        wait_until(lambda: WorkerHost.objects.filter(hostname__in=[h.name for h in [*hosts, rest]]).count() == HOSTS + 1,
                   60, "the worker hosts", reap=False)
        served_queues.forget()
        plan = push_plan()
        victim = hosts[verify_shard(pull_requests[0].repository_id, HOSTS)]
        cleared = hosts[verify_shard(pull_requests[3].repository_id, HOSTS)]
        first_burst_pushes = defaultdict(int)
        for pr_index, _ in plan[0]:
            first_burst_pushes[pr_index] += 1
        for number, burst in enumerate(plan):
            # The burst's commits are made first, then their pushes arrive as fast as webhooks do.
            pushed = [(pr_index, make_push(repos, pr_index, push)) for pr_index, push in burst]
            for pr_index, sha in pushed:
                heads[pr_index].append(sha)
                pull_request_record_head(pull_request=pull_requests[pr_index], sha=sha)
            if number == 1:
                # While they verify: the mirrors of the host of PR 3's repository are removed (a cache
                # cleared, a disk replaced), and the host of PR 0's repository dies, its whole
                # process group at once.
                def clear():
                    cleared_at.append(len(cleared.fetches()))
                    shutil.rmtree(cleared.mirrors, ignore_errors=True)

                faults = {"cleared": (pull_requests[3].repository_id, clear),
                          "killed": (pull_requests[0].repository_id, victim.kill)}
                deadline = time.monotonic() + 20
                while faults and time.monotonic() < deadline:
                    for fault, (repository_id, act) in list(faults.items()):
                        if VerificationRun.objects.filter(pull_request__repository_id=repository_id,
                                                          status="running").exists():
                            act()
                            mid_run.add(fault)
                            del faults[fault]
                    time.sleep(0.02)
                for _, act in faults.values():
                    act()
            wait_until(all_ended, 90, f"burst {number + 1}'s runs to end")
            burst_fetches.append({host.name: list(host.fetches()) for host in hosts})
    finally:
        for host in [*hosts, rest]:
            host.stop()

    # -- nothing lost, duplicated or stuck; the newest heads verified --------------------------
    assert not VerificationRun.objects.active().exists(), "nothing left running"
    for pr_index, pull_request in enumerate(pull_requests):
        runs = VerificationRun.objects.filter(pull_request=pull_request)
        for sha in heads[pr_index]:
            of_head = runs.filter(commit__sha=sha)
            # A run reaped after its host died is failed and queued again once: its retry ends it.
            assert of_head.filter(status__in=["done", "superseded"]).exists(), (
                f"the run of {sha[:8]} was lost: {list(of_head.values_list('status', 'message'))}; "
                + " | ".join(line for host in hosts for line in host.log.read_text().splitlines()
                             if "WARNING" in line or "ERROR" in line or "Mirror" in line)[-6000:])
            assert of_head.filter(status="done").count() <= 1, f"{sha[:8]} verified twice"
        newest = heads[pr_index][-1]
        assert runs.filter(commit__sha=newest, status="done").exists(), f"the newest head of {pull_request} unverified"

    # -- a host fetches only what it lacks; the first burst's fetches routed by repository -----
    for host in hosts:
        lines = host.fetches()
        spans = [(lines, 1)] if host is not cleared else [(lines[:cleared_at[0]], 1), (lines[cleared_at[0]:], 2)]
        for span, most in spans:
            fetched = [(slug, commits) for kind, slug, commits in span if kind == "fetched"]
            asked = Counter((slug, commit) for slug, commits in fetched for commit in commits.split(","))
            assert max(asked.values(), default=0) <= most, f"{host.name} fetched a commit again: {fetched}"
    # The pushed heads of the first burst (all hosts alive) are fetched by their shard's host alone.
    first = burst_fetches[0]
    for pr_index, pull_request in enumerate(pull_requests):
        pushed = {sha[:12] for sha in heads[pr_index][:first_burst_pushes[pr_index]]}
        fetching = {name for name, lines in first.items()
                    if any(kind == "fetched" and slug == pull_request.repository.slug and set(commits.split(",")) & pushed
                           for kind, slug, commits in lines)}
        assert fetching <= {hosts[verify_shard(pull_request.repository_id, HOSTS)].name}, (
            f"{pull_request.repository.slug}'s heads were fetched by {fetching} in the first burst: {first}")
    cache_hits = sum(kind == "already held" for host in hosts for kind, _, _ in host.fetches())

    # -- the web host serves the code browser and the diff from its own mirrors ---------------
    with caplog.at_level("INFO", logger="reviews.mirrors"):
        for pr_index, pull_request in enumerate(pull_requests):
            newest = heads[pr_index][-1]
            page = client.get(f"{pull_request.get_absolute_url()}code/{newest}/src/calc.py")
            assert page.status_code == 200 and "value_39" in page.content.decode()
            diff = client.get(diff_url(pull_request, repos[pr_index // PULL_REQUESTS_PER_REPOSITORY].reviewed, newest))
            assert diff.status_code == 200, diff.content[:500]
    web_fetches = [record.getMessage() for record in caplog.records if "Mirror fetched" in record.getMessage()]
    assert sorted(message.split(" on ")[0] for message in web_fetches) == sorted(
        f"Mirror fetched of sim/repo{index}" for index in range(REPOSITORIES)
    ), "the web host fetched each repository once"
    assert (tmp_path / "web-mirrors" / "sim").is_dir()

    # -- every verdict equals a single-host run of the same pushes -----------------------------
    settings.RECHECK_MIRROR_ROOT = tmp_path / "single-host-mirrors"
    app.conf.task_always_eager = True
    twins = record_reviews(repos, "single")
    for pr_index, twin in enumerate(twins):
        for sha in heads[pr_index]:
            pull_request_record_head(pull_request=twin, sha=sha)
    compared = 0
    for pull_request, twin in zip(pull_requests, twins, strict=True):
        verified = verdicts_by_commit(pull_request)
        single = verdicts_by_commit(twin)
        done = set(VerificationRun.objects.filter(pull_request=pull_request, status="done")
                   .values_list("commit__sha", flat=True))
        assert set(verified) >= done
        for sha in done:
            verdicts = verified[sha]
            assert verdicts == single[sha], f"{pull_request} at {sha[:8]}"
            compared += 1
    assert compared >= len(pull_requests)
    superseded = VerificationRun.objects.filter(pull_request__in=pull_requests, status="superseded").count()
    print(f"\n{sum(map(len, BURSTS))} pushes to {len(pull_requests)} PRs on {REPOSITORIES} repositories, {HOSTS} worker hosts: "
          f"{compared} heads verified, each as one host verifies it, {superseded} runs superseded; {cache_hits} runs found their commit cached; "
          f"faults while their host verified: {sorted(mid_run)}")


def verdicts_by_commit(pull_request) -> dict[str, dict[int, str]]:
    verdicts: dict[str, dict[int, str]] = defaultdict(dict)
    rows = Verification.objects.filter(finding__pull_request=pull_request).values_list(
        "commit__sha", "finding__number", "verdict")
    for sha, number, verdict in rows:
        verdicts[sha][number] = verdict
    return verdicts
