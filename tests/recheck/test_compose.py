"""There is no Docker engine to run the compose file here, so these tests read it and check that
it agrees with the settings and the code."""
import importlib
import re
import shlex
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
SERVICES = COMPOSE["services"]
WORKERS = [name for name, service in SERVICES.items() if service.get("command", [])[3:4] == ["worker"]]
APP_SERVICES = ["migrate", "web", *WORKERS, "beat"]


def command_of(service: str) -> list[str]:
    command = SERVICES[service]["command"]
    return command if isinstance(command, list) else shlex.split(command)


def test_it_has_the_production_services():
    assert {"postgres", "redis", "web", "beat"} <= set(SERVICES) and WORKERS


def queues_of(service: str) -> set[str]:
    command = command_of(service)
    return set(command[command.index("-Q") + 1].split(","))


def test_each_kind_of_work_has_a_worker_of_its_own():
    from recheck.routing import LEGACY, QUEUE_OF_TASK, SHARDED

    consumed = {service: queues_of(service) for service in WORKERS}
    for queue in set(QUEUE_OF_TASK.values()) - set(SHARDED):
        assert [service for service, queues in consumed.items() if queue in queues] == [queue], queue
    for kind in SHARDED:
        # Its shards' workers, and they do that kind of work only.
        serving = [service for service, queues in consumed.items() if kind in queues]
        assert serving and all(service.startswith(f"{kind}-") for service in serving), (kind, serving)
        assert all({queue.split(".")[0] for queue in consumed[service]} == {kind} for service in serving), kind
    assert LEGACY in consumed["maintenance"], "what a deployment before the queues left must still be taken"


@pytest.mark.parametrize("kind", ["verify", "render"])
def test_every_shard_of_the_work_that_reads_mirrors_has_a_worker_that_also_takes_the_plain_queue(kind):
    from recheck.routing import SHARDED, shard_queue

    assert kind in SHARDED
    shards = int(SERVICES["web"]["environment"]["RECHECK_VERIFY_SHARDS"])
    serving = [queues_of(service) for service in WORKERS if kind in queues_of(service)]
    assert shards > 1 and len(serving) == shards
    assert sorted(queues - {kind} for queues in serving) == [{shard_queue(n, kind)} for n in range(shards)]


@pytest.mark.parametrize("service", APP_SERVICES)
def test_app_services_use_postgres_redis_and_a_secret_from_the_environment(service):
    env = SERVICES[service]["environment"]
    assert env["DATABASE_URL"].startswith("postgres://") and "@postgres:5432/" in env["DATABASE_URL"]
    assert env["CELERY_BROKER_URL"].startswith("redis://redis:6379")
    assert env["SECRET_KEY"].startswith("${SECRET_KEY:?"), "the secret must come from the environment"
    assert env["DEBUG"] == "0"
    assert env["RECHECK_ALLOW_LOCAL_REPOSITORIES"] == "0"


def test_every_variable_given_to_the_app_is_read_by_the_settings():
    settings_source = "\n".join(path.read_text() for path in sorted((ROOT / "recheck" / "settings").glob("*.py")))
    for name in SERVICES["web"]["environment"]:
        assert f'"{name}"' in settings_source, f"{name} is set in compose but never read"


def test_every_variable_the_app_gets_is_documented_in_the_configuration_page():
    configuration = (ROOT / "docs" / "operations" / "configuration.md").read_text()
    for name in SERVICES["web"]["environment"]:
        assert f"`{name}`" in configuration, f"{name} is missing from docs/operations/configuration.md"


@pytest.mark.parametrize("service", ["web", *WORKERS, "beat", "migrate"])
def test_app_services_wait_for_healthy_dependencies(service):
    depends = SERVICES[service]["depends_on"]
    assert depends["redis"]["condition"] == "service_healthy"
    if service != "beat":
        assert depends["postgres"]["condition"] == "service_healthy"
    if service != "migrate":
        assert depends["migrate"]["condition"] == "service_completed_successfully"


@pytest.mark.parametrize("service", ["postgres", "redis", "web", *WORKERS])
def test_long_running_services_have_healthchecks(service):
    assert SERVICES[service]["healthcheck"]["test"]


def test_web_runs_gunicorn_on_the_real_wsgi_application():
    command = command_of("web")
    assert command[0] == "gunicorn"
    module, attribute = command[1].split(":")
    assert callable(getattr(importlib.import_module(module), attribute))


def test_the_web_healthcheck_calls_an_existing_url(client, db):
    url = re.search(r"http://127\.0\.0\.1:8000(/\S*?)'", " ".join(SERVICES["web"]["healthcheck"]["test"])).group(1)
    assert client.get(url).json() == {"status": "ok"}


@pytest.mark.parametrize(("service", "subcommand"), [*((worker, "worker") for worker in WORKERS), ("beat", "beat")])
def test_celery_services_run_the_project_app(service, subcommand):
    command = command_of(service)
    assert command[:3] == ["celery", "-A", "recheck"] and command[3] == subcommand
    from recheck.celery import app

    assert app.main == "recheck"


def test_named_volumes_are_declared():
    used = {
        volume.split(":")[0]
        for service in SERVICES.values()
        for volume in service.get("volumes", [])
        if not volume.startswith((".", "/"))
    }
    assert used <= set(COMPOSE["volumes"])


def test_no_volume_is_shared_between_services():
    """Mirrors are each host's cache: nothing correct may rest on two services seeing one directory."""
    mounted = [
        volume.split(":")[0]
        for service in SERVICES.values()
        for volume in service.get("volumes", [])
    ]
    assert len(mounted) == len(set(mounted)), mounted


def test_the_web_and_each_worker_that_reads_mirrors_keep_their_mirror_cache_in_a_volume_of_their_own():
    mirror_root = SERVICES["web"]["environment"]["RECHECK_MIRROR_ROOT"]
    from recheck.routing import SHARDED

    readers = [worker for worker in WORKERS if queues_of(worker) & set(SHARDED)]
    assert {worker.split("-")[0] for worker in readers} == set(SHARDED)
    for service in ["web", *readers]:
        assert [volume for volume in SERVICES[service]["volumes"] if volume.endswith(f":{mirror_root}")], service


def test_the_image_prepares_the_mirror_volume_for_its_user():
    dockerfile = (ROOT / "Dockerfile").read_text()
    mirror_root = SERVICES["verify-0"]["environment"]["RECHECK_MIRROR_ROOT"]
    assert f"mkdir -p {mirror_root} && chown recheck {mirror_root}" in dockerfile
    assert "USER recheck" in dockerfile
    assert any(volume.endswith(f":{mirror_root}") for volume in SERVICES["verify-0"]["volumes"])


def test_a_full_cache_gives_way_to_the_broker():
    """Cached pages and answers share Redis with the queued tasks: when Redis is full it must
    drop what expires (every cache entry has a timeout), never a task (which has none)."""
    command = command_of("redis")
    options = dict(zip(command[1::2], command[2::2], strict=False))
    assert options["--maxmemory-policy"] == "volatile-lru"
    assert options["--maxmemory"].startswith("${REDIS_MAXMEMORY:-")
    from django.conf import settings

    from api.listcache import LIST_CACHE_SECONDS

    assert LIST_CACHE_SECONDS and settings.CACHES["default"].get("TIMEOUT", 300) is not None


def test_the_image_compiles_the_project_once_since_it_writes_no_bytecode_at_run_time():
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert "PYTHONDONTWRITEBYTECODE=1" in dockerfile
    assert "python -m compileall -q" in dockerfile and "/app" in dockerfile.split("compileall", 1)[1].split("\n")[0]
