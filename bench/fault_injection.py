"""Fault injection against a live stack on this machine: its own PostgreSQL and Redis (on free
ports, in a temporary directory) and a real Celery worker with beat, verifying a pull request
while the worker is killed (main process and child), Redis is restarted and PostgreSQL is
restarted. Prints, per fault, runs completed and results lost, duplicated, wrongly fixed and
stuck runs; all must be zero but completed, or the script exits 1.

    .venv/bin/python bench/fault_injection.py [--findings 3000] [--commits 6] [--faults kill,redis,postgres]

Time limits are shortened (hard limit 20 s, reap margin 5 s, reaping every 2 s) so that a dead
run is reaped in about half a minute rather than the production defaults' minutes.
"""
import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXED = ("likely_fixed", "partly_fixed")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for_port(port: int, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise SystemExit(f"nothing listens on port {port} after {timeout}s")


class Redis:
    def __init__(self, directory: Path):
        self.directory, self.port, self.process = directory, free_port(), None

    def start(self):
        # Append-only, as the compose file runs it: queued and unacknowledged messages survive.
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.directory),
             "--appendonly", "yes", "--save", ""],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        wait_for_port(self.port)

    def stop(self):
        if self.process:
            self.process.terminate()
            self.process.wait(timeout=30)
            self.process = None


class Postgres:
    def __init__(self, directory: Path):
        self.directory, self.port = directory, free_port()
        self.as_postgres = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        if os.geteuid() == 0:
            shutil.chown(directory, "postgres")
        self.data = directory / "data"

    def run(self, *args: str):
        subprocess.run([*self.as_postgres, *args], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def init(self):
        self.run("initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust")

    def start(self):
        self.run("pg_ctl", "-D", str(self.data), "-l", str(self.directory / "log"), "-w", "-o",
                 f"-p {self.port} -k {self.directory} -c listen_addresses=127.0.0.1", "start")

    def restart(self):
        self.run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "restart")

    def stop(self):
        subprocess.run([*self.as_postgres, "pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


class Worker:
    def __init__(self, directory: Path, env: dict):
        self.directory, self.env, self.process = directory, env, None

    def start(self):
        self.process = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "recheck", "worker", "-B", "-s", str(self.directory / "beat"),
             "--pool", "prefork", "--concurrency", "1", "--loglevel", "WARNING"],
            cwd=ROOT, env=self.env, start_new_session=True,
            stdout=open(self.directory / "worker.log", "ab"), stderr=subprocess.STDOUT,
        )

    def kill(self):
        """SIGKILL to the whole process group: the main process, beat and the pool's child."""
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()
        self.process = None

    def stop(self):
        if self.process:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill()
            self.process = None


def build_repository(path: Path, *, files: int, commits: int) -> list[str]:
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("GIT_")},
           "GIT_AUTHOR_NAME": "Bench", "GIT_AUTHOR_EMAIL": "bench@example.com",
           "GIT_COMMITTER_NAME": "Bench", "GIT_COMMITTER_EMAIL": "bench@example.com",
           "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}
    git = lambda *args: subprocess.run(["git", *args], cwd=path, env=env, check=True, capture_output=True)  # noqa: E731
    path.mkdir()
    git("init", "--quiet", "--initial-branch=main")
    for number in range(files):
        (path / f"src/module_{number}.py").parent.mkdir(exist_ok=True)
        (path / f"src/module_{number}.py").write_text("".join(f"value_{number}_{line} = {line}\n" for line in range(200)))
    shas = []
    for index in range(commits):
        # Each commit touches an unrelated file: every snippet stays present at every commit.
        (path / "CHANGES").write_text(f"change {index}\n")
        git("add", "-A")
        git("commit", "--quiet", "-m", f"change {index}")
        shas.append(git("rev-parse", "HEAD").stdout.decode().strip())
    return shas


def record_review(clone_url: str, shas: list[str], *, findings: int, files: int):
    from findings.models import Evidence, Finding
    from reviews.models import Commit, PinnedCommit, PullRequest, Repository

    repository = Repository.objects.create(slug="acme/faults", clone_url=clone_url)
    pull_request = PullRequest.objects.create(repository=repository, number=1, title="Under faults")
    commits = [Commit.objects.create(repository=repository, sha=sha, resolved=True) for sha in shas]
    for index, commit in enumerate(commits):
        PinnedCommit.objects.create(pull_request=pull_request, commit=commit, role="reviewed" if index == 0 else "rebased")
    rows = Finding.objects.bulk_create(
        Finding(pull_request=pull_request, number=n + 1, kind="blocker", title=f"Finding {n + 1}") for n in range(findings)
    )
    Evidence.objects.bulk_create(
        Evidence(finding=finding, position=0, kind="snippet", commit=commits[0], path=f"src/module_{n % files}.py",
                 start_line=n % 190 + 1, end_line=n % 190 + 2,
                 text=f"value_{n % files}_{n % 190} = {n % 190}\nvalue_{n % files}_{n % 190 + 1} = {n % 190 + 1}\n")
        for n, finding in enumerate(rows)
    )
    return pull_request


def wait_until(predicate, timeout: float, what: str) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if predicate():
                return True
        except Exception:  # the database restarting under the check itself
            from django.db import connections

            connections.close_all()
        time.sleep(0.2)
    print(f"  gave up waiting for {what} after {timeout:.0f}s")
    return False


