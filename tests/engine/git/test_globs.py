import pytest

from core.errors import UnsafePath
from engine.git import glob_matcher, is_glob, match_paths

PATHS = [
    "README.md",
    "setup.py",
    "src/app.py",
    "src/app.pyc",
    "src/pkg/models.py",
    "src/pkg/deep/er/views.py",
    "src/.hidden.py",
    "tests/test_app.py",
    "docs/a[1].md",
]


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("src/**/*.py", ["src/app.py", "src/pkg/models.py", "src/pkg/deep/er/views.py", "src/.hidden.py"]),
        ("src/*.py", ["src/app.py", "src/.hidden.py"]),
        ("*.py", ["setup.py"]),
        ("**/*.py", ["setup.py", "src/app.py", "src/pkg/models.py", "src/pkg/deep/er/views.py",
                     "src/.hidden.py", "tests/test_app.py"]),
        ("src/**", ["src/app.py", "src/app.pyc", "src/pkg/models.py", "src/pkg/deep/er/views.py", "src/.hidden.py"]),
        ("src/app.py?", ["src/app.pyc"]),
        ("tests/test_[a-z]*.py", ["tests/test_app.py"]),
        ("src/[!a]*.py", ["src/.hidden.py"]),
        ("**/models.py", ["src/pkg/models.py"]),
        ("docs/a[[]1].md", ["docs/a[1].md"]),
        ("README.md", ["README.md"]),
    ],
)
def test_globs_match_like_gitignore_patterns(pattern, expected):
    assert match_paths(pattern, PATHS) == expected


def test_a_star_never_crosses_a_directory():
    assert not glob_matcher("src/*")("src/pkg/models.py")


def test_it_tells_globs_from_plain_paths():
    assert is_glob("src/**/*.py") and is_glob("a?.py") and is_glob("a[12].py")
    assert not is_glob("src/app.py")


def test_an_escaping_glob_is_refused():
    with pytest.raises(UnsafePath):
        glob_matcher("../*.py")
