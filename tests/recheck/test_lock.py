"""requirements.lock (what scripts/bootstrap installs) pins, with hashes, every dependency that
pyproject.toml declares: a dependency added without refreshing the lock (scripts/lock) fails here."""
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _name(requirement: str) -> str:
    return re.split(r"[\s<>=!~;\[]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def locked() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "requirements.lock").read_text().splitlines():
        match = re.match(r"^([A-Za-z0-9._-]+)==(\S+)", line)
        if match:
            pins[match.group(1).lower().replace("_", "-")] = match.group(2)
    return pins


def test_every_declared_dependency_is_locked_at_an_exact_version():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = [*project["dependencies"], *project["optional-dependencies"]["test"]]
    pins = locked()
    missing = [requirement for requirement in declared if _name(requirement) not in pins]
    assert not missing, f"Not in requirements.lock: {missing}. Run scripts/lock and commit the lock."


def test_every_locked_version_carries_a_hash():
    text = (ROOT / "requirements.lock").read_text()
    entries = re.split(r"\n(?=[A-Za-z0-9._-]+==)", text.split("\n", 6)[-1])
    pinned = [entry for entry in entries if re.match(r"^[A-Za-z0-9._-]+==", entry)]
    assert pinned and all("--hash=sha256:" in entry for entry in pinned)