def measure(pull_request, run, started: float) -> dict:
    from django.db.models import Count

    from findings.models import EvidenceResult, Finding, Verification, VerificationRun

    chain = [run]
    while True:
        retry = VerificationRun.objects.filter(retry_of=chain[-1]).first()
        if retry is None:
            break
        chain.append(retry)
    findings = Finding.objects.filter(pull_request=pull_request).count()
    commits = pull_request.pins.count()
    verifications = Verification.objects.filter(finding__pull_request=pull_request)
    duplicated = (
        verifications.values("finding", "commit").annotate(n=Count("id")).filter(n__gt=1).count()
        + EvidenceResult.objects.filter(verification__finding__pull_request=pull_request)
        .values("verification", "evidence").annotate(n=Count("id")).filter(n__gt=1).count()
    )
    return {
        "runs": " -> ".join(f"{r.pk}:{r.status}" for r in chain),
        "completed": int(chain[-1].status == "done"),
        "lost": findings * commits - verifications.filter(verdict="present").count() - verifications.filter(verdict__in=FIXED).count(),
        "duplicated": duplicated,
        "wrongly_fixed": verifications.filter(verdict__in=FIXED).count(),
        "stuck": VerificationRun.objects.filter(pull_request=pull_request).active().count(),
        "seconds": round(time.monotonic() - started, 1),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--findings", type=int, default=3000)
    parser.add_argument("--commits", type=int, default=6)
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--faults", default="kill,redis,postgres")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="recheck-faults-"))
    os.chmod(work, 0o755)
    pg_dir = work / "pg"
    pg_dir.mkdir()
    redis = Redis(work)
    postgres = Postgres(pg_dir)
    postgres.init()
    postgres.start()
    redis.start()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "recheck.settings",
        "SECRET_KEY": "fault-injection-only",
        "DATABASE_URL": f"postgres://postgres@127.0.0.1:{postgres.port}/postgres",
        "DATABASE_CONN_MAX_AGE": "0",
        "CELERY_BROKER_URL": f"redis://127.0.0.1:{redis.port}/0",
        "CELERY_RESULT_BACKEND": f"redis://127.0.0.1:{redis.port}/1",
        "RECHECK_MIRROR_ROOT": str(work / "mirrors"),
        "RECHECK_ALLOW_LOCAL_REPOSITORIES": "1",
        "CELERY_TASK_SOFT_TIME_LIMIT": "15",
        "CELERY_TASK_TIME_LIMIT": "20",
        "CELERY_VISIBILITY_TIMEOUT": "30",
        "RECHECK_RUN_REAP_MARGIN_SECONDS": "5",
        "RECHECK_REAP_INTERVAL_SECONDS": "2",
        "LOG_LEVEL": "WARNING",
    }
    os.environ.update(env)
    sys.path.insert(0, str(ROOT))
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)
    from django.db import connections

    from findings.models import VerificationRun
    from findings.services.runs import verification_run_request

    shas = build_repository(work / "upstream", files=args.files, commits=args.commits)
    worker = Worker(work, env)
    worker.start()
    results = {}
    try:
        for fault in args.faults.split(","):
            from findings.models import Finding

            Finding.objects.all().delete()
            from reviews.models import Repository

            Repository.objects.all().delete()
            pull_request = record_review(str(work / "upstream"), shas, findings=args.findings, files=args.files)
            print(f"{fault}: verifying {args.findings} findings x {args.commits} commits")
            started = time.monotonic()
            run = verification_run_request(pull_request=pull_request)
            wait_until(lambda run=run: VerificationRun.objects.get(pk=run.pk).done > 0, 120, "the run to start")
            at_fault = VerificationRun.objects.get(pk=run.pk)
            print(f"  fault at {at_fault.done:,} of {at_fault.total:,} checks ({at_fault.status})")
            if fault == "kill":
                worker.kill()
                print("  worker killed (main process, beat and child); starting a new one")
                worker.start()
            elif fault == "redis":
                redis.stop()
                time.sleep(2)
                redis.start()
                print("  Redis restarted")
            elif fault == "postgres":
                connections.close_all()
                postgres.restart()
                connections.close_all()
                print("  PostgreSQL restarted")

            def ended(run=run):
                chain_end = VerificationRun.objects.get(pk=run.pk)
                while True:
                    retry = VerificationRun.objects.filter(retry_of=chain_end).first()
                    if retry is None:
                        return not chain_end.is_active
                    chain_end = retry

            wait_until(ended, 300, "the run to end")
            results[fault] = measure(pull_request, VerificationRun.objects.get(pk=run.pk), started)
    finally:
        worker.stop()
        redis.stop()
        postgres.stop()

    columns = ["completed", "lost", "duplicated", "wrongly_fixed", "stuck", "seconds"]
    print(f"\n{'fault':10} " + " ".join(f"{name:>13}" for name in columns) + "  runs")
    for fault, row in results.items():
        print(f"{fault:10} " + " ".join(f"{row[name]:>13}" for name in columns) + f"  {row['runs']}")
    healthy = all(row["completed"] == 1 and not (row["lost"] or row["duplicated"] or row["wrongly_fixed"] or row["stuck"])
                  for row in results.values())
    print("\nall runs completed, nothing lost, duplicated, wrongly fixed or stuck" if healthy else "\nFAULTS FOUND")
    shutil.rmtree(work, ignore_errors=True)
    return 0 if healthy else 1


if __name__ == "__main__":
    sys.exit(main())
