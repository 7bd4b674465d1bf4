"""Recheck past one machine, simulated on this one: one PostgreSQL and one Redis; three verification
"hosts", each a Celery worker in a process group of its own with its own mirror root, serving its
shard and the plain verify queue; a fourth worker host for the rest (render, maintenance, forge), as
the deployment page lays out; this test's process is the web host, with a mirror root of its own,
receiving the pushes as a webhook would and serving the code browser.

Where the test runs as root, each worker host also has a network of its own: a network namespace
joined to this machine's by a veth pair (tests/recheck/hosts_network.py), reaching PostgreSQL and
Redis only at the pair's far end, never at this machine's 127.0.0.1. Elsewhere the hosts share
this machine's network, and the test says so (a warning); on CI (`CI` set) as root, a namespace
that cannot be made fails the test instead.

The issue's scale: 5 real git repositories made here, 20 pull requests (four on each), 100 pushes
in three bursts (every PR once; then four pushes each to half of them, round by round, faster than
a worker verifies; then four each to the other half). During the second burst, once each is
verifying, one verification host's mirrors are removed (the cache cleared under it) and another
verification host is killed while it holds a run (its whole process group, SIGKILL; it is not
started again): that run is reaped once the host's heartbeats stop vouching for it, well before
the task time limit, and queued again. It must change none of:

- every verdict equals a single-host run of the same pushes (every head pushed, verified in this
  process as each arrives);
- each pull request's newest head is verified; no push's run is lost, none is verified twice, none
  is left running; the pushes a newer head overtook in the queue are superseded;
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
import warnings
from collections import Counter, defaultdict
from datetime import timedelta
from pathlib import Path

import pytest

from findings.models import CompanionPages, Verification, VerificationRun
from findings.services.review_import import review_import
from findings.services.tracking import pull_request_record_head
from findings.tasks import reap_dead_runs
from recheck.celery import app
from recheck.routing import served_queues, verify_shard
from reviews.models import PullRequest, Repository, WorkerHost
from tests.recheck import hosts_network
from tests.findings.test_redis_restart import OwnRedis
from tests.forge.outbox.test_budget import _database_url
from tests.gitrepo import GitRepoBuilder
from web.code_browser import diff_url

ROOT = Path(__file__).resolve().parents[2]
HOSTS = 3
REPOSITORIES = 5
PULL_REQUESTS_PER_REPOSITORY = 4
PULL_REQUESTS = REPOSITORIES * PULL_REQUESTS_PER_REPOSITORY
ROUNDS = 4
# A task that runs longer than this on the worker hosts is stopped: a run silent for longer (and a
# margin) is dead, and is reaped; a verification here takes a fraction of a second. A run whose
# worker stopped vouching for it for LAPSE seconds (ten heartbeats) is dead sooner: the killed
# host's run is reaped by that rule, long before the time limit could reap it.
TASK_TIME_LIMIT, REAP_MARGIN, LAPSE = 30, 3, 5


def pull_requests_of(*numbers: int) -> list[int]:
    """The indexes of the pull requests numbered `numbers` (from 0) in every repository."""
    return [repository * PULL_REQUESTS_PER_REPOSITORY + number for repository in range(REPOSITORIES) for number in numbers]


# The pull requests (by index) each push goes to, burst by burst: 100 pushes. Every PR once; then
# ROUNDS rounds of a push to each of the first two PRs of every repository; then the same to the others.
BURSTS = (list(range(PULL_REQUESTS)), pull_requests_of(0, 1) * ROUNDS, pull_requests_of(2, 3) * ROUNDS)
LINES = 40
RENDERED = re.compile(r"Task presentation\.tasks\.render_companion_pages\[[^\]]+\] succeeded")
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


def record_reviews(repos, prefix: str, numbers=range(1, PULL_REQUESTS_PER_REPOSITORY + 1)) -> list[PullRequest]:
    """The same review of the pull requests `numbers` of every repository, under the slugs `prefix/repoN`."""
    pull_requests = []
    for index, repo in enumerate(repos):
        for number in numbers:
            review_import(data=review(f"{prefix}/repo{index}", str(repo.path), number, repo.reviewed), actor=None)
            pull_requests.append(PullRequest.objects.select_related("repository").get(
                repository__slug=f"{prefix}/repo{index}", number=number))
    return pull_requests


def record_on_every_shard(repos) -> list[PullRequest]:
    """The reviews, recorded again until the repositories land on every shard, so that each worker
    host keeps at least one (the shard is a hash of the id, and ids only grow)."""
    while True:
        # One pull request per repository until the repositories' shards are known: then the rest.
        firsts = record_reviews(repos, "sim", numbers=[1])
        if len({verify_shard(pr.repository_id, HOSTS) for pr in firsts}) == HOSTS:
            record_reviews(repos, "sim", numbers=range(2, PULL_REQUESTS_PER_REPOSITORY + 1))
            return [PullRequest.objects.select_related("repository").get(repository__slug=f"sim/repo{index}", number=number)
                    for index in range(REPOSITORIES) for number in range(1, PULL_REQUESTS_PER_REPOSITORY + 1)]
        Repository.objects.filter(slug__startswith="sim/").delete()


def push_plan() -> list[list[tuple[int, int]]]:
    """(pull request index, push number) of every push, burst by burst (BURSTS)."""
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
    def __init__(self, index: int, work: Path, env: dict, queues: str, network: hosts_network.HostNetwork | None):
        self.index, self.name, self.queues, self.network = index, f"host{index}@simulation", queues, network
        self.mirrors = work / f"host{index}-mirrors"
        self.log = work / f"host{index}.log"
        self.env = {**env, "RECHECK_MIRROR_ROOT": str(self.mirrors)}
        if network is not None:
            # PostgreSQL and Redis at the far end of the host's veth pair: the only way out it has.
            for name in ("DATABASE_URL", "CELERY_BROKER_URL", "CELERY_RESULT_BACKEND"):
                self.env[name] = self.env[name].replace("@127.0.0.1:", f"@{network.outer_address}:").replace(
                    "//127.0.0.1:", f"//{network.outer_address}:")
        self.process = None

    def start(self) -> None:
        argv = [str(ROOT / ".venv/bin/celery"), "-A", "recheck", "worker", "--pool=solo", "--without-mingle",
                "--without-gossip", "--loglevel=INFO", "-Q", self.queues, "-n", self.name]
        self.process = subprocess.Popen(
            self.network.command(argv) if self.network else argv,
            cwd=ROOT, env=self.env, stdout=subprocess.DEVNULL, stderr=open(self.log, "w"), start_new_session=True,
            preexec_fn=hosts_network.dies_with_this_process,
        )

    def kill(self) -> None:
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)
        if self.network is not None:
            # The group's other processes (git, a moment ago) end as the signal reaches them.
            deadline = time.monotonic() + 10
            while self.network.pids():
                assert time.monotonic() < deadline, f"the killed host left {self.network.pids()} in its namespace"
                time.sleep(0.05)

    def terminate(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)

    def stop(self) -> None:
        self.terminate()
        if self.process is not None:
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=30)

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
def networks():
    """A network namespace for each worker host where this machine allows it (root, `ip netns`,
    `socat`), removed again whatever the test's outcome; None where it does not."""
    reason = hosts_network.unavailable()
    if reason is None:
        made = hosts_network.HostNetworks(HOSTS + 1)
        try:
            yield made.create()
        finally:
            made.close()
        return
    if os.geteuid() == 0 and os.environ.get("CI"):
        pytest.fail(f"On CI as root each simulated host must have a network namespace, but: {reason}")
    warnings.warn(f"The simulated hosts share this machine's network, without network namespaces: {reason}.", stacklevel=2)
    yield None


