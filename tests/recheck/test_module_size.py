"""No module of the project is over 500 lines outside its migrations: a module that grows past
that is split by what its parts do."""
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ["core", "engine", "access", "reviews", "findings", "presentation", "forge", "web", "api", "backoffice",
            "cli", "recheck", "recheck_gate"]
LIMIT = 500


def test_no_module_is_over_500_lines():
    long = {
        str(path.relative_to(ROOT)): lines
        for package in PACKAGES
        for path in (ROOT / package).rglob("*.py")
        if "migrations" not in path.parts and (lines := len(path.read_text().splitlines())) > LIMIT
    }
    assert long == {}, f"split these by what their parts do: {long}"
