"""The sample's history as files: what each of its commits (base, reviewed, upstream, rebased,
head) holds, with its parent, date and message, the snippets the review quotes and where each sits
at each pinned commit, and the branches that point at the commits."""
from cli.demo.toolkit_repository import TOOLKIT_FEATURE, TOOLKIT_MAIN

HEADER = "# SPDX-License-Identifier: Apache-2.0\n# Copyright the sample-loader authors.\n\n"

TOLERANCE_SNIPPET = (
    "# 0 keeps the stream going through any number of bad records.\n"
    "MAX_CONSECUTIVE_FAILURES = 0\n"
)
TOLERANCE_FIXED = (
    "# Stop after this many bad records in a row: a broken file should fail the run.\n"
    "MAX_CONSECUTIVE_FAILURES = 100\n"
)
ZSTANDARD_SNIPPET = (
    "    import zstandard\n"
    "\n"
    '    with open(path, "rb") as handle:\n'
    "        reader = zstandard.ZstdDecompressor().stream_reader(handle)\n"
    '        return reader.read().decode("utf-8")\n'
)
GUARD_SNIPPET = (
    "    if len(markers) < 2:\n"
    '        raise ValueError("a transcript needs at least one user and one assistant turn")\n'
)
SCRATCH_SNIPPET = (
    "  path: /home/jdoe/datasets/chat-v3-final-final.jsonl\n"
    "log_dir: /home/jdoe/runs/chat-v3-debug-0113\n"
)

# (path, start line, end line) of each snippet at each pinned commit.
SNIPPET_LINES = {
    "tolerance": {
        "reviewed": ("src/sampleloader/stream.py", 4, 5),
        "rebased": ("src/sampleloader/stream.py", 7, 8),
        "head": None,
    },
    "zstandard": {
        "reviewed": ("src/sampleloader/stream.py", 9, 13),
        "rebased": ("src/sampleloader/stream.py", 13, 17),
        "head": ("src/sampleloader/stream.py", 13, 17),
    },
    "guard": {
        "reviewed": ("src/sampleloader/turns.py", 7, 8),
        "rebased": ("src/sampleloader/conversation.py", 7, 8),
        "head": ("src/sampleloader/conversation.py", 7, 8),
    },
    "scratch": {
        "reviewed": ("configs/jdoe-scratch.yaml", 3, 4),
        "rebased": ("configs/jdoe-scratch.yaml", 3, 4),
        "head": None,
    },
}

_README = """# sample-loader

A tiny loader for JSONL training data.

This repository is sample data that Recheck builds for its demo: the project, its people and its
history are made up.
"""

_PYPROJECT = """[project]
name = "sample-loader"
version = "0.1.0"
requires-python = ">=3.11"
dependencies = [
    "pyyaml>=6",
]

[tool.pytest.ini_options]
pythonpath = ["src"]
testpaths = ["tests"]

[tool.ruff.lint]
# The defaults, and no print calls in the package.
extend-select = ["T20"]
"""

# Relative, as many projects write it: resolved against the sample's own URL, it is the toolkit
# built beside it, and the sample's SHAs do not depend on where this machine keeps the demo.
_GITMODULES = """[submodule "vendor/toolkit"]
\tpath = vendor/toolkit
\turl = ../toolkit.git
"""

_READER = '''"""Reading JSONL records one at a time."""
import json

# Stop after this many bad records in a row: a broken file should fail the run.
MAX_CONSECUTIVE_FAILURES = 100


def read_records(lines):
    failures = 0
    for line in lines:
        try:
            yield json.loads(line)
            failures = 0
        except json.JSONDecodeError:
            failures += 1
            if failures > MAX_CONSECUTIVE_FAILURES:
                raise
'''

_INIT = '"""sample-loader: a tiny JSONL data loader."""\n'

_TEST_READER = '''from sampleloader.reader import read_records


def test_it_reads_records():
    assert list(read_records(['{"a": 1}'])) == [{"a": 1}]
'''

# On main before the PR: every module that counts bad records in a row stops somewhere. The PR's
# stream.py sets 0 (never) and fails it; its last push sets 100 and passes.
_TEST_LIMITS = '''import importlib
import pkgutil

import sampleloader


def test_every_reader_gives_up_on_a_broken_file():
    for module in pkgutil.iter_modules(sampleloader.__path__):
        loaded = importlib.import_module(f"sampleloader.{module.name}")
        limit = getattr(loaded, "MAX_CONSECUTIVE_FAILURES", None)
        assert limit is None or limit > 0, f"sampleloader.{module.name} never gives up on bad records"
'''

_DEFAULT_CONFIG = """data:
  path: data/train.jsonl
  batch_size: 8
"""