@pytest.fixture
def broker(settings, networks):
    server = OwnRedis(bind=tuple(host.outer_address for host in networks.hosts) if networks else ())
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


def check_the_hosts_networks(hosts, pg_port: int, redis_port: int) -> None:
    """Each host reaches PostgreSQL and Redis at its veth pair's far end, and nothing of this
    machine's loopback: not the PostgreSQL listening there, nor the test's Redis."""
    for host in hosts:
        network = host.network
        assert network.connects(network.outer_address, pg_port) == "ok"
        assert network.connects(network.outer_address, redis_port) == "ok"
        for port in (pg_port, redis_port):
            refused = network.connects("127.0.0.1", port)
            assert refused != "ok", f"{host.name} reached this machine's 127.0.0.1:{port}"


def worker_env(broker: str) -> dict:
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "recheck.test_settings",
        "DATABASE_URL": _database_url(),
        "CELERY_BROKER_URL": broker,
        "CELERY_RESULT_BACKEND": broker.replace("/0", "/1"),
        "CACHE_URL": "",
        "RECHECK_ALLOW_LOCAL_REPOSITORIES": "1",
        "RECHECK_VERIFY_SHARDS": str(HOSTS),
        "RECHECK_WORKER_HEARTBEAT_SECONDS": "0.5",
        "RECHECK_ROUTING_CACHE_SECONDS": "0.2",
        "CELERY_TASK_SOFT_TIME_LIMIT": str(TASK_TIME_LIMIT - 2),
        "CELERY_TASK_TIME_LIMIT": str(TASK_TIME_LIMIT),
        "CELERY_VISIBILITY_TIMEOUT": "60",
        "RECHECK_RUN_REAP_MARGIN_SECONDS": str(REAP_MARGIN),
        "RECHECK_WORKER_LAPSE_SECONDS": str(LAPSE),
        "LOG_LEVEL": "INFO",
    }


