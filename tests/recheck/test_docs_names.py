"""Every module, function or class the docs name (`findings.services.resolution.finding_resolve`)
exists, so a page never sends a reader to code that moved or was renamed."""
import importlib
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("core", "engine", "access", "reviews", "findings", "presentation", "forge", "web", "api", "backoffice",
            "cli", "recheck", "recheck_gate")
# `app_label.codename` of a permission, which reads like a dotted name but names no code.
PERMISSION = re.compile(r"^[a-z]+\.(view|change|add|delete|import|resolve|verify|resend)_[a-z_]+$")
NAME = re.compile(r"`((?:%s)(?:\.[A-Za-z_][A-Za-z0-9_]*)+)(?:\(\))?`" % "|".join(PACKAGES))


def resolves(dotted: str) -> bool:
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            target = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attribute in parts[cut:]:
            if not hasattr(target, attribute):
                return False
            target = getattr(target, attribute)
        return True
    return False


def test_every_name_the_docs_give_exists():
    pages = [*sorted((ROOT / "docs").rglob("*.md")), ROOT / "bench" / "README.md", ROOT / "README.md"]
    missing = []
    for page in pages:
        # A name may wrap at the end of a line inside its backticks.
        text = re.sub(r"\.\n\s*", ".", page.read_text())
        for dotted in sorted(set(NAME.findall(text))):
            if not PERMISSION.match(dotted) and not resolves(dotted):
                missing.append(f"{page.relative_to(ROOT)}: {dotted}")
    assert not missing, "The docs name code that does not exist:\n" + "\n".join(missing)
