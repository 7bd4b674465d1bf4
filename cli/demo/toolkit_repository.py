"""The sample's submodule: the toolkit, a second bare repository built beside the sample with a
main line and a feature branch, so the pin the sample's PR moves has a real history."""
from pathlib import Path

# The toolkit submodule is a real repository built beside the sample (see `toolkit_repository_build`):
#
#     t1 ─ t2 ─ t3 ─ t4 ─ t5 ─ t6        main
#           └─ f1 ─ f2 ─ f3              feature/streaming
#
# Main pins t4; the PR pins f3, 3 commits ahead of the toolkit's main and 4 behind it. Moving the
# pin from t4 to f3 adds f1..f3 and drops t3 and t4, so it is not a fast-forward.
TOOLKIT_MAIN_LINE = (
    "Start the toolkit: a JSONL record type",
    "Parse records lazily",
    "Validate record fields before yielding them",
    "Fix the record validator for empty turns",
    "Speed up field validation",
    "Document the record type",
)
TOOLKIT_FEATURE_LINE = (
    "Streaming reader for compressed input (work in progress)",
    "Streaming reader: handle zstandard frames",
    "Streaming reader: expose a chunk size knob",
)
TOOLKIT_FORK = 2  # the feature branch forks after t2
TOOLKIT_PINNED = 4  # main pins t4
TOOLKIT_BRANCHES = {"main": "t6", "feature/streaming": "f3"}
# What every build of the toolkit produces (t4 and f3); the sample's trees pin these.
TOOLKIT_MAIN = "5fdbe1f6adee08d2b1a9875afb592cd65f90670c"
TOOLKIT_FEATURE = "2020b685436fd176fc0372ba2c740ec0ce286b8e"


def toolkit_snapshots() -> list[tuple[str, str | None, str, str, dict[str, str]]]:
    """(name, parent name, date, message, files) of each toolkit commit, oldest first."""
    snapshots = []
    parent = None
    for number, message in enumerate(TOOLKIT_MAIN_LINE, start=1):
        name = f"t{number}"
        files = {"toolkit/records.py": f'"""Records, revision {number}."""\n', "README.md": "# toolkit\n"}
        snapshots.append((name, parent, f"2024-12-{number:02d}T10:00:00Z", message, files))
        parent = name
    parent = f"t{TOOLKIT_FORK}"
    for number, message in enumerate(TOOLKIT_FEATURE_LINE, start=1):
        name = f"f{number}"
        files = {
            "toolkit/records.py": f'"""Records, revision {TOOLKIT_FORK}."""\n',
            "README.md": "# toolkit\n",
            "toolkit/streaming.py": f'"""Streaming, step {number}."""\n',
        }
        snapshots.append((name, parent, f"2024-12-{10 + number:02d}T10:00:00Z", message, files))
        parent = name
    return snapshots


def toolkit_path(sample_path: Path) -> Path:
    """The toolkit lives beside the sample, where the sample's relative .gitmodules URL points."""
    return Path(sample_path).with_name("toolkit.git")
