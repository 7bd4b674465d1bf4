"""Every environment variable the settings read has a row in the README's configuration table."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_variable_the_settings_read_is_in_the_readme():
    settings_source = (ROOT / "recheck" / "settings.py").read_text()
    names = set(re.findall(r'env_(?:str|bool|int|list)\(\s*"([A-Z0-9_]+)"', settings_source))
    readme = (ROOT / "README.md").read_text()
    table = readme.split("## Configuration", 1)[1].split("\n## ", 1)[0]
    assert len(names) > 30
    missing = sorted(name for name in names if f"`{name}`" not in table)
    assert not missing, f"Add a row to the README's configuration table for: {', '.join(missing)}"