class Faults:
    """Acts each done once a run it waits for is verifying (`when`, given the running runs'
    repositories and workers): looked for after every push of the burst and then until they are all
    done (or, at the end of the wait, done anyway)."""

    def __init__(self, faults: dict):
        self.waiting, self.mid_run = dict(faults), set()

    def poll(self) -> None:
        if not self.waiting:
            return
        running = list(VerificationRun.objects.filter(status="running").values_list("pull_request__repository_id", "worker"))
        for fault, (when, act) in list(self.waiting.items()):
            if when(running):
                act()
                self.mid_run.add(fault)
                del self.waiting[fault]

    def finish(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while self.waiting and time.monotonic() < deadline:
            self.poll()
            time.sleep(0.01)
        for _, act in self.waiting.values():
            act()
        self.waiting.clear()


@pytest.mark.django_db(transaction=True)
def test_three_worker_hosts_and_a_web_host_verify_as_one_host_would(tmp_path, settings, broker, networks, client, caplog):
    settings.RECHECK_ALLOW_LOCAL_REPOSITORIES = True
    settings.RECHECK_VERIFY_SHARDS = HOSTS
    settings.RECHECK_ROUTING_CACHE_SECONDS = 0.2
    settings.RECHECK_WORKER_HEARTBEAT_SECONDS = 0.5
    settings.RECHECK_WORKER_ALIVE_SECONDS = 3  # six heartbeats: a loaded machine delays some
    # As the workers are configured below: a run silent for longer than a task may run is dead, and
    # so is a running run its worker stopped vouching for.
    settings.RECHECK_RUN_STALE_SECONDS = TASK_TIME_LIMIT + REAP_MARGIN
    settings.RECHECK_WORKER_LAPSE_SECONDS = LAPSE
    settings.RECHECK_MIRROR_ROOT = tmp_path / "web-mirrors"
    served_queues.forget()
    repos = make_repositories(tmp_path)
    pull_requests = record_on_every_shard(repos)
    shard_of = [verify_shard(pull_request.repository_id, HOSTS) for pull_request in pull_requests]

    env = worker_env(broker)
    pg_port = int(env["DATABASE_URL"].rsplit(":", 1)[1].split("/")[0])
    redis_port = int(broker.rsplit(":", 1)[1].split("/")[0])
    if networks:
        networks.forward(pg_port, ("127.0.0.1", pg_port))
    nets = networks.hosts if networks else [None] * (HOSTS + 1)
    # Each verification host renders its shard's pages too, from the mirrors its verifications fetched.
    hosts = [Host(index, tmp_path, env, f"verify.{index},verify,render.{index}", nets[index]) for index in range(HOSTS)]
    rest = Host(HOSTS, tmp_path, env, "render,maintenance,forge,celery", nets[HOSTS])
    if networks:
        check_the_hosts_networks([*hosts, rest], pg_port, redis_port)
    for host in [*hosts, rest]:
        host.start()
    heads: dict[int, list[str]] = defaultdict(list)
    burst_fetches = []
    cleared_at: list[int] = []
    held: list[int] = []  # the runs the killed host was carrying out when it died
    # The host of the first repository is killed; the host of another repository's shard has its
    # mirrors removed.
    victim = hosts[shard_of[0]]
    other = next(index for index, shard in enumerate(shard_of) if shard != shard_of[0])
    cleared = hosts[shard_of[other]]
    started = time.monotonic()
    try:
        wait_until(lambda: WorkerHost.objects.filter(hostname__in=[h.name for h in [*hosts, rest]]).count() == HOSTS + 1,
                   60, "the worker hosts", reap=False)
        served_queues.forget()

        def clear():
            cleared_at.append(len(cleared.fetches()))
            shutil.rmtree(cleared.mirrors, ignore_errors=True)

        # In the second burst, while they verify: a host's mirrors removed (a cache cleared, a disk
        # replaced), and another host dies, its whole process group at once.
        def kill():
            victim.kill()
            held.extend(VerificationRun.objects.filter(status="running", worker=victim.name).values_list("pk", flat=True))

        faults = Faults({"cleared": (lambda running: any(repository == pull_requests[other].repository_id
                                                         for repository, _ in running), clear),
                         "killed": (lambda running: any(worker == victim.name for _, worker in running), kill)})
        for number, burst in enumerate(push_plan()):
            # The burst's commits are made first, then their pushes arrive as fast as webhooks do.
            pushed = [(pr_index, make_push(repos, pr_index, push)) for pr_index, push in burst]
            for pr_index, sha in pushed:
                heads[pr_index].append(sha)
                pull_request_record_head(pull_request=pull_requests[pr_index], sha=sha)
                if number == 1:
                    faults.poll()
            if number == 1:
                faults.finish(20)
            wait_until(all_ended, 120, f"burst {number + 1}'s runs to end")
            burst_fetches.append({host.name: list(host.fetches()) for host in hosts})
        elapsed = time.monotonic() - started
        # The pages of each pull request rendered at its newest head, on its shard's host (the
        # killed host's shard aside: what was queued for it waits for a worker of that shard, and
        # a download renders pages that are out of date afresh).
        rendered_here = [pr_index for pr_index in range(PULL_REQUESTS) if shard_of[pr_index] != shard_of[0]]
        wait_until(lambda: all(CompanionPages.objects.filter(pull_request=pull_requests[pr_index],
                                                             commit__sha=heads[pr_index][-1]).exists()
                               for pr_index in rendered_here), 60, "the companion pages", reap=False)
    finally:
        for host in [*hosts, rest]:
            host.terminate()
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
    # The killed host's run: reaped as its worker lapsed, long before the time limit, the worker named.
    assert "killed" in faults.mid_run and held, "the host was killed while it held a run"
    lapsed = VerificationRun.objects.filter(pull_request__in=pull_requests, message__contains=" stopped saying it is ")
    assert sorted(lapsed.values_list("pk", flat=True)) == sorted(held), list(lapsed.values_list("message", flat=True))
    for run in lapsed:
        assert run.status == "failed" and run.message.startswith(f"The worker {victim.name} stopped saying it is alive"), run.message
        assert run.finished_at - run.heartbeat_at < timedelta(seconds=settings.RECHECK_RUN_STALE_SECONDS), (
            "reaped before the time rule could have")
        # Queued again, or covered by a run requested meanwhile: either ends as its head's runs do.
        retry = VerificationRun.objects.get(pk=int(re.search(r" run (\d+)", run.message).group(1)))
        assert retry.status in ("done", "superseded"), retry.message
    superseded = VerificationRun.objects.filter(pull_request__in=pull_requests, status="superseded").count()
    assert superseded, "a burst faster than the workers supersedes the heads it overtook"

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
        pushed = {sha[:12] for sha in heads[pr_index][:BURSTS[0].count(pr_index)]}
        fetching = {name for name, lines in first.items()
                    if any(kind == "fetched" and slug == pull_request.repository.slug and set(commits.split(",")) & pushed
                           for kind, slug, commits in lines)}
        assert fetching <= {hosts[shard_of[pr_index]].name}, (
            f"{pull_request.repository.slug}'s heads were fetched by {fetching} in the first burst: {first}")
    fetches = Counter(kind for host in hosts for kind, _, _ in host.fetches())
    renders = {host.name: len(RENDERED.findall(host.log.read_text())) for host in [*hosts, rest]}
    assert all(renders[host.name] for host in hosts if host is not victim), f"rendered by shard: {renders}"

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
            assert verified[sha] == single[sha], f"{pull_request} at {sha[:8]}"
            compared += 1
    assert compared >= len(pull_requests)
    network = "each in a network namespace of its own" if networks else "sharing this machine's network"
    print(f"\n{sum(map(len, BURSTS))} pushes to {len(pull_requests)} PRs on {REPOSITORIES} repositories, {HOSTS} worker hosts "
          f"({network}), "
          f"pushes to verdicts in {elapsed:.1f} s: {compared} heads verified, each as one host verifies it, "
          f"{superseded} runs superseded; fetches {fetches['fetched']}, commits found cached {fetches['already held']}; "
          f"companion pages rendered by host {renders}; "
          f"faults while their host verified: {sorted(faults.mid_run)}")


def verdicts_by_commit(pull_request) -> dict[str, dict[int, str]]:
    verdicts: dict[str, dict[int, str]] = defaultdict(dict)
    rows = Verification.objects.filter(finding__pull_request=pull_request).values_list(
        "commit__sha", "finding__number", "verdict")
    for sha, number, verdict in rows:
        verdicts[sha][number] = verdict
    return verdicts
