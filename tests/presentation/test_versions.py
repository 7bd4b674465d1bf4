"""The render version moves when a template changes, and only then stays put."""
from pathlib import Path

from presentation import versions


def test_the_render_version_moves_when_a_template_changes(settings, tmp_path):
    (tmp_path / "page.html").write_text("<p>{{ one }}</p>")
    settings.TEMPLATES = [{**settings.TEMPLATES[0], "DIRS": [tmp_path]}]
    versions.render_version.cache_clear()
    try:
        before = versions.render_version()
        versions.render_version.cache_clear()
        assert versions.render_version() == before  # worked out again, the same
        Path(tmp_path / "page.html").write_text("<p>{{ two }}</p>")
        versions.render_version.cache_clear()
        assert versions.render_version() != before
    finally:
        versions.render_version.cache_clear()