_SCRATCH_CONFIG = "# my scratch config, do not merge\ndata:\n" + SCRATCH_SNIPPET + "debug: true\n"


def _stream(tolerance: str, *, wrapped: bool) -> str:
    if wrapped:
        opening = (
            "def open_compressed(path):\n"
            '    if path.endswith(".zst"):\n'
            + "".join(f"    {line}" if line.strip() else line for line in ZSTANDARD_SNIPPET.splitlines(keepends=True))
            + "    with open(path, encoding=\"utf-8\") as handle:\n"
            "        return handle.read()\n"
        )
    else:
        opening = "def open_compressed(path):\n" + ZSTANDARD_SNIPPET
    return (
        '"""Streaming chat transcripts from (compressed) JSONL, one record at a time."""\n'
        "import json\n"
        "\n"
        + tolerance
        + "\n"
        "\n"
        + opening
        + "\n"
        "\n"
        "def stream_records(text):\n"
        "    failures = 0\n"
        "    for line in text.splitlines():\n"
        "        try:\n"
        "            yield json.loads(line)\n"
        "        except json.JSONDecodeError as error:\n"
        "            failures += 1\n"
        '            print(f"skipping a bad record ({failures}/{MAX_CONSECUTIVE_FAILURES}): {error}")\n'
        "            if MAX_CONSECUTIVE_FAILURES and failures > MAX_CONSECUTIVE_FAILURES:\n"
        "                raise\n"
    )


_TURNS = (
    '"""Splitting a transcript into (user, assistant) pairs."""\n'
    'TURN_MARKER = "<|turn|>"\n'
    "\n"
    "\n"
    "def turn_pairs(markers, text):\n"
    "    # markers: where each user or assistant turn starts\n"
    + GUARD_SNIPPET
    + "    pairs = []\n"
    "    for index in range(0, len(markers), 2):\n"
    "        pairs.append(text[markers[index] : markers[index + 1]])\n"
    "    return pairs\n"
)


def snapshots() -> list[tuple[str, str | None, str, str, dict[str, str], dict[str, str]]]:
    """(name, parent name, date, message, files, gitlinks) for each commit, oldest first."""
    base_files = {
        "README.md": _README,
        "pyproject.toml": _PYPROJECT,
        ".gitmodules": _GITMODULES,
        "configs/default.yaml": _DEFAULT_CONFIG,
        "src/sampleloader/__init__.py": _INIT,
        "src/sampleloader/reader.py": _READER,
        "tests/test_reader.py": _TEST_READER,
        "tests/test_limits.py": _TEST_LIMITS,
    }
    pr_files = {
        "src/sampleloader/stream.py": _stream(TOLERANCE_SNIPPET, wrapped=False),
        "src/sampleloader/turns.py": _TURNS,
        "configs/jdoe-scratch.yaml": _SCRATCH_CONFIG,
    }
    upstream_files = {
        **base_files,
        "src/sampleloader/__init__.py": HEADER + _INIT,
        "src/sampleloader/reader.py": HEADER + _READER,
    }
    rebased_files = {
        **upstream_files,
        "src/sampleloader/stream.py": HEADER + _stream(TOLERANCE_SNIPPET, wrapped=True),
        "src/sampleloader/conversation.py": _TURNS,
        "configs/jdoe-scratch.yaml": _SCRATCH_CONFIG,
    }
    head_files = {
        **{path: text for path, text in rebased_files.items() if path != "configs/jdoe-scratch.yaml"},
        "src/sampleloader/stream.py": HEADER + _stream(TOLERANCE_FIXED, wrapped=True),
    }
    main_pin = {"vendor/toolkit": TOOLKIT_MAIN}
    pr_pin = {"vendor/toolkit": TOOLKIT_FEATURE}
    return [
        ("base", None, "2025-01-06T09:00:00Z", "Read JSONL records one at a time", base_files, main_pin),
        ("reviewed", "base", "2025-01-08T14:30:00Z", "Stream chat transcripts from compressed JSONL",
         {**base_files, **pr_files}, pr_pin),
        ("upstream", "base", "2025-01-10T11:00:00Z", "Add the licence header to every Python file",
         upstream_files, main_pin),
        ("rebased", "upstream", "2025-01-13T16:45:00Z",
         "Stream chat transcripts from compressed JSONL\n\nRebased on main; turns.py is now conversation.py.",
         rebased_files, pr_pin),
        ("head", "rebased", "2025-01-15T10:15:00Z", "Stop after 100 bad records; drop my scratch config",
         head_files, pr_pin),
    ]


BRANCHES = {"main": "upstream", "pr-1": "head", "pr-1-before-rebase": "reviewed"}
