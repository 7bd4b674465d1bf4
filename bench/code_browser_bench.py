"""Opening a 2,000-line file in the code browser, against highlighting the same file with bare
pygments in the same run.

    .venv/bin/python bench/code_browser_bench.py [--lines 2000] [--pairs 7] [--repeat 5]

Builds a git repository with a generated Python file of --lines lines at a base and a reviewed
commit, a pull request pinning both, and its mirror (a throwaway SQLite database and mirror root;
DATABASE_URL for another database). The subject is the whole page through Django's test client:
the middleware, loading the PR and its pins, reading the tree and the blob from the mirror (the
cat-file process, the comparison with the base), highlighting, the template. The floor is what any
highlighted page of that file costs at least: pygments' own `highlight()` of the text with its line
number table and a linked anchor per line (`linenos="table", anchorlinenos=True, lineanchors="L"`).
The two alternate, pair after pair; each figure is the mean of --repeat runs."""
import argparse
import os
import subprocess
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("ALLOWED_HOSTS", "testserver")
os.environ["RECHECK_PUBLIC_READ"] = "1"
os.environ["DEBUG"] = "0"  # DEBUG records every query, which is not what production pays for
warnings.filterwarnings("ignore", message="No directory at")  # WhiteNoise: no collectstatic here
from _django import setup  # noqa: E402
from _interleave import interleave, print_pairs  # noqa: E402


def source(lines: int) -> str:
    """Python that looks like a real module: functions with docstrings, comments, strings, maths."""
    out = ['"""A generated module for the code browser benchmark."""', "import math", ""]
    number = 0
    while len(out) < lines:
        number += 1
        out += [
            f"def compute_{number}(values, *, scale={number}.5):",
            f'    """Scale the values of batch {number} and sum their squares."""',
            "    total = 0.0",
            "    for index, value in enumerate(values):  # walk every sample",
            f"        total += math.sqrt(abs(value * scale)) if index % {number % 7 + 2} else value ** 2",
            f"    return {{'batch': {number}, 'total': total, 'label': \"batch-{number}\"}}",
            "",
        ]
    return "\n".join(out[:lines]) + "\n"


def git(path: Path, *args: str) -> str:
    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL="/dev/null", GIT_AUTHOR_NAME="Bench",
               GIT_AUTHOR_EMAIL="bench@example.com", GIT_COMMITTER_NAME="Bench", GIT_COMMITTER_EMAIL="bench@example.com")
    return subprocess.run(["git", *args], cwd=path, env=env, capture_output=True, text=True, check=True).stdout.strip()


def build_repository(path: Path, text: str) -> tuple[str, str]:
    path.mkdir()
    git(path, "init", "--quiet", "--initial-branch=main")
    (path / "src").mkdir()
    for n in range(50):
        (path / "src" / f"module_{n}.py").write_text(f"VALUE = {n}\n")
    (path / "src" / "compute.py").write_text(text.replace("total = 0.0", "total = 0", 1))
    git(path, "add", "--all")
    git(path, "commit", "--quiet", "-m", "base")
    base = git(path, "rev-parse", "HEAD")
    (path / "src" / "compute.py").write_text(text)
    git(path, "add", "--all")
    git(path, "commit", "--quiet", "-m", "reviewed")
    return base, git(path, "rev-parse", "HEAD")


def mean_ms(action, repeat: int) -> float:
    started = time.perf_counter()
    for _ in range(repeat):
        action()
    return 1000 * (time.perf_counter() - started) / repeat


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lines", type=int, default=2000)
    parser.add_argument("--pairs", type=int, default=7)
    parser.add_argument("--repeat", type=int, default=5)
    options = parser.parse_args()

    root = setup("code")
    from django.conf import settings
    from django.test import Client
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import PythonLexer

    from reviews.mirrors import repository_fetch
    from reviews.models import Commit, PinnedCommit, PullRequest, Repository

    # The page's {% static %} tags need no collected manifest here.
    settings.STORAGES["staticfiles"]["BACKEND"] = "django.contrib.staticfiles.storage.StaticFilesStorage"

    text = source(options.lines)
    base, reviewed = build_repository(root / "repo", text)
    repository = Repository.objects.create(slug="bench/code", clone_url=str(root / "repo"))
    pull_request = PullRequest.objects.create(repository=repository, number=1, title="Bench")
    for role, sha in (("base", base), ("reviewed", reviewed)):
        commit = Commit.objects.create(repository=repository, sha=sha, resolved=True)
        PinnedCommit.objects.create(pull_request=pull_request, commit=commit, role=role)
    repository_fetch(repository=repository)

    client = Client()
    url = f"{pull_request.get_absolute_url()}code/{reviewed}/src/compute.py"
    response = client.get(url)  # warm lazy imports and the template cache, and check the page
    assert response.status_code == 200, (response.status_code, response.content[:500])
    assert response.content.count(b'<tr id="L') == options.lines
    formatter = HtmlFormatter(linenos="table", anchorlinenos=True, lineanchors="L")
    lexer = PythonLexer(stripnl=False, ensurenl=True)
    highlight(text, lexer, formatter)

    def floor() -> float:
        return mean_ms(lambda: highlight(text, lexer, formatter), options.repeat)

    def subject() -> float:
        return mean_ms(lambda: client.get(url), options.repeat)

    result = interleave(f"{options.lines:,}-line file page vs bare pygments", options.pairs, floor, subject)
    print(f"file: {len(text.encode()):,} bytes, {options.lines:,} lines; page: {len(response.content):,} bytes; "
          f"database: {settings.DATABASES['default']['ENGINE'].rsplit('.', 1)[-1]}")
    print_pairs(result, unit=" ms", fmt="{:.1f}")


if __name__ == "__main__":
    main()
