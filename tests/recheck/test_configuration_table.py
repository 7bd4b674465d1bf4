"""Every environment variable the settings read has a row in the configuration table of the
documentation (docs/operations/configuration.md)."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CONFIGURATION_PAGE = ROOT / "docs" / "operations" / "configuration.md"


def test_every_variable_the_settings_read_is_in_the_configuration_table():
    settings_source = "\n".join(path.read_text() for path in sorted((ROOT / "recheck" / "settings").glob("*.py")))
    names = set(re.findall(r'env_(?:str|bool|int|list)\(\s*"([A-Z0-9_]+)"', settings_source))
    table = "\n".join(line for line in CONFIGURATION_PAGE.read_text().splitlines() if line.startswith("|"))
    assert len(names) > 30
    missing = sorted(name for name in names if f"`{name}`" not in table)
    assert not missing, f"Add a row to the table in docs/operations/configuration.md for: {', '.join(missing)}"
